"""The package installs what a ROS 2 workspace expects, and the core keeps its layering."""

import ast
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

import robo_dynamics
from conftest import REPO

PACKAGE_DIR = REPO / "robo_dynamics"


def test_package_xml_is_format_3_ament_python():
    root = ET.parse(REPO / "package.xml").getroot()
    assert root.get("format") == "3"
    assert root.findtext("name") == "robo_dynamics"
    assert root.find("export/build_type").text == "ament_python"
    depends = {e.text for e in root if e.tag.endswith("depend")}
    assert {"python3-numpy", "urdfdom_py", "pinocchio", "python3-pytest"} <= depends


def test_wheel_installs_the_data_files(tmp_path):
    source = tmp_path / "src"   # build from a copy: setuptools writes build/ into the tree
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(tmp_path), str(source)], check=True)
    (wheel,) = tmp_path.glob("robo_dynamics-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    data = "robo_dynamics-0.1.0.data/data/share/"
    for expected in ("ament_index/resource_index/packages/robo_dynamics",
                     "robo_dynamics/package.xml", "robo_dynamics/urdf/rd_ur5e.urdf",
                     "robo_dynamics/urdf/planar_2link.urdf.xacro"):
        assert data + expected in names, expected
    assert "robo_dynamics/algorithms/rnea.py" in names
    assert not any(name.startswith("test/") for name in names)


def imported_modules(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            yield node.module.split(".")[0]


def test_the_core_imports_neither_rclpy_nor_pinocchio():
    for layer in ("spatial", "model", "algorithms", "control", "simulation"):
        for path in (PACKAGE_DIR / layer).rglob("*.py"):
            modules = set(imported_modules(path))
            assert not modules & {"rclpy", "pinocchio"}, path


def test_only_the_ros_layer_imports_rclpy():
    for path in PACKAGE_DIR.rglob("*.py"):
        if "rclpy" in set(imported_modules(path)):
            assert path.relative_to(PACKAGE_DIR).parts[0] == "ros", path


def test_only_the_pinocchio_backend_imports_pinocchio():
    importers = {path.relative_to(PACKAGE_DIR).as_posix()
                 for path in PACKAGE_DIR.rglob("*.py") if "pinocchio" in imported_modules(path)}
    assert importers == {"backends/pinocchio_backend.py"}


def test_compare_prints_both_backends_and_their_difference(capsys):
    from robo_dynamics import compare
    compare.main([])
    out = capsys.readouterr().out
    assert "robot 'rd_ur5e'" in out and out.count("pose '") == 3
    lines = [line for line in out.splitlines() if "pinocchio|" in line]
    assert len(lines) == 6
    for line in lines:  # at the singular zero pose Λ is regularised: κ_max · ε ≈ 1e-8
        bound = 1e-7 if "near singular" in line else 1e-9
        assert float(line.split("1): ")[1].split(",")[0]) < bound, line


def test_public_api():
    assert set(robo_dynamics.BACKENDS) == {"rnea", "pinocchio"}
    assert callable(robo_dynamics.load_robot) and callable(robo_dynamics.make_solver)
    assert pathlib.Path(robo_dynamics.__file__).parent == PACKAGE_DIR


def test_no_module_reaches_into_another_objects_private_members():
    """`x._name` only on self or cls: the layers talk through public interfaces (the hot
    path through the solvers' documented unchecked fast path)."""
    for path in PACKAGE_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                owner = node.value
                assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                    f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}: {ast.unparse(node)}")

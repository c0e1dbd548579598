"""The package installs what a ROS 2 workspace expects, and the core keeps its layering."""

import ast
import pathlib
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

import numpy as np
import pytest
import yaml

import robo_dynamics
from conftest import REPO, needs_example_robots

PACKAGE_DIR = REPO / "robo_dynamics"


INTERFACES = REPO / "interfaces" / "robo_dynamics_interfaces"

# Python module → rosdep key (ROS packages are their own key). A module missing here fails
# the manifest test below: add its key to this table and to package.xml.
ROSDEP_KEYS = {"numpy": "python3-numpy", "urdf_parser_py": "urdfdom_py", "xacro": "xacro",
               "pinocchio": "pinocchio", "matplotlib": "python3-matplotlib",
               "pytest": "python3-pytest", "hypothesis": "python3-hypothesis",
               "yaml": "python3-yaml", "mujoco": "python3-mujoco-pip",
               # pip's mcap-ros2-support requires mcap; pip's cvxpy requires clarabel (no
               # rosdep key names either of the two)
               "mcap": "mcap-ros2-support", "mcap_ros2": "mcap-ros2-support",
               "scipy": "python3-scipy", "clarabel": "python3-cvxpy-pip"}
ROSDISTRO = REPO / "test" / "data" / "rosdistro.yaml"   # scripts/rosdistro_snapshot.py
ROS_PACKAGES = {"rclpy", "rcl_interfaces", "std_msgs", "sensor_msgs", "geometry_msgs",
                "trajectory_msgs", "visualization_msgs", "diagnostic_msgs", "builtin_interfaces",
                "rosgraph_msgs", "ament_index_python", "launch", "launch_ros",
                "robo_dynamics_interfaces", "std_srvs", "control_msgs", "lifecycle_msgs"}
# the tests' own modules (test/support and the test files some tests reuse), and ours
TEST_HELPERS = {path.stem for path in (REPO / "test").rglob("*.py")} | {"robo_dynamics"}


def manifest(path):
    """{tag: {keys}} of a package.xml (depend counts as build, exec and test)."""
    root = ET.parse(path).getroot()
    out = {}
    for element in root:
        if element.tag.endswith("depend"):
            tags = (("build_depend", "exec_depend", "test_depend") if element.tag == "depend"
                    else (element.tag,))
            for tag in tags:
                out.setdefault(tag, set()).add(element.text.strip())
    return root, out


def third_party_imports(paths):
    """{top-level module: first file importing it}, standard library and our own left out."""
    found = {}
    for path in paths:
        for module in imported_modules(path):
            if module not in sys.stdlib_module_names and module not in TEST_HELPERS:
                found.setdefault(module, path.relative_to(REPO))
    return found


def rosdep_key(module, where):
    if module in ROS_PACKAGES:
        return module
    assert module in ROSDEP_KEYS, (f"{where} imports {module!r}: give it a rosdep key in "
                                   "ROSDEP_KEYS and package.xml")
    return ROSDEP_KEYS[module]


def test_package_xml_declares_every_dependency():
    root, depends = manifest(REPO / "package.xml")
    assert root.get("format") == "3"
    assert root.findtext("name") == "robo_dynamics"
    assert root.find("export/build_type").text == "ament_python"
    run = third_party_imports([*PACKAGE_DIR.rglob("*.py"), *(REPO / "launch").glob("*.py")])
    for module, where in run.items():
        assert rosdep_key(module, where) in depends["exec_depend"], (module, where)
    launch_text = "\n".join(p.read_text() for p in (REPO / "launch").glob("*.py"))
    started = set(re.findall(r'package="([^"]+)"', launch_text)) - {"robo_dynamics"}
    assert started == {"robot_state_publisher", "rviz2"}
    assert started <= depends["exec_depend"]
    for module, where in third_party_imports((REPO / "test").rglob("*.py")).items():
        key = rosdep_key(module, where)
        assert key in depends["test_depend"] | depends["exec_depend"], (module, where)


def unresolved(path, snapshot, distribution):
    """The dependency keys of a package.xml that rosdep would not resolve on `distribution`:
    neither a rosdep key with an Ubuntu rule nor a package the distribution releases."""
    _, depends = manifest(path)
    keys = set().union(*depends.values()) - {"robo_dynamics_interfaces"}     # ours
    rules, released = snapshot["rosdep"], snapshot["packages"][distribution]
    return sorted(key for key in keys
                  if not (rules.get(key, {}).get("ubuntu") or key in released))


@pytest.mark.parametrize("distribution", ["kilted", "jazzy"])
def test_every_dependency_key_resolves_against_rosdistro(distribution):
    """`rosdep install --from-paths` resolves each key of both package.xml files: checked
    against ros/rosdistro's rosdep YAML and distribution.yaml, as taken on the snapshot's
    date (only the entries needed are kept). An unknown key fails."""
    snapshot = yaml.safe_load(ROSDISTRO.read_text())
    assert snapshot["rosdistro_commit"] and snapshot["taken"]
    for path in (REPO / "package.xml", INTERFACES / "package.xml"):
        assert unresolved(path, snapshot, distribution) == [], path
    # the keys the issue found unknown stay unknown to the check
    for key in ("python3-mcap-pip", "python3-mujoco", "python3-clarabel-pip",
                "example-robot-data"):
        assert not (snapshot["rosdep"].get(key) or key in snapshot["packages"][distribution])


def test_interfaces_package_xml_declares_what_the_messages_use():
    root, depends = manifest(INTERFACES / "package.xml")
    assert root.findtext("name") == "robo_dynamics_interfaces"
    used = set()
    for path in [*INTERFACES.glob("msg/*.msg"), *INTERFACES.glob("srv/*.srv")]:
        used |= set(re.findall(r"^\s*([a-z_]+)/[A-Z]\w*", path.read_text(), re.MULTILINE))
    assert used and used <= depends["build_depend"] & depends["exec_depend"]
    cmake = (INTERFACES / "CMakeLists.txt").read_text()
    listed = set(re.search(r"DEPENDENCIES ([\w ]+)", cmake).group(1).split())
    assert used <= listed
    assert root.findtext("member_of_group") == "rosidl_interface_packages"


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
                     "robo_dynamics/urdf/planar_2link.urdf.xacro",
                     "robo_dynamics/examples/rd_ur5e_trajectory.yaml"):
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
    for layer in ("spatial", "model", "algorithms", "closed_chain", "simulation",
                  "control", "identification", "io", "cli"):
        for path in (PACKAGE_DIR / layer).rglob("*.py"):
            modules = set(imported_modules(path))
            assert not modules & {"rclpy", "pinocchio"}, path


def test_only_the_ros_layer_and_the_demo_import_rclpy():
    for path in PACKAGE_DIR.rglob("*.py"):
        if "rclpy" in set(imported_modules(path)):
            assert path.relative_to(PACKAGE_DIR).parts[0] in ("ros", "demo"), path


def importers_of(module):
    return {path.relative_to(PACKAGE_DIR).as_posix()
            for path in PACKAGE_DIR.rglob("*.py") if module in imported_modules(path)}


def test_only_the_pinocchio_backends_import_pinocchio():
    assert importers_of("pinocchio") == {"backends/pinocchio_backend.py",
                                         "backends/pinocchio_closed_chain.py"}


def test_only_the_mujoco_plants_import_mujoco():
    assert importers_of("mujoco") == {"simulation/mujoco_plant.py",
                                      "simulation/mujoco_closed_chain.py"}


def test_compare_prints_both_backends_and_their_difference(capsys):
    from robo_dynamics.cli import compare
    compare.main([])
    out = capsys.readouterr().out
    assert "robot 'rd_ur5e'" in out and out.count("pose '") == 3
    lines = [line for line in out.splitlines() if "pinocchio|" in line]
    assert len(lines) == 6
    for line in lines:  # at the singular zero pose Λ is regularised (rounding: 0)
        bound = 1e-7 if "near singular" in line else 1e-9
        assert float(line.split("1): ")[1].split(",")[0]) < bound, line


def test_public_api_as_documented():
    """What the package docstring shows: load_robot, make_solver with the default backend
    (Pinocchio), inverse_dynamics — equal to pinocchio.rnea called on the same URDF."""
    import pinocchio as pin
    assert set(robo_dynamics.__all__) <= set(dir(robo_dynamics))
    assert set(robo_dynamics.BACKENDS) == {"rnea", "pinocchio"}
    assert pathlib.Path(robo_dynamics.__file__).parent == PACKAGE_DIR
    urdf = REPO / "urdf" / "rd_ur5e.urdf"
    robot = robo_dynamics.load_robot(str(urdf))
    solver = robo_dynamics.make_solver(robot)
    assert solver.name == robo_dynamics.DEFAULT_BACKEND == "pinocchio"
    model = pin.buildModelFromUrdf(str(urdf))          # six revolute joints, same order
    assert list(model.names[1:]) == list(robot.joint_names)
    q, qd, qdd = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4]), np.full(6, 0.2), np.full(6, -0.5)
    expected = pin.rnea(model, model.createData(), q, qd, qdd)
    np.testing.assert_allclose(solver.inverse_dynamics(q, qd, qdd), expected, rtol=0,
                               atol=1e-12 * np.abs(expected).max())


# rclpy's, not ours: a node's time source has no public accessor, and the joint-state thread
# must drive the node's clock from its own /clock subscription (joint_state_thread.py)
RCLPY_PRIVATE = {("ros/dynamics_node/joint_state_thread.py", "_time_source")}


def test_no_module_reaches_into_another_objects_private_members():
    """`x._name` only on self or cls: the layers talk through public interfaces (the hot
    path through the solvers' documented unchecked fast path)."""
    for path in PACKAGE_DIR.rglob("*.py"):
        where = str(path.relative_to(PACKAGE_DIR))
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")
                    and (where, node.attr) not in RCLPY_PRIVATE):
                owner = node.value
                assert isinstance(owner, ast.Name) and owner.id in ("self", "cls"), (
                    f"{path.relative_to(PACKAGE_DIR)}:{node.lineno}: {ast.unparse(node)}")


def test_make_venv_installs_the_commands_and_the_package():
    """`make venv` installs robo_dynamics into the venv: its commands are on the venv's PATH
    and it imports from any directory (here: /)."""
    bin_dir = pathlib.Path(sys.prefix) / "bin"
    for command in ("dynamics_node", "sim_arm", "dynamics_demo", "dynamics_compare",
                    "dynamics_check", "dynamics_identify"):
        assert (bin_dir / command).is_file(), command
    out = subprocess.run([sys.executable, "-c", "import robo_dynamics as r; print(r.__file__)"],
                         cwd="/", capture_output=True, text=True, check=True).stdout.strip()
    assert pathlib.Path(out) == PACKAGE_DIR / "__init__.py"   # editable: the checkout itself
    missing = subprocess.run([sys.executable, "-c", "import benchmarks"], cwd="/",
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "No module named 'benchmarks'" in missing.stderr


@needs_example_robots
def test_example_robot_data_is_found_through_its_package(tmp_path, monkeypatch):
    """From the pip distribution here; from the ament index where ROS installed it
    (ros-$ROS_DISTRO-example-robot-data), which then takes precedence."""
    from robo_dynamics.paths import example_robots
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    assert (example_robots() / "panda_description" / "urdf" / "panda.urdf").is_file()
    prefix = tmp_path / "opt" / "ros" / "kilted"
    index = prefix / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "example-robot-data").write_text("")
    robots = prefix / "share" / "example-robot-data" / "robots"
    robots.mkdir(parents=True)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    assert example_robots() == robots


# the rooms of the package, from the ground floor up (docs/layout.md): each imports only
# those before it
ROOMS = ("(top)", "spatial", "model", "algorithms", "closed_chain", "backends", "simulation",
         "control", "io", "identification", "rviz", "ros", "demo", "cli")


def package_imports(path):
    """The robo_dynamics modules `path` imports (dotted, absolute)."""
    package = ["robo_dynamics", *path.relative_to(PACKAGE_DIR).parent.parts]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - (node.level - 1)]
            yield ".".join(base + ([node.module] if node.module else []))
        elif isinstance(node, ast.ImportFrom) and node.module.split(".")[0] == "robo_dynamics":
            yield node.module


def room_of(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in ROOMS) else "(top)"


# a module's old name kept for a release, forwarding to where it moved (with a warning)
DEPRECATED_ALIASES = {"control/payload_identification.py"}


def test_each_room_imports_only_the_rooms_below_it():
    """docs/layout.md's order: no arrow up, no circle between rooms; every file in a room
    the layout names (the package face, __init__.py, and the deprecated aliases excepted)."""
    for path in PACKAGE_DIR.rglob("*.py"):
        if path == PACKAGE_DIR / "__init__.py" or (
                path.relative_to(PACKAGE_DIR).as_posix() in DEPRECATED_ALIASES):
            continue
        own = room_of(".".join(["robo_dynamics",
                                *path.relative_to(PACKAGE_DIR).with_suffix("").parts]))
        assert own in ROOMS, path
        for module in package_imports(path):
            assert ROOMS.index(room_of(module)) <= ROOMS.index(own), (path, module)


def test_no_module_over_400_lines_and_no_room_over_a_fifth_of_the_package():
    sizes = {path: len(path.read_text().splitlines()) for path in PACKAGE_DIR.rglob("*.py")}
    assert max(sizes.values()) <= 410, max(sizes, key=sizes.get)
    assert sizes[PACKAGE_DIR / "ros" / "dynamics_node" / "node.py"] <= 350   # the wiring
    total, rooms = sum(sizes.values()), {}
    for path, lines in sizes.items():
        parts = path.relative_to(PACKAGE_DIR).parts
        rooms[parts[0] if len(parts) > 1 else "(top)"] = rooms.get(parts[0], 0) + lines
    assert max(rooms.values()) <= 0.22 * total, {k: round(v / total, 2)
                                                 for k, v in rooms.items()}


def test_every_module_the_concept_table_and_the_layout_name_exists():
    """DEVELOPERS.md's "Where each concept lives": every path in it; docs/layout.md: every
    folder its tree draws."""
    text = (REPO / "DEVELOPERS.md").read_text()
    table = text[text.index("## Where each concept lives"):]
    rows = [line for line in table[:table.index("\n## ", 1)].splitlines()
            if line.startswith("| ")]
    named = [cell for row in rows for cell in re.findall(r"`([^`]+)`", row)
             if cell.endswith((".py", "/"))]
    assert len(named) > 60
    for name in named:
        path = REPO / name if name.startswith("test/") else PACKAGE_DIR / name
        assert path.exists(), name
    layout = (REPO / "docs" / "layout.md").read_text()
    tree = layout[layout.index("robo_dynamics/\n"):layout.index("interfaces/")]
    stack = []
    for line in tree.splitlines()[1:]:
        m = re.match(r"( +)([a-z_]+/) ", line)
        if m:
            depth = len(m.group(1)) // 2 - 1
            stack[depth:] = [m.group(2)]
            assert (PACKAGE_DIR / "".join(stack)).is_dir(), "".join(stack)
    assert {p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and p.name != "__pycache__"} \
        <= {line.split("/")[0].strip() for line in tree.splitlines()}


def test_the_rclpy_free_tiers_import_no_ros():
    """test/unit and test/arms run without rclpy (make unit: the quick loop): no test there
    imports rclpy, the ROS harness or the ROS layer."""
    for tier in ("unit", "arms"):
        for path in (REPO / "test" / tier).glob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                for name in names:
                    assert name.split(".")[0] not in ("rclpy", "ros_harness", "ros_peer"), path
                    assert not name.startswith("robo_dynamics.ros"), (path, name)


def test_a_test_imports_other_tests_only_from_its_own_tier():
    """pytest puts a test file's own folder on sys.path, not its neighbours': what tests of
    several tiers share lives in test/support (a cross-tier import would work or fail by
    the order the files were collected in)."""
    for path in (REPO / "test").glob("*/test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("test_"):
                assert (path.parent / f"{node.module}.py").is_file(), (path, node.module)


def test_a_moved_module_still_imports_under_its_old_name_with_a_warning():
    """The docs' import of payload identification before the move (robo_dynamics.control.
    payload_identification) still gives the same functions, and says where they went."""
    import importlib
    import warnings
    from robo_dynamics.identification import payload_identification as moved
    sys.modules.pop("robo_dynamics.control.payload_identification", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("robo_dynamics.control.payload_identification")
    assert any(issubclass(w.category, DeprecationWarning) and "identification" in str(w.message)
               for w in caught)
    assert old.identify_payload is moved.identify_payload
    assert old.static_poses is moved.static_poses


def test_no_function_over_about_fifty_lines():
    """A function longer than that is read as steps: it becomes a sequence of named ones."""
    for path in PACKAGE_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno < 55, (path, node.name)

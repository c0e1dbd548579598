"""Docs that run: every fenced block of README.md and docs/ is run or checked as its marker
says (doc_blocks.py), the figures sections come from the command that measures them, and
no paragraph is longer than a reader can hold (six lines)."""

import ast
import importlib
import os
import re
import shlex
import subprocess
import sys

import numpy as np
import pytest
import yaml

from conftest import REPO, flat
from doc_blocks import KINDS, PAGES, blocks, prose_blocks
import params_check

BLOCKS = blocks()
VENV_BIN = os.path.join(sys.prefix, "bin")


def of_kind(kind):
    return [b for b in BLOCKS if b.kind == kind]


def test_every_block_says_how_it_is_tested():
    """A marker of a known kind before each block outside a figures section; a `tested by`
    names a test that exists and reads this page."""
    for b in BLOCKS:
        if b.figures is not None:
            continue
        assert b.kind in KINDS, f"{b.name}: no '<!-- block: KIND -->' line before it " \
                                f"(KIND one of {KINDS})"
        if b.kind == "tested by":
            path, test = b.marker[len("tested by "):].split("::")
            source = (REPO / path).read_text()
            assert f"def {test}(" in source, b.marker
            assert b.page in source, f"{path} does not read {b.page}"
    assert len(BLOCKS) >= 15


@pytest.mark.parametrize("block", of_kind("python"), ids=lambda b: b.name)
def test_python_block_runs(block):
    result = subprocess.run([sys.executable, "-c", block.text], cwd=REPO, text=True,
                            capture_output=True, timeout=120)
    assert result.returncode == 0, f"{block.name}:\n{result.stderr[-3000:]}"


def given(name, folder):
    """The files a shell block's marker says are given, made here: a bag of rd_ur5e moving
    (positions, velocities and the efforts Pinocchio gives for them: an independent writer,
    bags.py), as rosbag2 records it (a directory) or a single .mcap."""
    import robo_dynamics as rd
    from bags import as_dict, write_bag
    robot = rd.load_robot(str(REPO / "urdf" / "rd_ur5e.urdf"))
    solver = rd.make_solver(robot, "pinocchio")
    t = np.arange(0.0, 2.0, 0.002)
    w = 2.0 * np.pi * 0.5
    q = np.outer(np.sin(w * t), np.full(robot.dof, 0.3)) + np.array(
        [0.0, -1.2, 1.2, -1.2, -1.57, 0.0])
    qd = np.outer(w * np.cos(w * t), np.full(robot.dof, 0.3))
    qdd = np.outer(-w * w * np.sin(w * t), np.full(robot.dof, 0.3))
    tau = solver.inverse_dynamics_batch(q, qd, qdd)
    stamps = 1_700_000_000 * 10 ** 9 + (t * 1e9).astype(np.int64)
    messages = [(int(s), as_dict(int(s), robot.joint_names, q[k], qd[k], tau[k]))
                for k, s in enumerate(stamps)]
    path = folder / name.rstrip("/")
    if name.endswith("/"):
        path.mkdir()
        path = path / f"{path.name}_0.mcap"
    write_bag(path, messages)


@pytest.mark.parametrize("block", of_kind("shell"), ids=lambda b: b.name)
def test_shell_block_runs(block, tmp_path):
    """In a scratch folder with the repository's urdf/, config/ and examples/, the venv's
    commands first on PATH: every command exits 0."""
    for folder in ("urdf", "config", "examples"):
        (tmp_path / folder).symlink_to(REPO / folder)
    for name in re.findall(r"given (\S+?)[:,)]", block.marker):
        given(name, tmp_path)
    env = dict(os.environ, PATH=VENV_BIN + os.pathsep + os.environ["PATH"], MPLBACKEND="Agg")
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", block.text], cwd=tmp_path,
                            env=env, text=True, capture_output=True, timeout=180)
    assert result.returncode == 0, f"{block.name}:\n{result.stdout[-2000:]}\n" \
                                   f"{result.stderr[-2000:]}"


@pytest.mark.parametrize("block", of_kind("parameters"), ids=lambda b: b.name)
def test_parameter_block_is_what_the_node_takes(block):
    """Under the node's name (any namespace: /**/), every key a parameter of dynamics_node,
    each value valid (the node's own checks), a linkage's loops closing on its URDF."""
    content = yaml.safe_load(block.text)
    (key,) = content
    assert key in ("/**/dynamics_node", "dynamics_node"), key
    arm = re.search(r"\(urdf/(\S+), (\d+) joints\)", block.marker)
    urdf, dof = (arm[1], int(arm[2])) if arm else ("rd_ur5e.urdf", 6)
    params_check.check_section(content[key]["ros__parameters"], urdf, dof)


def launch_arguments(name):
    """The argument names a launch file of launch/ declares (DeclareLaunchArgument's first
    argument, or the keys of its ARGUMENTS mapping)."""
    tree = ast.parse((REPO / "launch" / name).read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "ARGUMENTS":
            names |= {ast.literal_eval(k) for k in node.value.keys}
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == \
                "DeclareLaunchArgument" and isinstance(node.args[0], ast.Constant):
            names.add(node.args[0].value)
    assert names, f"launch/{name} declares no argument"
    return names


def commands(text):
    """The block's commands: continuation lines joined, comments and `&` dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return [shlex.split(line, comments=True) for line in joined.splitlines()
            if shlex.split(line, comments=True)]


def console_scripts():
    text = (REPO / "setup.py").read_text()
    return set(re.findall(r'"(\w+) = robo_dynamics\.', text))


def test_ros_blocks_name_what_the_package_has(ros):
    """Every `ros2 launch` names a launch file and arguments it declares; `ros2 run` a
    console script, its params files shipped and its -p names declared; `ros2 topic` and
    `ros2 service` a name the running node has (an in-process dynamics_node on rd_ur5e),
    with its type and, for a message given, fields of that type; `ros2 lifecycle set` a
    transition."""
    from robo_dynamics.ros.dynamics_node.node import DynamicsNode
    from robo_dynamics.ros.parameter_tables import DYNAMICS_NODE, SIM_ARM
    from rclpy.parameter import Parameter
    node = DynamicsNode(parameter_overrides=[Parameter(
        "robot_description_file", value=str(REPO / "urdf" / "rd_ur5e.urdf"))])
    try:       # what it and its joint-state helper create (not the graph: other processes
        topics, services = {}, {}           # of the domain may run a /dynamics_node too)
        for owner in (node, node.joint_states.node):
            for entity in (*owner.publishers, *owner.subscriptions):
                topics.setdefault(owner.resolve_topic_name(entity.topic_name), []).append(
                    type_name(entity.msg_type))
            for service in owner.services:
                services.setdefault(owner.resolve_service_name(service.srv_name), []).append(
                    type_name(service.srv_type))
    finally:
        node.destroy_node()
    checked = 0
    for b in of_kind("ros"):
        for words in commands(b.text):
            where = f"{b.name}: {' '.join(words)}"
            if words[:2] == ["ros2", "launch"]:
                assert words[2] == "robo_dynamics", where
                declared = launch_arguments(words[3])
                for arg in words[4:]:
                    if ":=" in arg:
                        assert arg.split(":=")[0] in declared, where
            elif words[:2] == ["ros2", "run"]:
                assert words[2] == "robo_dynamics" and words[3] in console_scripts(), where
                table = {"dynamics_node": DYNAMICS_NODE, "sim_arm": SIM_ARM}[words[3]]
                for flag, value in zip(words, words[1:]):
                    if flag == "-p":
                        assert value.split(":=")[0] in table, where
                    if flag == "--params-file":
                        assert (REPO / "config" / os.path.basename(value)).is_file(), where
            elif words[:2] == ["ros2", "topic"]:
                name = words[-1] if words[2] == "echo" else next(
                    w for w in words[3:] if w.startswith("/"))
                assert name in topics, where
                if words[2] == "pub":
                    kind = full_name(words[words.index(name) + 1], "msg")
                    assert kind in topics[name], where
                    message = yaml.safe_load(words[words.index(name) + 2])
                    check_fields(interface(kind)(), message, where)
            elif words[:3] == ["ros2", "service", "call"]:
                name, kind = words[3], full_name(words[4], "srv")
                assert name in services and kind in services[name], where
                check_fields(interface(kind).Request(), yaml.safe_load(words[5]), where)
            elif words[:3] == ["ros2", "lifecycle", "set"]:
                assert words[4] in ("configure", "activate", "deactivate", "cleanup",
                                    "shutdown"), where
            else:
                continue
            checked += 1
    assert checked >= 15, checked


def interface(kind):
    """The message or service class of 'pkg/msg/Type' (or 'pkg/srv/Type')."""
    package, folder, name = kind.split("/")
    return getattr(importlib.import_module(f"{package}.{folder}"), name)


def full_name(kind, folder):
    """pkg/Type as `ros2 topic pub` also takes it → pkg/msg/Type (or pkg/srv/Type)."""
    parts = kind.split("/")
    return kind if len(parts) == 3 else f"{parts[0]}/{folder}/{parts[1]}"


def type_name(kind):
    """'pkg/msg/Type' (or srv) of a message or service class."""
    package, folder = kind.__module__.split(".")[:2]
    return f"{package}/{folder}/{kind.__name__}"


def check_fields(message, values, where):
    """Every key of `values` (a YAML mapping, as `ros2 topic pub` takes it) a field of
    `message`, recursively."""
    for key, value in (values or {}).items():
        assert hasattr(message, key), f"{where}: no field '{key}' in {type(message).__name__}"
        if isinstance(value, dict):
            check_fields(getattr(message, key), value, where)


def test_make_blocks_name_the_makefiles_targets_and_ci_runs_make_test():
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    for b in of_kind("make"):
        for words in commands(b.text):
            assert words[0] == "make" and words[1] in targets, f"{b.name}: {words}"
    assert "make test" in (REPO / ".ci" / "run").read_text()


def test_figures_are_written_by_the_command_that_measures_them():
    """Each figures section names the make target that wrote it, with its date and machine,
    and that target runs scripts/figures.py on this page and section."""
    makefile = (REPO / "Makefile").read_text()
    sections = 0
    for path in PAGES:
        text = path.read_text()
        for name, body in re.findall(r"<!-- figures: ([\w-]+) -->\n(.*?)<!-- end figures: \1 -->",
                                     text, re.S):
            sections += 1
            page = str(path.relative_to(REPO))
            assert re.match(rf"From `make {name}` on \d{{4}}-\d\d-\d\d \(.+\):\n\n", body), \
                f"{page} ({name}): {body[:200]!r}"
            recipe = makefile[makefile.index(f"\n{name}:"):]
            recipe = recipe[:recipe.index("\n\n")]
            assert f"scripts/figures.py {page} {name} --" in recipe, recipe
    assert sections >= 3


def test_no_paragraph_is_longer_than_six_lines():
    long = [f"{page}:{line} ({count} lines)" for page, line, count in prose_blocks()
            if count > 6]
    assert not long, "\n".join(long)


def test_the_table_of_what_the_shipped_file_changes_is_the_file():
    """docs/node.md's "What the shipped files change": one row per value config/rd_ur5e.yaml
    sets (its per-joint tolerances aside), the default the node declares and the file's
    value, each as YAML reads it."""
    from robo_dynamics.ros.parameter_tables import DYNAMICS_NODE, JOINT_CONSTRAINTS
    text = (REPO / "docs" / "node.md").read_text()
    part = text[text.index("### What the shipped files change"):]
    rows = [line.split(" | ") for line in part[:part.index("\n\n", part.index("| ---"))]
            .splitlines() if line.startswith("| `")]
    shown = {row[0].strip("| `"): (row[1], row[2]) for row in rows}
    values = flat(yaml.safe_load((REPO / "config" / "rd_ur5e.yaml").read_text())[
        "/**/dynamics_node"]["ros__parameters"])
    values = {k: v for k, v in values.items()
              if not (k.startswith("constraints.") and k.rsplit(".", 1)[1] in JOINT_CONSTRAINTS
                      and k.count(".") == 2)}
    assert set(shown) == set(values), set(shown) ^ set(values)
    for name, (default, value) in shown.items():
        declared = DYNAMICS_NODE[name].default
        if declared is None or declared == "":
            assert default == ("unset" if declared is None else '""'), name
        else:
            assert yaml.safe_load(default) == declared, name
        assert yaml.safe_load(value) == values[name], name


def test_sim_arms_table_is_its_parameters():
    """docs/python-api.md's sim_arm table: every parameter sim_arm declares besides the
    chain's and a linkage's, each with its declared default."""
    from robo_dynamics.ros.parameter_tables import CHAIN, CLOSED_LINKAGE, SIM_ARM
    text = (REPO / "docs" / "python-api.md").read_text()
    part = text[text.index("## `sim_arm`: the simulated arm's node"):]
    rows = [line.split(" | ") for line in part[:part.index("\n\n", part.index("| ---"))]
            .splitlines() if line.startswith("| `")]
    shown = {}
    for row in rows:
        names = re.findall(r"`(\w+)`", row[0])
        defaults = [d.strip() for d in row[1].split(",")]
        assert len(names) == len(defaults), row
        shown.update(zip(names, defaults))
    own = {k: v.default for k, v in SIM_ARM.items() if k not in CHAIN and k not in CLOSED_LINKAGE}
    assert set(shown) == set(own), set(shown) ^ set(own)
    for name, default in shown.items():
        assert (None if default == "unset" else yaml.safe_load(default)) == own[name], name

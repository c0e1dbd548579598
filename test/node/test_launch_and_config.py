"""Launch file, parameter files and rviz config, checked without the `launch` package (not
installable here); the real launch check runs where launch_ros is importable."""

import ast
import importlib.util
import math
import pathlib

import numpy as np
import pytest
import yaml

from robo_dynamics.ros import parameters
from robo_dynamics.ros.dynamics_node.node import DynamicsNode
from conftest import REPO, flat
import params_check
import realworld

LAUNCH = REPO / "launch" / "dynamics.launch.py"
CONFIGS = sorted(path for path in (REPO / "config").glob("*.yaml")   # the node's params files
                 if path.name != "moveit_controllers.yaml")
NODE_KEY = "/**/dynamics_node"   # a params file's key: dynamics_node in any namespace


def launch_nodes():
    """(package, executable, parameter-dict keys) of every Node(...) in the launch file (or
    LifecycleNode(...), or (LifecycleNode if … else Node)(...))."""
    tree = ast.parse(LAUNCH.read_text())
    found = []

    def node_class(func):
        if isinstance(func, ast.IfExp):
            return node_class(func.body) and node_class(func.orelse)
        return getattr(func, "id", None) in ("Node", "LifecycleNode")
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and node_class(call.func):
            kw = {k.arg: k.value for k in call.keywords}
            keys = set()
            for item in getattr(kw.get("parameters"), "elts", []):
                if isinstance(item, ast.Dict):        # (a None key: ** of another dict)
                    keys |= {k.value for k in item.keys if k is not None}
            found.append((kw["package"].value, kw["executable"].value, keys))
    return found


def test_launch_starts_the_three_nodes_with_declared_parameters():
    nodes = {executable: (package, keys) for package, executable, keys in launch_nodes()}
    assert set(nodes) == {"robot_state_publisher", "dynamics_node", "sim_arm", "rviz2"}
    package, keys = nodes["dynamics_node"]
    assert package == "robo_dynamics"
    assert keys and keys <= set(parameters.DYNAMICS_NODE)      # the node declares what it is given
    setup = (REPO / "setup.py").read_text()
    assert '"dynamics_node = robo_dynamics.ros.dynamics_node.node:main"' in setup
    source = LAUNCH.read_text()
    assert nodes["sim_arm"][1] <= set(parameters.SIM_ARM)
    for shipped in ('"rd_ur5e.urdf"', '"dynamics.yaml"', '"dynamics.rviz"'):
        assert shipped in source
        assert list(REPO.glob(f"*/{shipped[1:-1]}")), shipped


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_parameter_files_are_valid(path):
    section = yaml.safe_load(path.read_text())[NODE_KEY]["ros__parameters"]
    dof = {"rd_ur5e.yaml": 6, "planar_2link.yaml": 2, "rd_palletizer.yaml": 4,
           "rd_delta.yaml": 3, "mg400.yaml": 4, "robotiq_2f85_mimic.yaml": 1}.get(path.name, 6)
    theirs = {"mg400.yaml": realworld.MG400_URDF,             # their users' URDFs, not ours
              "robotiq_2f85_mimic.yaml": realworld.ROBOTIQ_2F85_URDF}
    urdf = (realworld.require(theirs[path.name]) if path.name in theirs
            else path.name.replace(".yaml", ".urdf"))
    params_check.check_section(section, urdf, dof)


@pytest.mark.parametrize("namespace", ["", "left", "cell/right"])
@pytest.mark.parametrize("urdf, config", [("rd_ur5e.urdf", "rd_ur5e.yaml"),
                                          ("planar_2link.urdf", "planar_2link.yaml"),
                                          ("rd_ur5e.urdf", "dynamics.yaml"),
                                          ("rd_palletizer.urdf", "rd_palletizer.yaml"),
                                          ("rd_delta.urdf", "rd_delta.yaml"),
                                          (realworld.MG400_URDF, "mg400.yaml"),
                                          (realworld.ROBOTIQ_2F85_URDF,
                                           "robotiq_2f85_mimic.yaml")],
                         ids=lambda value: getattr(value, "name", value))
def test_node_starts_from_each_parameter_file_in_any_namespace(urdf, config, namespace, ros):
    """Every value of each shipped params file reaches dynamics_node, whatever its
    namespace (a file keyed by the node's bare name applies in the root namespace only)."""
    urdf = REPO / "urdf" / urdf if isinstance(urdf, str) else realworld.require(urdf)
    node = DynamicsNode(namespace=namespace, cli_args=[
        "--ros-args", "--params-file", str(REPO / "config" / config),
        "-p", f"robot_description_file:={urdf}"])
    try:
        assert node.get_fully_qualified_name() == f"/{namespace}/dynamics_node".replace(
            "//", "/")
        values = flat(yaml.safe_load((REPO / "config" / config).read_text())[
            NODE_KEY]["ros__parameters"])
        for name, value in values.items():
            if name == "robot_description_file":     # overridden on the command line
                continue
            got = node.get_parameter(name).value
            assert (list(got) if isinstance(value, list) else got) == value, name
        assert node.model is not None
        assert math.isfinite(node.controller.settings.effort_bound.sum())
    finally:
        node.destroy_node()


@pytest.mark.parametrize("namespace, urdf, prefix", [("", "rd_ur5e.urdf", ""),
                                                     ("cell/left", "rd_palletizer.urdf", "left/")])
def test_rviz_config_shows_what_the_node_publishes_in_its_namespace(namespace, urdf, prefix,
                                                                   ros):
    """The config the launch file gives rviz2 (rviz/config.config_file) for an arm in a
    namespace: every display's topic is one the node in that namespace publishes or
    robot_state_publisher's description there, the fixed frame the URDF's root link, and
    the wrench arrows at the documented scale: the arm's weight (its links' masses) draws
    half its reach (the longest path of joint offsets)."""
    from rclpy.parameter import Parameter
    import xml.etree.ElementTree as ET
    from robo_dynamics.rviz.config import config_file
    text = (REPO / "urdf" / urdf).read_text()
    path = config_file(str(REPO / "config" / "dynamics.rviz"), text, namespace, prefix)
    manager = yaml.safe_load(pathlib.Path(path).read_text())["Visualization Manager"]
    pathlib.Path(path).unlink()
    assert manager["Global Options"]["Fixed Frame"] == prefix + "base_link"
    classes = {d["Class"] for d in manager["Displays"]}
    assert {"rviz_default_plugins/RobotModel", "rviz_default_plugins/TF",
            "rviz_default_plugins/MarkerArray", "rviz_default_plugins/Wrench",
            "rviz_default_plugins/Effort"} <= classes
    topics = {display[key]["Value"] for display in manager["Displays"]
              for key in ("Topic", "Description Topic") if key in display}
    node = DynamicsNode(parameter_overrides=[Parameter("robot_description_file",
                                                       value=str(REPO / "urdf" / "rd_ur5e.urdf"))],
                        cli_args=["--ros-args", "-r", f"__ns:=/{namespace}"])
    try:
        published = {node.resolve_topic_name(p.topic_name) for p in node.publishers}
    finally:
        node.destroy_node()
    prefix = f"/{namespace}" if namespace else ""
    assert topics - {f"{prefix}/robot_description"} <= published, topics - published
    assert f"{prefix}/robot_description" in topics and len(topics) == 4
    root = ET.fromstring(text)
    mass = sum(float(m.get("value")) for m in root.iter("mass"))
    (wrench,) = [d for d in manager["Displays"] if d["Class"] == "rviz_default_plugins/Wrench"]
    reach = {"rd_ur5e.urdf": 0.1625 + 0.425 + 0.3922 + 0.1333 + 0.0997 + 0.0996,
             # palletizer: turret 0.3, shoulder (0.15, 0, 0.35), upper arm 0.8, forearm 1.0,
             # tool flange 0.2 below the wrist
             "rd_palletizer.urdf": 0.3 + np.hypot(0.15, 0.35) + 0.8 + 1.0 + 0.2}[urdf]
    assert wrench["Force Arrow Scale"] == pytest.approx(0.5 * reach / (mass * 9.81), abs=1e-6)


@pytest.mark.skipif(importlib.util.find_spec("launch_ros") is None,
                    reason="launch_ros is not on PyPI: runs on a ROS 2 install or with "
                           "../shared/ros2-cli-kit installed (test_workspace.py launches it)")
def test_launch_description_loads():
    spec = importlib.util.spec_from_file_location("dynamics_launch", LAUNCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    names = {entity.name for entity in description.entities[:-1]}
    assert names == {"urdf", "xacro_args", "params_file", "namespace", "frame_prefix",
                     "use_sim_time", "sim",
                     "engine", "sim_rate", "backend", "use_rviz", "managed",
                     "activate"}
    assert module.arm_name("/x/planar_2link.urdf.xacro") == "planar_2link"


def test_launch_checks_that_what_it_starts_is_installed(tmp_path, monkeypatch):
    """Here (wheels) neither rviz2 nor robot_state_publisher is in the ament index: the
    launch file's check names both and how to install them; with them registered in an
    ament index of their own (a workspace), nothing is missing."""
    from robo_dynamics.ros.launch_check import missing_packages
    message = missing_packages(["robot_state_publisher", "rviz2"],
                               why={"rviz2": "use_rviz:=true"})
    assert message.startswith("nothing was started")
    assert "rviz2 is not installed (use_rviz:=true): sudo apt install ros-$ROS_DISTRO-rviz2" \
        in message
    assert "sudo apt install ros-$ROS_DISTRO-robot-state-publisher" in message
    index = tmp_path / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    for package in ("robot_state_publisher", "rviz2"):
        (index / package).write_text("")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    assert missing_packages(["robot_state_publisher", "rviz2"]) is None
    source = LAUNCH.read_text()     # the launch file starts its nodes only through the check
    assert "OpaqueFunction(function=start)" in source and "missing_packages(" in source
    assert "+ [OpaqueFunction(function=start)])" in source


def test_moveit_controller_entry_names_the_nodes_action_and_the_arms_joints():
    """MoveIt's simple controller manager calls <controller name>/<action_ns> with type
    FollowJointTrajectory; the node serves /dynamics_node/follow_joint_trajectory (what
    test_trajectory_action.py's client calls) for every joint of the chain."""
    import robo_dynamics as rd
    config = yaml.safe_load((REPO / "config" / "moveit_controllers.yaml").read_text())
    assert config["moveit_controller_manager"] == (
        "moveit_simple_controller_manager/MoveItSimpleControllerManager")
    manager = config["moveit_simple_controller_manager"]
    (name,) = manager["controller_names"]
    entry = manager[name]
    assert entry["type"] == "FollowJointTrajectory"
    assert f"/{name}/{entry['action_ns']}" == "/dynamics_node/follow_joint_trajectory"
    robot = rd.load_robot(REPO / "urdf" / "rd_ur5e.urdf")
    assert entry["joints"] == list(robot.joint_names)
    start = config["trajectory_execution"]["allowed_start_tolerance"]
    assert start <= parameters.DYNAMICS_NODE["start_tolerance"].default[0]

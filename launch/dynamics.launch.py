"""ros2 launch robo_dynamics dynamics.launch.py [urdf:=PATH] [xacro_args:='NAME:=VALUE ...']
    [params_file:=PATH] [namespace:=NS] [frame_prefix:=P] [use_sim_time:=true|false]
    [sim:=true|false]
    [engine:=mujoco|internal] [backend:=pinocchio|rnea] [use_rviz:=true|false]
    [managed:=true|false] [activate:=true|false]

Starts robot_state_publisher and dynamics_node on the same robot description (a .urdf or
.xacro file, expanded by xacro with xacro_args), in `namespace`; with sim:=true also sim_arm,
the simulated arm, its effort commands wired to the node's (in lockstep on simulated time
when use_sim_time:=true: sim_arm publishes /clock, one simulated arm per ROS domain); rviz2
with config/dynamics.rviz when use_rviz is true (its topics moved into `namespace`, the
fixed frame the arm's root link, arrows to the arm's scale: rviz/config.py). A closed
linkage's robot_state_publisher takes dynamics_node's ~/joint_states (every joint, the passive
ones where the loops put them), so rviz draws the whole linkage. params_file
defaults to the arm's own file when the package ships one (config/<urdf name>.yaml), else
config/dynamics.yaml. With
managed:=true dynamics_node is a lifecycle node: activate:=true (the default) has it configure
and activate itself (its parameter autostart: a change_state request sent from here the moment
the node appears can be lost in discovery and leave it unconfigured); activate:=false leaves
it unconfigured for a lifecycle manager.
Checks first that the URDF file exists and that the packages it would start are installed;
if not, it starts nothing and says why. Several arms: include this file once per namespace
(launch/two_arms.launch.py).
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch.substitutions import Command, FindExecutable, LaunchConfiguration
from launch_ros.actions import LifecycleNode, Node, PushRosNamespace
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robo_dynamics.ros.dynamics_node.closure_parameters import linkage_section
from robo_dynamics.ros.launch_check import missing_packages
from robo_dynamics.ros.parameter_tables import RANGES
from robo_dynamics.rviz.config import config_file, expanded

ARGUMENTS = {     # name → (default, description)
    "urdf": ("", "URDF or xacro file of the arm (default: the package's urdf/rd_ur5e.urdf)"),
    "xacro_args": ("", "xacro arguments for a .xacro file, 'name:=value name:=value'"),
    "params_file": ("", "dynamics_node parameters (default: the package's config/<urdf "
                        "name>.yaml if it ships one, else config/dynamics.yaml)"),
    "namespace": ("", "namespace of every node started (several arms: one each)"),
    "frame_prefix": ("", "prefix of the arm's TF frames (robot_state_publisher's and "
                         "dynamics_node's frame_prefix; several arms on one /tf: one each, "
                         "e.g. left/)"),
    "use_sim_time": ("false", "the nodes follow /clock (with sim:=true, sim_arm's, in "
                              "lockstep)"),
    "sim": ("false", "start sim_arm, the simulated arm, wired to dynamics_node"),
    "engine": ("mujoco", "sim_arm's engine: mujoco or internal"),
    "sim_rate": ("", "sim_arm's joint_states rate [Hz], the simulated arm's control rate "
                     "(default: sim_arm's publish_rate)"),
    "backend": ("pinocchio", "solver: pinocchio or rnea (the other cross-checks)"),
    "use_rviz": ("false", "start rviz2 with config/dynamics.rviz"),
    "managed": ("false", "dynamics_node as a managed (lifecycle) node: it commands the arm "
                         "only once activated"),
    "activate": ("true", "with managed:=true, configure and activate it now (false: leave "
                         "it unconfigured for a lifecycle manager or `ros2 lifecycle set`)"),
}
TRUE = ("true", "1", "yes", "on")


def arm_name(urdf):
    """The arm's file name without .xacro and .urdf: rd_ur5e for /x/rd_ur5e.urdf."""
    name = os.path.basename(urdf)
    for suffix in (".xacro", ".urdf"):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    return name


def publish_rate(text):
    """The rate [Hz] `text` gives, or None unless it is one sim_arm's publish_rate takes."""
    try:
        rate = float(text)
    except ValueError:
        return None
    return rate if RANGES["publish_rate"](rate) else None


def start(context):
    """The nodes, once the URDF file is known to exist and every package they come from to
    be installed."""
    value = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = FindPackageShare("robo_dynamics").perform(context)
    urdf = os.path.abspath(os.path.expanduser(
        value["urdf"] or os.path.join(share, "urdf", "rd_ur5e.urdf")))
    if not os.path.isfile(urdf):
        raise RuntimeError(f"nothing was started: urdf:={value['urdf']}: no such file")
    params_file = value["params_file"] or next(
        path for path in (os.path.join(share, "config", arm_name(urdf) + ".yaml"),
                          os.path.join(share, "config", "dynamics.yaml"))
        if os.path.isfile(path))
    if not os.path.isfile(params_file):
        raise RuntimeError(f"nothing was started: params_file:={params_file}: no such file")
    sim_rate = {}                       # sim_arm's own publish_rate, unless given
    if value["sim_rate"]:
        rate = publish_rate(value["sim_rate"])
        if rate is None:
            raise RuntimeError(f"nothing was started: sim_rate:={value['sim_rate']}: a rate "
                               "in Hz, above 0 and at most 10000")
        sim_rate = {"publish_rate": rate}
    flags = {name: value[name].lower() in TRUE
             for name in ("use_sim_time", "sim", "use_rviz", "managed", "activate")}
    problem = missing_packages(["robot_state_publisher"] + ["rviz2"] * flags["use_rviz"],
                               why={"rviz2": "use_rviz:=true"})
    if problem:
        raise RuntimeError(problem)

    robot_description = ParameterValue(Command(
        [FindExecutable(name="xacro"), " ", urdf, " ", value["xacro_args"]]), value_type=str)
    sim_time = {"use_sim_time": flags["use_sim_time"]}
    linkage = linkage_section(params_file)      # a closed linkage's, if any
    nodes = [   # a linkage's passive joints from the node: a driver may report its motors only
        Node(package="robot_state_publisher", executable="robot_state_publisher",
             parameters=[{"robot_description": robot_description,
                          "frame_prefix": value["frame_prefix"], **sim_time}],
             remappings=[("joint_states", "dynamics_node/joint_states")] if linkage else [],
             output="screen"),
    ]
    dynamics = (LifecycleNode if flags["managed"] else Node)(
        package="robo_dynamics", executable="dynamics_node", name="dynamics_node",
        namespace="", parameters=[params_file, {
            "robot_description": robot_description, "backend": value["backend"],
            "managed": flags["managed"], "autostart": flags["activate"],
            "frame_prefix": value["frame_prefix"], **sim_time}],
        output="screen")
    nodes.append(dynamics)
    if flags["sim"]:
        nodes.append(Node(
            package="robo_dynamics", executable="sim_arm", name="sim_arm",
            parameters=[{"robot_description": robot_description, "engine": value["engine"],
                         "lockstep": flags["use_sim_time"],
                         **sim_rate, **linkage}],
            remappings=[("effort_commands", "dynamics_node/commands")],   # the node's ~/commands
            output="screen"))
    if flags["use_rviz"]:       # config/dynamics.rviz for this arm and namespace (rviz/config.py)
        rviz = config_file(os.path.join(share, "config", "dynamics.rviz"),
                           expanded(urdf, value["xacro_args"]), value["namespace"],
                           value["frame_prefix"])
        nodes.append(Node(package="rviz2", executable="rviz2", parameters=[sim_time],
                          arguments=["-d", rviz], output="screen"))
    return [GroupAction([PushRosNamespace(value["namespace"])] + nodes)]


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=description)
         for name, (default, description) in ARGUMENTS.items()]
        + [OpaqueFunction(function=start)])

"""ros2 launch robo_dynamics dynamics.launch.py [urdf:=PATH] [params_file:=PATH]
                                              [backend:=pinocchio|rnea] [use_rviz:=true|false]

Starts robot_state_publisher and dynamics_node on the same robot description (a .urdf or
.xacro file, expanded by xacro), and rviz2 with config/dynamics.rviz when use_rviz is true.
Checks first that the packages it would start are installed; if one is not, it starts
nothing and says what to install.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robo_dynamics.ros.launch_check import missing_packages


def generate_launch_description():
    share = FindPackageShare("robo_dynamics")
    arguments = [
        DeclareLaunchArgument("urdf", default_value=PathJoinSubstitution(
            [share, "urdf", "rd_ur5e.urdf"]), description="URDF or xacro file of the arm"),
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution(
            [share, "config", "dynamics.yaml"]), description="dynamics_node parameters"),
        DeclareLaunchArgument("backend", default_value="pinocchio",
                              description="solver: pinocchio or rnea (the other cross-checks)"),
        DeclareLaunchArgument("use_rviz", default_value="false", description="start rviz2"),
    ]
    robot_description = ParameterValue(
        Command([FindExecutable(name="xacro"), " ", LaunchConfiguration("urdf")]), value_type=str)

    robot_state_publisher = Node(
        package="robot_state_publisher",
        executable="robot_state_publisher",
        parameters=[{"robot_description": robot_description}],
        output="screen",
    )
    dynamics_node = Node(
        package="robo_dynamics",
        executable="dynamics_node",
        name="dynamics_node",
        parameters=[LaunchConfiguration("params_file"),
                    {"robot_description": robot_description,
                     "backend": LaunchConfiguration("backend")}],
        output="screen",
    )
    rviz = Node(
        package="rviz2",
        executable="rviz2",
        arguments=["-d", PathJoinSubstitution([share, "config", "dynamics.rviz"])],
        condition=IfCondition(LaunchConfiguration("use_rviz")),
        output="screen",
    )
    nodes = [robot_state_publisher, dynamics_node, rviz]

    def start(context):
        """The nodes, once every package they come from is known to be installed."""
        needed = ["robot_state_publisher"]
        if IfCondition(LaunchConfiguration("use_rviz")).evaluate(context):
            needed.append("rviz2")
        problem = missing_packages(needed, why={"rviz2": "use_rviz:=true"})
        if problem:
            raise RuntimeError(problem)
        return nodes

    return LaunchDescription(arguments + [OpaqueFunction(function=start)])

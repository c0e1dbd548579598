"""ros2 launch robo_dynamics two_arms.launch.py [sim:=true|false] [sim_rate:=HZ] [use_rviz:=true]

Two arms in one ROS graph, each in a namespace of its own, by including dynamics.launch.py
once per arm: `left` the default arm (rd_ur5e, config/rd_ur5e.yaml), `right` the 2-link
xacro arm with its own link lengths (config/planar_2link.yaml). Copy it for your cell:
one include per arm, with its namespace, urdf, xacro_args, params_file and frame_prefix
(the arms share /tf: each arm's frames carry its own prefix). With sim:=true
each arm gets a free-running sim_arm (a lockstep simulation publishes /clock: one per ROS
domain).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

ARMS = {     # namespace → launch arguments of dynamics.launch.py; TF frames prefixed by it
    "left": {"frame_prefix": "left/"},
    "right": {"urdf": PathJoinSubstitution([FindPackageShare("robo_dynamics"), "urdf",
                                            "planar_2link.urdf.xacro"]),
              "xacro_args": "l1:=0.8 l2:=0.4", "frame_prefix": "right/"},
}


def generate_launch_description():
    arm_launch = PathJoinSubstitution([FindPackageShare("robo_dynamics"), "launch",
                                       "dynamics.launch.py"])
    return LaunchDescription(
        [DeclareLaunchArgument("sim", default_value="false",
                               description="a sim_arm for each arm"),
         DeclareLaunchArgument("use_rviz", default_value="false",
                               description="rviz2 for each arm, in its namespace and frames"),
         DeclareLaunchArgument("sim_rate", default_value="",
                               description="each sim_arm's joint_states rate [Hz] (default: "
                                           "sim_arm's)")]
        + [GroupAction([IncludeLaunchDescription(arm_launch, launch_arguments={  # scoped:
            "namespace": namespace, "sim": LaunchConfiguration("sim"),
            "sim_rate": LaunchConfiguration("sim_rate"),
            "use_rviz": LaunchConfiguration("use_rviz"), **arguments}.items())])
           for namespace, arguments in ARMS.items()])        # each arm its own arguments

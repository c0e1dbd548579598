"""The options dynamics_check and dynamics_identify share: one spelling, default and help."""

from .paths import urdf_path


def add_chain_options(parser):
    """--urdf, --base, --tip: the robot description and the chain in it (load_robot's)."""
    parser.add_argument("--urdf", default=str(urdf_path()), help="URDF or xacro file")
    parser.add_argument("--base", default=None, help="base link (default: URDF root)")
    parser.add_argument("--tip", default=None, help="tip link (default: the only leaf)")


def add_bag_options(parser):
    """--topic, --accel-window: the joint states read from a bag and how q̈ is estimated
    (io/joint_state_bag.py)."""
    parser.add_argument("--topic", default="/joint_states", help="joint-state topic of a bag")
    parser.add_argument("--accel-window", type=float, default=0.02,
                        help="seconds over which a bag's velocities are differentiated")

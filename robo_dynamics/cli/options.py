"""The options dynamics_check and dynamics_identify share: one spelling, default and help;
and where the arm's description comes from (the tools never guess the arm)."""

import argparse

from ..io.bag_description import TOPIC, robot_description


class HelpFormatter(argparse.HelpFormatter):
    """--help shows every option's default: its value, appended, or, for an option unset by
    default, what its help says happens then."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default is None or action.default is argparse.SUPPRESS \
                or not action.option_strings or isinstance(action.default, bool):
            return text
        return f"{text} (default: {action.default})"


def add_chain_options(parser, trajectories=True):
    """--urdf, --base, --tip: the robot description and the chain in it (load_robot's);
    trajectories: whether the command also reads YAML trajectories (they need --urdf)."""
    needs = "a bag without one or a YAML trajectory" if trajectories else "a bag without one"
    parser.add_argument("--urdf", default=None,
                        help=f"URDF or xacro file of the arm (default: the {TOPIC} the bag "
                             f"recorded; {needs} needs --urdf)")
    parser.add_argument("--base", default=None, help="base link (default: URDF root)")
    parser.add_argument("--tip", default=None, help="tip link (default: the only leaf)")


def add_bag_options(parser):
    """--topic, --accel-window: the joint states read from a bag and how q̈ is estimated
    (io/joint_state_bag.py)."""
    parser.add_argument("--topic", default="/joint_states", help="joint-state topic of a bag")
    parser.add_argument("--accel-window", type=float, default=0.02,
                        help="seconds over which a bag's velocities are differentiated")


def description(args, bag=None):
    """(URDF path or text for load_robot, where it came from): --urdf, else the last
    /robot_description recorded in `bag` (a path, None: no bag); ValueError saying what to
    give when neither has one."""
    if args.urdf is not None:
        return args.urdf, args.urdf
    if bag is not None:
        text = robot_description(bag)
        if text is not None:
            return text, f"/robot_description of {bag}"
        raise ValueError(f"no --urdf, and {bag} recorded no {TOPIC}: give the arm's URDF "
                         f"with --urdf (or record {TOPIC} with the joint states)")
    raise ValueError("no --urdf: give the arm's URDF with --urdf (a trajectory file does not "
                     "say which arm it is for)")

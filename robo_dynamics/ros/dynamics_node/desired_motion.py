"""dynamics_node's desired motion: ~/desired_trajectory (trajectory_msgs/JointTrajectory)
and ~/desired_state (sensor_msgs/JointState: a set-point, positions [+ velocities]), by
joint name, and the Cartesian targets (cartesian_targets.py), handed to the controller core,
which admits or refuses them (an event either way, on ~/events)."""

from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from .. import conversions
from .cartesian_targets import CartesianTargets


class DesiredMotion:
    """The two desired-motion subscriptions (made by `create_subscription`, the node's) over
    `live` (live.py); parameter(name) reads a node parameter (the Cartesian targets')."""

    def __init__(self, live, create_subscription, parameter):
        self.live = live
        create_subscription(JointTrajectory, "~/desired_trajectory", self.trajectory, 10)
        create_subscription(JointState, "~/desired_state", self.set_point, 10)
        self.cartesian = CartesianTargets(live, create_subscription, parameter)

    def trajectory(self, msg):
        """A desired trajectory: converted to a spline outside the node's lock (milliseconds
        for hundreds of points, which a joint state must not wait for), admitted under it."""
        live = self.live
        if live.controller is None:
            return
        now, names = live.now(), list(live.model.joint_names)
        try:
            motion = conversions.trajectory_from_msg(msg, names, now)
        except ValueError as exc:
            motion, reason = None, f"desired trajectory rejected: {exc}"
        with live.lock:
            if motion is not None and list(live.model.joint_names) != names:
                motion, reason = None, ("desired trajectory rejected: the robot description "
                                        "changed while it was read")
            live.report(live.controller.desire(motion, now) if motion is not None
                        else live.controller.refuse(reason))

    def set_point(self, msg):
        live = self.live
        with live.lock:
            if live.controller is None:
                return
            try:
                motion = conversions.set_point_from_msg(msg, live.model.joint_names)
            except ValueError as exc:
                live.report(live.controller.refuse(f"desired state rejected: {exc}"))
                return
            live.report(live.controller.desire(motion, live.now()))

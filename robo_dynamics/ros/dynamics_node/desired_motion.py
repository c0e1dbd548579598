"""dynamics_node's desired motion: ~/desired_trajectory (trajectory_msgs/JointTrajectory)
and ~/desired_state (sensor_msgs/JointState: a set-point, positions [+ velocities]), by
joint name, and the Cartesian targets (cartesian_targets.py), handed to the controller core,
which admits or refuses them (an event either way, on ~/events)."""

from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from .. import conversions
from .cartesian_targets import CartesianTargets


class DesiredMotion:
    """The two desired-motion subscriptions of `node` (a DynamicsNode)."""

    def __init__(self, node):
        self.node = node
        node.create_subscription(JointTrajectory, "~/desired_trajectory", self.trajectory, 10)
        node.create_subscription(JointState, "~/desired_state", self.set_point, 10)
        self.cartesian = CartesianTargets(node)

    def trajectory(self, msg):
        """A desired trajectory: converted to a spline outside the node's lock (milliseconds
        for hundreds of points, which a joint state must not wait for), admitted under it."""
        node = self.node
        if node.controller is None:
            return
        now, names = node.now(), list(node.model.joint_names)
        try:
            motion = conversions.trajectory_from_msg(msg, names, now)
        except ValueError as exc:
            motion, reason = None, f"desired trajectory rejected: {exc}"
        with node.lock:
            if motion is not None and list(node.model.joint_names) != names:
                motion, reason = None, ("desired trajectory rejected: the robot description "
                                        "changed while it was read")
            node.report(node.controller.desire(motion, now) if motion is not None
                        else node.controller.refuse(reason))

    def set_point(self, msg):
        node = self.node
        with node.lock:
            if node.controller is None:
                return
            try:
                motion = conversions.set_point_from_msg(msg, node.model.joint_names)
            except ValueError as exc:
                node.report(node.controller.refuse(f"desired state rejected: {exc}"))
                return
            node.report(node.controller.desire(motion, node.now()))

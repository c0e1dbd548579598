"""~/passive_joint_states (sensor_msgs/JointState): a closed linkage's passive joints where
its loops put them at each state the node commands from: merged with the driver's
joint_states (e.g. by joint_state_publisher's source_list), robot_state_publisher draws the
whole linkage from a driver that reports only its motors. A serial chain publishes nothing
here."""

from sensor_msgs.msg import JointState


class PassiveJointStates:
    """The publisher of one node (created for a linkage at its first configuration)."""

    def __init__(self, node):
        self.node, self.publisher, self.index = node, None, None

    def configure(self, model):
        """Publish for `model` from now on: a closed linkage's MotorModel, else nothing."""
        passive = getattr(model, "passive_joints", ())
        if not passive:
            self.index = None
            return
        tree = model.mechanism.tree
        self.index = [tree.joint_index(name) for name in passive]
        self.message = JointState(name=list(passive))
        if self.publisher is None:
            self.publisher = self.node.create_publisher(JointState, "~/passive_joint_states",
                                                        10)

    def publish(self, stamp, solver, q):
        """The passive joints [rad or m] of the linkage closed with the motors at q."""
        if self.index is None:
            return
        closed = solver.motors.closed(q)[0]
        self.message.header.stamp = stamp
        self.message.position = closed[self.index].tolist()
        self.publisher.publish(self.message)

"""A closed linkage's passive joints. ~/passive_joint_states (sensor_msgs/JointState): where
its loops put them at each state the node commands from: merged with the driver's
joint_states (e.g. by joint_state_publisher's source_list), robot_state_publisher draws the
whole linkage from a driver that reports only its motors. And those a driver reports too,
taken from its joint states for the check against the closure (one off by more than
passive_joint_tolerance starts the safe hold: control/closure_watch.py). A serial chain
publishes and checks nothing here."""

from sensor_msgs.msg import JointState

from ..effort_output import EffortOutput


class PassiveJointStates:
    """The publisher of one node (created for a linkage at its first configuration)."""

    def __init__(self, outputs):
        self.outputs, self.publisher, self.index = outputs, None, None

    def configure(self, model, tolerance):
        """Publish and check for `model` from now on (a closed linkage's MotorModel, else
        nothing), measured passive joints to `tolerance` [rad or m]."""
        passive = getattr(model, "passive_joints", ())
        self.tolerance = tolerance
        if not passive:
            self.index = None
            return
        tree = model.mechanism.tree
        self.index = [tree.joint_index(name) for name in passive]
        self.names = frozenset(passive)
        self.output = EffortOutput(JointState(name=list(passive)), "position", len(passive))
        if self.publisher is None:
            self.publisher = self.outputs.add(JointState, "~/passive_joint_states", 10)

    @property
    def active(self):
        """Whether the model is a closed linkage (there are passive joints)."""
        return self.index is not None

    def measured(self, msg):
        """{passive joint name: position} of those `msg` (a JointState) carries."""
        return {name: value for name, value in zip(msg.name, msg.position)
                if name in self.names}

    def publish(self, stamp, solver, q):
        """The passive joints [rad or m] of the linkage closed with the motors at q, to
        whoever listens (the outputs' subscriber counts, read after the command's)."""
        if self.index is None or not self.outputs.listened(self.publisher):
            return
        self.output.publish(self.publisher, solver.motors.closed(q)[0][self.index], stamp)

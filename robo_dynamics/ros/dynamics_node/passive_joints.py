"""A closed linkage's passive joints. ~/passive_joint_states (sensor_msgs/JointState): where
its loops put them at each state the node commands from; ~/joint_states: every joint of the
linkage at that state (the motors as measured, the passive joints where the loops put
them), which the launch file gives robot_state_publisher, so it draws the whole linkage from
a driver that reports only its motors. And the passive joints a driver reports too,
taken from its joint states for the check against the closure (one off by more than
passive_joint_tolerance starts the safe hold: control/closure_watch.py). A serial chain
publishes and checks nothing here."""

from sensor_msgs.msg import JointState

from ..effort_output import EffortOutput


class PassiveJointStates:
    """The publisher of one node (created for a linkage at its first configuration)."""

    def __init__(self, outputs):
        self.outputs, self.publisher, self.whole, self.index = outputs, None, None, None

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
        self.whole_output = EffortOutput(JointState(name=list(tree.joint_names)), "position",
                                         tree.dof)
        if self.publisher is None:
            self.publisher = self.outputs.add(JointState, "~/passive_joint_states", 10)
            self.whole = self.outputs.add(JointState, "~/joint_states", 10)

    @property
    def active(self):
        """Whether the model is a closed linkage (there are passive joints)."""
        return self.index is not None

    def measured(self, msg):
        """{passive joint name: position} of those `msg` (a JointState) carries."""
        return {name: value for name, value in zip(msg.name, msg.position)
                if name in self.names}

    def publish(self, stamp, solver, q):
        """The passive joints [rad or m] of the linkage closed with the motors at q, and all
        its joints, to whoever listens (the outputs' subscriber counts, read after the
        command's)."""
        if self.index is None:
            return
        passive, whole = (self.outputs.listened(self.publisher),
                          self.outputs.listened(self.whole))
        if passive or whole:
            closed = solver.motors.closed(q)[0]
            if passive:
                self.output.publish(self.publisher, closed[self.index], stamp)
            if whole:
                self.whole_output.publish(self.whole, closed, stamp)

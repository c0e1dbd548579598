"""dynamics_node's lifecycle (a ROS 2 managed node: `ros2 lifecycle set`, a lifecycle
manager). With the parameter `managed` the node starts unconfigured and commands the arm
only once activated; without it (the default) it configures itself once it has a robot
description and activates itself: the plain node, as before. `managed` with `autostart`
starts as the plain node does and stays managed (deactivate, cleanup).

    configure   the robot description (robot_description, robot_description_file, or the
                last message on the robot_description topic) loaded, parameters checked:
                every failure a reason in the log and on /diagnostics, the node unconfigured
    inactive    joint states taken, services and diagnostics answer, ~/commands silent,
                desired motions refused with the reason (control/activation.py)
    activate    the command stream starts as a ramp from the measured effort
    deactivate  a desired motion ends (its goal with its code and sentence), the safe hold
                brings the arm to rest, then the command stream stops
    cleanup     the model dropped (unconfigured); shutdown: deactivated first
~/events says each transition; /diagnostics carries the state ('lifecycle').
"""

from rclpy.lifecycle import LifecycleNodeMixin, TransitionCallbackReturn
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..control.activation import Activation
from ..control.cycle_outputs import INFO, Event
from ..errors import RoboDynamicsError

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE
INACTIVE_REASON = ("the node is not active (lifecycle state '{}'): `ros2 lifecycle set "
                   "{} activate` first")


class Lifecycle(LifecycleNodeMixin):
    """The lifecycle of a DynamicsNode (mixed in before rclpy's Node)."""

    def start_lifecycle(self):
        """The state machine, the robot_description subscription; the plain node configures
        (a bad description raises, as before) and activates itself here."""
        self.managed = self.get_parameter("managed").value
        # the lifecycle services and ~/transition_event only where someone manages the node
        LifecycleNodeMixin.__init__(self, enable_communication_interface=self.managed)
        self.activation = None
        self.configure_failure = ""     # why the last configure failed (diagnostics)
        self.described = None           # the last robot_description message
        self.autostart = not self.managed or self.get_parameter("autostart").value
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(String, "robot_description", self._on_description, latched)
        if self.autostart and self._description() is not None:
            self._start_itself()
        elif self.autostart:
            self.get_logger().info("waiting for the robot description on 'robot_description'")

    def lifecycle_state(self):
        return self._state_machine.current_state[1]

    def _description(self):
        return (self.get_parameter("robot_description").value
                or self.get_parameter("robot_description_file").value
                or (self.described.data if self.described is not None else None))

    def _start_itself(self):
        """Configure and activate: the plain node (a bad description raises, as before), or a
        managed one with autostart (a failure leaves it unconfigured, the reason logged)."""
        if self.trigger_configure() != SUCCESS:
            if self.managed:
                return
            raise ValueError(f"robot description rejected: {self.configure_failure}")
        self.trigger_activate()

    def _on_description(self, msg):
        first = self.described is None
        self.described = msg
        if first and self.autostart and self.lifecycle_state() == "unconfigured":
            try:
                self._start_itself()
            except ValueError as exc:
                self.get_logger().error(str(exc))

    # -- transitions (the lifecycle's service thread; each under the node's lock) ------------
    def on_configure(self, state):
        description = self._description()
        if description is None:
            return self._failed("no robot description: set robot_description or "
                                "robot_description_file, or publish it on robot_description")
        try:
            with self.lock:
                self._configure(description)
                reason = INACTIVE_REASON.format("inactive", self.get_fully_qualified_name())
                self.activation = Activation(self.controller, False, reason)
        except (RoboDynamicsError, ValueError, OSError) as exc:
            with self.lock:
                self.controller = self.model = self.solver = self.checker = None
            return self._failed(str(exc))
        self.configure_failure = ""
        self._say(Event(INFO, "configured", f"configured: {self.model.name}, "
                                            f"{self.model.dof} joints; inactive"))
        return SUCCESS

    def on_activate(self, state):
        with self.lock:
            event = self.activation.activate()
        self._say(event)
        return SUCCESS

    def on_deactivate(self, state):
        with self.lock:
            events = self.activation.deactivate()
        for event in events:
            self._say(event)
        return SUCCESS

    def on_cleanup(self, state):
        with self.lock:
            self.controller = self.model = self.solver = self.checker = None
            self.activation = None
        self.get_logger().info("cleaned up: no model; unconfigured")
        return SUCCESS

    def on_shutdown(self, state):
        if self.activation is not None:
            self.on_deactivate(state)
        return SUCCESS

    def _failed(self, reason):
        self.configure_failure = reason
        self.get_logger().error(f"configure failed: {reason}")
        return FAILURE

    def _say(self, event):
        """A transition on ~/events and in the log: a managed node's (the plain node's own
        start-up transitions are not news)."""
        if self.managed and self.controller is not None:
            self.report(event)

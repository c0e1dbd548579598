"""dynamics_node's outputs: its publishers, which of them have subscribers, and a joint
state's Cycle turned into messages.

The command first (what the arm is waiting for), then the gravity torques, the external
torques, then Λ. Each output is computed and published only when it has a subscriber:
publishing to nobody still costs the conversion and serialisation, and J, M⁻¹ and Λ (half
of the callback's time) would only delay the next joint state. Subscriber counts are re-read
every REFRESH seconds, not per message, and whenever the clock went back (simulated time
restarting); on simulated time on every state (a simulation in lockstep waits for the
answer to its last state and sends no other to refresh them on).
"""

import functools
import math

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped, WrenchStamped
from rclpy.clock_type import ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header
from visualization_msgs.msg import MarkerArray

from robo_dynamics_interfaces.msg import ContactState, ControllerEvent, OperationalSpaceInertia

from ...control import controller as core
from ...control.momentum_observer import UNKNOWN
from .. import conversions
from ..effort_output import EffortOutput

REFRESH = 0.1             # seconds between readings of subscriber counts and clock source
THROTTLE = 2.0            # seconds between repeated warnings
PAYLOAD_DEPTH = 10        # ~/payload: changes kept for late subscribers
EVENT_LEVEL = {core.INFO: ControllerEvent.INFO, core.WARN: ControllerEvent.WARN,
               core.ERROR: ControllerEvent.ERROR}


class Outputs:
    """The node's publishers (made by `create_publisher`, the node's) and the messages
    reused on every cycle; clock: the node's rclpy Clock (which drives it: the system's or
    /clock); logger: where events are told."""

    def __init__(self, create_publisher, clock, logger):
        self.clock, self.logger = clock, logger
        # without rclpy's default QoS-event handlers: each is an entity the executor polls
        # on every message (BENCHMARKS.md, "Design measurements"); a subscriber with
        # incompatible QoS is still reported, by its own node
        output = self._output = functools.partial(
            create_publisher,
            event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
        self.command = output(Float64MultiArray, "~/commands", 10)
        self.command_state = output(JointState, "~/commanded_torques", 10)
        self.gravity = output(JointState, "~/gravity_torques", 10)
        self.lambda_ = output(OperationalSpaceInertia, "~/operational_space_inertia", 10)
        self.markers = output(MarkerArray, "~/markers", 1)
        self.tip_wrench = output(WrenchStamped, "~/tip_wrench", 1)
        self.external = output(JointState, "~/external_joint_torques", 10)
        self.external_wrench = output(WrenchStamped, "~/external_wrench", 10)
        self.contact = output(ContactState, "~/contact_state", 10)
        self.diagnostics = output(DiagnosticArray, "/diagnostics", 10)
        # events are rare and matter to whoever looks later: reliable, the last 20 kept
        self.events = create_publisher(ControllerEvent, "~/events", QoSProfile(
            depth=20, durability=DurabilityPolicy.TRANSIENT_LOCAL,
            reliability=ReliabilityPolicy.RELIABLE))
        # the payload in use, per link (the last PAYLOAD_DEPTH changes kept for late joiners)
        self.payload = create_publisher(InertiaStamped, "~/payload", QoSProfile(
            depth=PAYLOAD_DEPTH, durability=DurabilityPolicy.TRANSIENT_LOCAL,
            reliability=ReliabilityPolicy.RELIABLE))
        self._subscribed = dict.fromkeys((self.command, self.command_state, self.gravity,
                                          self.lambda_, self.external, self.external_wrench,
                                          self.contact), False)
        self._refreshed_at = -math.inf
        self.system_time = False       # until refresh has looked at the clock
        self.command_sent = False      # the last command went to a subscriber
        self.command_index = None      # model → command order (None: the same)
        self.frame_prefix = ""         # before every frame_id (frame_prefix)

    def configure(self, model, command_index, frame_prefix=""):
        """The messages reused on every cycle, for `model`'s chain; commands in the order
        `command_index` (model indices; None: model order); frame_ids after frame_prefix."""
        self.model, self.command_index = model, command_index
        self.frame_prefix = frame_prefix
        names = list(model.joint_names)
        command_names = names if command_index is None else [names[i] for i in command_index]
        n = len(command_names)
        self._command = EffortOutput(Float64MultiArray(), "data", n)
        self._command_state = EffortOutput(JointState(name=command_names), "effort", n)
        self._gravity = EffortOutput(JointState(name=command_names), "effort", n)
        self._lambda = OperationalSpaceInertia(
            header=Header(frame_id=frame_prefix + model.base_link),
            tip_frame=frame_prefix + model.tip_link)
        self._external = EffortOutput(JointState(name=names), "effort", model.dof)
        self._contact = ContactState(joint_names=names)
        self._wrench = WrenchStamped(header=Header(frame_id=frame_prefix + model.base_link))

    def refresh(self, now):
        """Re-read what may change while running but is too dear to read per message: the
        outputs' subscriber counts and whether simulated time drives the clock."""
        self._subscribed = {pub: pub.get_subscription_count() > 0 for pub in self._subscribed}
        self._refreshed_at = now
        clock = self.clock
        self.system_time = (clock.clock_type != ClockType.STEADY_TIME
                            and not getattr(clock, "ros_time_is_active", False))

    def add(self, message_type, topic, depth):
        """A publisher for another module, made as the outputs' are, its subscriber count
        read with theirs (listened)."""
        publisher = self._output(message_type, topic, depth)
        self._subscribed[publisher] = False
        self._refreshed_at = -math.inf
        return publisher

    def listened(self, publisher):
        """Whether `publisher` (one of add's) had subscribers at the last refresh."""
        return self._subscribed.get(publisher, False)

    def publish_command(self, stamp, cycle, now):
        """The command of `cycle` to whoever listens (command_sent says whether anyone)."""
        if not self.system_time or not 0.0 <= now - self._refreshed_at <= REFRESH:
            self.refresh(now)
        subscribed, index = self._subscribed, self.command_index
        command = cycle.command if index is None else cycle.command[index]
        if subscribed[self.command]:
            self._command.publish(self.command, command)
        if subscribed[self.command_state]:
            self._command_state.publish(self.command_state, command, stamp)
        self.command_sent = subscribed[self.command] or subscribed[self.command_state]

    def publish_rest(self, stamp, rest, wrench_damping):
        """The gravity torques, the external torques and Λ of a cycle's `rest`
        (control/cycle_outputs.Rest), each to whoever listens; the operational_space result
        when Λ was computed, else None."""
        subscribed, index = self._subscribed, self.command_index
        if subscribed[self.gravity]:
            gravity = rest.clamped_gravity()
            self._gravity.publish(self.gravity, gravity if index is None else gravity[index],
                                  stamp)
        result, wrench = rest.tip(subscribed[self.lambda_], subscribed[self.external_wrench],
                                  wrench_damping)
        if rest.external is not None:
            self._publish_external(stamp, rest.external, wrench, rest.settings)
        if result is not None and np.isfinite(result.Lambda).all():
            msg = self._lambda
            msg.header.stamp = stamp
            msg.near_singular = result.near_singular
            msg.condition_number = min(result.condition_number, conversions.CONDITION_CAP)
            msg.lambda_matrix = result.Lambda.ravel()
            self.lambda_.publish(msg)
        return result

    def _publish_external(self, stamp, external, wrench, settings):
        """τ_ext, the tip wrench explaining it (None without every joint's estimate) and the
        contact levels. A joint without a measured effort has no estimate: it is left out of
        ~/external_joint_torques and UNKNOWN in ~/contact_state."""
        subscribed, tau = self._subscribed, external.torque
        known = not np.isnan(tau).any()
        if subscribed[self.external]:
            if known:
                self._external.publish(self.external, tau, stamp)
            elif not np.isnan(tau).all():
                have = np.flatnonzero(~np.isnan(tau))
                self.external.publish(JointState(
                    header=Header(stamp=stamp),
                    name=[self.model.joint_names[i] for i in have], effort=tau[have].tolist()))
        if wrench is not None:
            msg = self._wrench
            msg.header.stamp = stamp
            force, torque = msg.wrench.force, msg.wrench.torque
            (force.x, force.y, force.z, torque.x, torque.y, torque.z) = wrench.tolist()
            self.external_wrench.publish(msg)
        if subscribed[self.contact]:
            msg, levels = self._contact, external.levels
            msg.header.stamp = stamp
            msg.levels = bytes(levels)
            msg.residuals = tau if known else np.where(np.isnan(tau), 0.0, tau)
            msg.contact_thresholds = settings.contact_threshold
            msg.collision_thresholds = settings.collision_threshold
            msg.level = max((level for level in levels if level != UNKNOWN), default=0)
            self.contact.publish(msg)

    def report(self, event, mode, stamp):
        """Log a controller event (refusals throttled: a caller can send them as fast as it
        likes) and publish it on ~/events."""
        logger = self.logger     # one call site per severity (rclpy requires it)
        if event.kind == "refused":
            logger.warning(event.message, throttle_duration_sec=THROTTLE)
        elif event.level == core.ERROR:
            logger.error(event.message)
        elif event.level == core.WARN:
            logger.warning(event.message)
        else:
            logger.info(event.message)
        msg = ControllerEvent(level=EVENT_LEVEL[event.level], kind=event.kind, mode=mode,
                              message=event.message)
        msg.header.stamp = stamp
        self.events.publish(msg)

    def publish_payload(self, link, mass, com, inertia, stamp):
        """~/payload: the payload now at `link` (mass 0: none), in that link's frame."""
        msg = InertiaStamped()
        msg.header.stamp = stamp
        msg.header.frame_id = self.frame_prefix + link
        conversions.fill_inertia(msg.inertia, mass, com, inertia)
        self.payload.publish(msg)

"""dynamics_node: joint states in; the arm's torque command, gravity torques and Λ out.

The wiring of the node (reference: docs/node.md). Its parts are the files beside this one:
the joint-state thread, outputs and markers, diagnostics, services, desired motions and
Cartesian targets, the input watch, a linkage's passive joints; the actions are in
ros/actions/. Every control decision is the core's (control/); the node converts, holds
parameters and publishes. It never crashes on what it receives: bad input is rejected,
counted, reported. The node's lock serialises the joint-state thread, the main executor
and the actions.
"""

import sys
import threading
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from rclpy.time import Time
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

from robo_dynamics_interfaces.msg import ControllerEvent

from ...control import controller as core
from ...control.cross_check_cycle import CrossCheckCycle
from ...control.closure_watch import passive_joint_fault
from ...control.health import NodeHealth
from ...control.joint_state_merger import JointStateMerger
from ...control.model_changes import WAIT as MODEL_CHANGE_WAIT, ModelChangeSchedule
from ...control.settings import controller_settings
from ...control.solver_set import (CLOSED_LINKAGE, CheckingSolvers, build_solver_set,
                                   chain_change, payload_change)
from ...identification.identification_session import IdentificationSession
from .. import parameters
from ..actions.follow_joint_trajectory import TrajectoryAction
from ..actions.identify_payload import IdentificationAction
from ..chain import (command_index, describe, joint_names_of, load_chain, log_lines,
                     start_up_payload)
from ..conversions import seconds
from ..lifecycle import Lifecycle
from ..spin import background_executor, restart_timers, run
from . import diagnostics, markers
from .closure_parameters import declare_closures, linkage_values
from .desired_motion import DesiredMotion
from .input_watch import InputWatch
from .joint_state_thread import JointStateThread, state_time
from .live import Live, exclusive, live_field
from .outputs import THROTTLE, Outputs
from .passive_joints import PassiveJointStates
from .services import DynamicsServices


class DynamicsNode(Lifecycle, Node):
    """The live dynamics of one arm (module docstring). controller (control/controller.py),
    the model, its solvers and payloads: the Live view's (live.py), which parts work on."""

    controller, model, solver, checker, urdf_model, payloads, checking_solvers = map(
        live_field, ("controller", "model", "solver", "checker", "urdf_model", "payloads",
                     "checking_solvers"))

    def __init__(self, **kwargs):
        Node.__init__(self, "dynamics_node", **kwargs)     # the lifecycle: start_lifecycle
        self.lock = threading.RLock()
        self.live = Live(self.lock, self.now, self.report, self.computation_failed)
        parameters.declare(self, parameters.DYNAMICS_NODE)
        declare_closures(self)       # a closed linkage's loop_closures.<name>.<field>
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        self.health = NodeHealth()     # what /diagnostics reports (control/health.py)
        self.joint_states = None   # the joint-state thread, started at the end of __init__
        self.identification = self.trajectory_action = None  # the actions' threads (same)
        self.cross_check = CrossCheckCycle()   # of the two backends, a step per state
        self.cross_check_off = None     # why there is no cross-check (no second backend)
        self.session = IdentificationSession()     # ~/identify_payload's
        self.model_changes = ModelChangeSchedule(self.commit_change)
        self._commanded_stamp = 0  # [ns] the stamp of the last state that gave a command
        self.duplicates = 0        # states sent again by a simulation (not answered twice)
        self.background = background_executor("dynamics_node_background")
        self.outputs = Outputs(self.create_publisher, self.get_clock(), self.get_logger())
        self.passive_joints = PassiveJointStates(self.outputs)
        self.desired_motion = DesiredMotion(self.live, self.create_subscription,
                                            lambda name: self.get_parameter(name).value)
        self.service_handlers = DynamicsServices(
            self.live, self.create_service, self.get_logger(),
            lambda name: self.get_parameter(name).value, self.set_parameters_atomically,
            self.apply_payload, self.background)
        self._periodic = {}
        self._restart_timers()
        self.start_lifecycle()     # lifecycle.py: managed, or configured and active now
        # a message type's first publish loads its type support (tens of ms): now, not later
        self._publish_diagnostics()
        self.outputs.markers.publish(MarkerArray())
        serialize_message(ControllerEvent())    # loads its type support (first event later)
        # depth 10, best effort: a node that falls behind skips to recent states (sensor data)
        self.joint_states = JointStateThread(
            self, JointState, "joint_states", self.on_joint_state,
            QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT),
            self.get_parameter("thread_priority").value)
        self.identification = IdentificationAction(self)
        self.trajectory_action = TrajectoryAction(self)
        self.input_watch = InputWatch(self.live, self.create_timer, self.on_simulated_time,
                                      self.model_changes)

    def destroy_node(self):
        for part in ("identification", "trajectory_action", "joint_states"):
            if getattr(self, part, None) is not None:
                getattr(self, part).stop()
        if getattr(self, "background", None) is not None:
            self.background.shutdown(wait=True)
        return super().destroy_node()

    # -- configuration ---------------------------------------------------------------------
    def _configure(self, description):
        """Load the chain and build everything that depends on it. Raises on a bad model."""
        p = linkage_values(self, parameters.read(self, parameters.DYNAMICS_NODE))
        base = load_chain(description, p)     # doubtful inertias: logged once, below
        reason = parameters.validate_start(p, base.dof)
        if reason:
            raise ValueError(reason)
        if p["armature"] is not None:
            base = base.with_armature(parameters.per_joint(p["armature"], base.dof, "armature"))
        index = command_index(base, p["command_joints"])    # commands in model order: None
        self.live.frame_prefix = p["frame_prefix"]
        self.outputs.configure(base, None if np.array_equal(index, np.arange(base.dof)) else index,
                               p["frame_prefix"])
        self.passive_joints.configure(base, p["passive_joint_tolerance"])
        self.urdf_model = base
        self.checking_solvers = CheckingSolvers(base)   # ~/check_trajectory's solvers
        payload = start_up_payload(p)      # link → (mass, com, inertia)
        self.payloads = {} if payload is None else {payload[0]: payload[1:]}
        built = self._checked(build_solver_set(base, self.payloads, p["backend"]))
        self.model, self.solver, self.checker = built[:3]
        self.wrench_damping = p["wrench_damping"]
        merger = JointStateMerger(base.joint_names, joint_names_of(base.urdf_xml))
        self.controller = core.Controller(self.solver, merger, self._settings(p))
        log_lines(self.get_logger(), describe(base, p["backend"], [
            base.joint_names[i] for i in index], self.solver, self.controller.settings))
        for link, payload in self.payloads.items():
            self.outputs.publish_payload(link, *payload, self._stamp_now())

    def _checked(self, built):
        """A SolverSet built (tens of ms: never under the lock), its missing checker told."""
        if built.checker is None and self.cross_check_off is None:   # a linkage's: by design
            (self.get_logger().info if built.checker_missing == CLOSED_LINKAGE
             else self.get_logger().warning)(f"cross-check off: {built.checker_missing}")
        self.cross_check_off = self.cross_check_off or built.checker_missing or None
        return built

    def _settings(self, values=None):
        return controller_settings(values or parameters.read(self, parameters.DYNAMICS_NODE),
                                   self.model)

    @exclusive
    def _validate_parameters(self, changed):
        reason = parameters.validate_update(self, {p.name: p.value for p in changed}, self.model)
        return SetParametersResult(successful=reason is None, reason=reason or "")

    @exclusive
    def _apply_parameters(self, _changed):
        self._restart_timers()
        if self.controller is not None:
            values = parameters.read(self, parameters.DYNAMICS_NODE)
            self.controller.configure(self._settings(values))
            self.wrench_damping = values["wrench_damping"]

    def _restart_timers(self):
        rate = {name: self.get_parameter(f"{name}_rate").value
                for name in ("cross_check", "marker", "diagnostics")}
        shown = {"labels": self.get_parameter("marker_labels").value, "max_stiffness": max(
            self.get_parameter("cartesian.max_stiffness").value[:3])}
        restart_timers(self, self._periodic, {
            "cross_check": (rate["cross_check"], self.cross_check.request),
            "markers": (rate["marker"], lambda: markers.publish(
                self.live, self.outputs, self.get_clock(), rate["marker"], shown)),
            "diagnostics": (rate["diagnostics"], self._publish_diagnostics)})

    def _publish_diagnostics(self):
        diagnostics.publish(self, self.outputs.diagnostics)

    # -- the hot path ------------------------------------------------------------------------
    def on_joint_state(self, msg):
        if self.model_changes:
            self._apply_due_model_changes(self._state_time(seconds(msg.header.stamp)))
        with self.lock:
            self._on_joint_state_locked(msg)

    def _on_joint_state_locked(self, msg):
        if self.controller is None:
            return
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        if stamp and stamp == self._commanded_stamp and not self.outputs.system_time:
            self.duplicates += 1      # a simulation sent this state again: answered already
            return
        started = time.perf_counter()
        self.outputs.command_sent = False
        if self._handle_joint_state(msg, started) and self.outputs.command_sent:
            self._commanded_stamp = stamp
        self.health.callback_seconds.append(time.perf_counter() - started)
        if self.controller.observer_seconds:
            self.health.observer_seconds.append(self.controller.observer_seconds)
            self.controller.observer_seconds = 0.0

    def _handle_joint_state(self, msg, started):
        measured = seconds(msg.header.stamp)       # [s] the state's stamp
        now = self._state_time(measured)
        try:
            cycle = self.activation.step(msg.name, msg.position, msg.velocity, msg.effort, now,
                                         measured)
        except Exception as exc:  # a numerical failure must not take the node down
            self.computation_failed(exc)
            return
        if cycle.rejected is not None:
            self.health.rejected_reason = cycle.rejected
            self.get_logger().warning(
                f"joint_states rejected ({self.controller.rejected} so far): "
                f"{cycle.rejected}", throttle_duration_sec=THROTTLE)
            return
        for event in cycle.events:
            self.report(event)
        self._check_passive_joints(msg)      # (before the state counts as taken: tests wait
        self.health.received += 1           # on that count for what it caused)
        self.health.input_rate.received(now)
        if cycle.command is not None:
            try:
                self._publish(msg.header.stamp, cycle, now, started)
            except Exception as exc:
                self.computation_failed(exc)
            if self.session.recording is not None and not self.session.record(
                    now, self.controller):
                self.model_changes.drop()       # the arm left the poses
        if self.cross_check.active:
            try:
                self.cross_check.step(self.checker, self.solver, self.controller.measured_state(),
                                      self.joint_states.giving_way)
            except Exception as exc:
                self.computation_failed(exc, "cross-check")
        return cycle.command is not None

    def _check_passive_joints(self, msg):
        """A closed linkage's measured passive joints off the closure: the safe hold."""
        if self.passive_joints.active:
            try:
                reason = passive_joint_fault(
                    self.solver.motors, self.controller.measured_state()[0],
                    self.passive_joints.measured(msg), self.passive_joints.tolerance)
            except Exception as exc:  # a numerical failure must not take the node down
                return self.computation_failed(exc, "passive joints")
            if reason is not None and self.controller.mode != core.HOLD:
                self.report(self.controller.hold_for(reason))

    def _state_time(self, measured):     # on the system clock: now, without asking the clock
        return state_time(self.now(), measured,
                          not self.outputs.system_time and self.on_simulated_time())

    def on_simulated_time(self):
        """Whether /clock drives the node's clock (the joint-state thread's)."""
        clock = self.get_clock() if self.joint_states is None else self.joint_states.clock
        return bool(getattr(clock, "ros_time_is_active", False))

    def _apply_due_model_changes(self, now):
        """Apply the model changes due by `now`; on simulated time wait, unlocked, for one."""
        for at in self.model_changes.apply_due(now, self.on_simulated_time(),
                                               MODEL_CHANGE_WAIT):
            self.get_logger().error(f"a model change due at t = {at:.3f} s was not ready "
                                    f"after {MODEL_CHANGE_WAIT:g} s: skipped")

    def _publish(self, stamp, cycle, now, started):
        """The cycle's outputs (outputs.py), the command first; started: perf_counter at start."""
        self.outputs.publish_command(stamp, cycle, now)
        self.health.command_seconds.append(time.perf_counter() - started)
        self.passive_joints.publish(stamp, self.solver, self.controller.measured_state()[0])
        result = self.outputs.publish_rest(stamp, cycle.rest, self.wrench_damping)
        if result is not None:         # Λ subscribed: /diagnostics need not compute it
            self.health.singularity(result, now)

    def computation_failed(self, exc, what="dynamics"):
        """Count and report (throttled) a computation or publication that raised."""
        if not self.context.ok():   # shutting down (Ctrl-C): publishing fails, nothing to say
            return
        self.health.errors += 1
        self.get_logger().error(f"{what} failed ({self.health.errors} errors so far): {exc}",
                                throttle_duration_sec=THROTTLE)

    def report(self, event):
        """Log a controller event and publish it on ~/events."""
        self.outputs.report(event, self.controller.mode, self._stamp_now())

    # -- model changes: a payload, an identified chain (control/solver_set.py) ---------------
    def apply_payload(self, link, mass, com, inertia):
        """Make (mass [kg], com (3,) [m], inertia (3, 3) [kg·m²] about the com, in `link`'s
        frame) the payload at `link` (mass 0: none), now: its sentence. ValueError."""
        return self.commit_change(self.prepare_payload(link, mass, com, inertia))

    def prepare_payload(self, link, mass, com, inertia):
        """apply_payload's ModelChange, built outside the lock (the stream goes on)."""
        urdf_model, payloads, backend = self._changeable()
        return payload_change(urdf_model, payloads, link, mass, com, inertia,
                              self.get_parameter("max_payload_mass").value, backend)

    def prepare_chain(self, chain, message):
        """The ModelChange to `chain` (the same chain, other inertials and friction)."""
        urdf_model, payloads, backend = self._changeable()
        return chain_change(urdf_model, chain, payloads, backend, message)

    def _changeable(self):
        if not self.get_parameter("allow_model_changes").value:
            raise ValueError("model changes are disabled (allow_model_changes is false)")
        with self.lock:
            if self.controller is None:
                raise ValueError("no robot description yet")
            return self.urdf_model, dict(self.payloads), self.get_parameter("backend").value

    def commit_change(self, change):
        """Swap in a prepared ModelChange; its sentence."""
        self._checked(change.built)
        with self.lock:
            if change.urdf_model is not self.urdf_model:
                self.checking_solvers = CheckingSolvers(change.urdf_model)
            self.urdf_model, self.payloads = change.urdf_model, change.payloads
            self.model, self.solver, self.checker = change.built[:3]
            event = self.controller.replace_solver(self.solver, change.message)
            self.controller.configure(self._settings())
            self.cross_check.reset()
        self.report(event)
        if change.payload is not None:
            self.outputs.publish_payload(*change.payload, self._stamp_now())
        return change.message

    def _stamp_now(self):
        """The node's clock (now) as a builtin_interfaces/Time."""
        return Time(nanoseconds=round(self.now() * 1e9)).to_msg()

    def now(self):
        """The node's clock [s]: the system clock read directly (rclpy's Clock.now() is slower:
        BENCHMARKS.md), or with /clock the joint-state thread's (joint_state_thread.py)."""
        if self.outputs.system_time:
            return time.time()
        clock = self.get_clock() if self.joint_states is None else self.joint_states.clock
        return clock.now().nanoseconds * 1e-9


def main(args=None):
    return run(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())

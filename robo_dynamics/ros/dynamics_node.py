"""dynamics_node: joint states in; the arm's torque command, gravity torques and Λ out.

Subscribes  joint_states (sensor_msgs/JointState, merged by name from any publishers;
            effort, when given, is the measured joint torque, or the motor current with
            effort_source current)
            ~/desired_trajectory (trajectory_msgs/JointTrajectory)
            ~/desired_state (sensor_msgs/JointState: a set-point, positions [+ velocities])
            robot_description (std_msgs/String, transient local; only when no parameter
            gives the description)
Publishes   ~/commands (Float64MultiArray, command_joints order: the effort controller's
            input) and ~/commanded_torques (JointState): the command stream of
            control/controller.py (gravity compensation, computed torque or safe hold,
            clamped and rate-limited); ~/gravity_torques (JointState, effort = g(q));
            ~/events (ControllerEvent, transient local); ~/payload (InertiaStamped, transient
            local: the payload in use at each link, frame_id = the link);
            ~/operational_space_inertia (OperationalSpaceInertia; J, M⁻¹ and Λ are computed
            per state only while it has a subscriber); ~/markers (MarkerArray);
            ~/tip_wrench (WrenchStamped);
            from the measured efforts (control/momentum_observer.py): ~/external_joint_torques
            (JointState, effort = τ_ext, the joints with an estimate), ~/external_wrench
            (WrenchStamped: the wrench the environment applies at tip_link's origin, base
            axes, frame_id = base_link) and ~/contact_state (ContactState);
            /diagnostics (DiagnosticArray)
Services    ~/inverse_dynamics, ~/forward_dynamics, ~/compute_dynamics, ~/set_payload,
            ~/set_contact_thresholds, ~/reset_observer (std_srvs/Trigger),
            ~/check_trajectory (services.py)
Actions     ~/identify_payload (IdentifyPayload: drive the arm through poses, fit the payload;
            identification_action.py)
The node converts messages, holds parameters and calls the controller core and the library;
every control decision is the core's. It never crashes on what it receives: bad input is
rejected, counted and reported. joint_states is taken on a thread of its own
(joint_state_thread.py); the node's lock serialises the two threads. The cross-check of
the two backends runs on that thread too, one backend's evaluation of one quantity per
joint state after its command is out, on the normal scheduler, so it never delays a
command; without Pinocchio (backend rnea) it is off, as /diagnostics says.
"""

import collections
import concurrent.futures
import functools
import math
import os
import sys
import threading
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Header, String
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robo_dynamics_interfaces.msg import ControllerEvent

from .. import make_solver
from ..backends.cross_check import CrossCheckSteps
from ..control import controller as core
from ..control.health import InputRate
from ..control.joint_order import order_of
from ..control.joint_state_merger import JointStateMerger
from ..control.payload_identification import (SIGNIFICANT, identify_payload,
                                              provisional_payload, static_poses)
from ..control.pose_recording import PoseRecording, TimedRecording
from ..control.settings import controller_settings, thresholds
from ..control.solver_set import (CROSS_CHECKED, CheckingSolvers, build_solver_set,
                                  model_with)
from ..control.state_derivatives import velocities_and_accelerations
from ..control.trajectory import SetPoint
from ..errors import RoboDynamicsError
from . import conversions, diagnostics, markers, parameters
from .chain import command_index, load_chain, start_up_payload
from .identification_action import IdentificationAction
from .joint_state_thread import JointStateThread
from .outputs import Outputs
from .services import DynamicsServices
from .spin import run

THROTTLE = 2.0            # seconds between repeated warnings
DEFAULT_POSES, MAX_POSES = 8, 50   # ~/identify_payload
MAX_RECORD_SECONDS = 120.0         # ~/identify_payload with a duration
MODEL_CHANGE_WAIT = 60.0        # s of wall time a simulated-time loop waits for a model change
MODEL_CHANGE_DELAY = 0.1        # s after its data that an identification's model change acts
IDENTIFY_VELOCITY_SHARE = 0.5   # of each joint's velocity bound: the fastest a planned move goes
BACKGROUND_NICE = 10            # the background thread's nice value above the process's


def _exclusive(callback):
    """Run a callback holding the node's lock: the joint-state thread and the main executor
    never interleave their work on the node's state."""
    @functools.wraps(callback)
    def locked(self, *args):
        with self.lock:
            return callback(self, *args)
    return locked


class DynamicsNode(Node):
    """The live dynamics of one arm; see the module docstring for its interface."""

    def __init__(self, **kwargs):
        super().__init__("dynamics_node", **kwargs)
        self.lock = threading.RLock()
        parameters.declare(self, parameters.DYNAMICS_NODE)
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self.received = 0          # accepted joint-state messages
        self.rejected_reason = ""
        self.errors = 0            # computations that raised (counted, never fatal)
        self.joint_states = None   # the joint-state thread, started at the end of __init__
        self.identification = None  # the ~/identify_payload action's thread (same)
        self.controller = None     # the command stream (control/controller.py)
        self.last_condition = math.nan    # of Λ⁻¹ = J M⁻¹ Jᵀ at the latest state: per state
        self.last_near_singular = False   # while Λ is subscribed, else by /diagnostics
        self.condition_at = -math.inf     # when they were computed (node clock, s)
        self.cross_check_result = {}
        self._cross_check_due = False   # set by the cross-check timer
        self._cross_check_steps = None  # the cross-check under way, a step per state
        self.cross_check_off = None     # why there is no cross-check (no second backend)
        self.input_rate = InputRate()   # of accepted messages
        self.callback_seconds = collections.deque(maxlen=2000)   # joint_states callback times
        self.observer_seconds = collections.deque(maxlen=2000)   # the observer's part of them
        self.command_seconds = collections.deque(maxlen=2000)    # their start → command out
        self.model = self.solver = self.checker = None
        self._recording = None     # the PoseRecording of an identification under way
        self._model_changes = collections.deque()   # (node time [s], Future): see
        #                                              schedule_model_change
        self._commanded_stamp = 0  # [ns] the stamp of the last state that gave a command
        self.duplicates = 0        # states sent again by a simulation (not answered twice)
        self._tare = None          # (poses (K, n), mean torques (K, n)) of the last tare
        # long computations a service asks for run on a thread of lower priority (nice), so
        # that the joint-state thread and ROS's own threads get the processor first
        self.background = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="dynamics_node_background", initializer=_lower_priority)

        self.outputs = Outputs(self)

        self.create_subscription(JointTrajectory, "~/desired_trajectory", self._on_trajectory, 10)
        self.create_subscription(JointState, "~/desired_state", self._on_set_point, 10)
        self.service_handlers = DynamicsServices(self)

        self._periodic = {}
        self._restart_timers()
        description = (self.get_parameter("robot_description").value
                       or self.get_parameter("robot_description_file").value)
        if description:
            self._configure(description)
        else:
            latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                                 reliability=ReliabilityPolicy.RELIABLE)
            self.create_subscription(String, "robot_description", self._on_description, latched)
            self.get_logger().info("waiting for the robot description on 'robot_description'")
        # the first publish of a message type costs tens of ms (type support is loaded):
        # pay it now with harmless messages, not in the middle of a command stream later
        self._publish_diagnostics()
        self.outputs.markers.publish(MarkerArray())
        serialize_message(ControllerEvent())    # loads its type support (first event later)
        # the hot path, on a thread of its own (joint_state_thread.py). Depth 10: a node that
        # falls behind skips to recent states instead of controlling from a backlog of old
        # ones. Best effort (it matches reliable publishers too), as sensor data is taken:
        # a repaired state would arrive late, and a reliable reader holds every later state
        # until the repair arrives
        self.joint_states = JointStateThread(
            self, JointState, "joint_states", self._on_joint_state,
            QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT),
            self.get_parameter("thread_priority").value)
        self.identification = IdentificationAction(self)

    def destroy_node(self):
        if getattr(self, "identification", None) is not None:
            self.identification.stop()
        if getattr(self, "joint_states", None) is not None:
            self.joint_states.stop()
        if getattr(self, "_background", None) is not None:
            self.background.shutdown(wait=True)
        return super().destroy_node()

    # -- configuration ---------------------------------------------------------------------
    def _configure(self, description):
        """Load the chain and build everything that depends on it. Raises on a bad model."""
        p = self._values()
        base = load_chain(description, p)     # doubtful inertias: logged once, below
        reason = parameters.validate(p, base.dof)
        if reason:
            raise ValueError(f"invalid parameter: {reason}")
        if p["effort_source"] == "current" and p["torque_constants"] is None:
            raise ValueError("effort_source current needs torque_constants [N m/A]")
        if p["payload_mass"] > p["max_payload_mass"]:
            raise ValueError(f"payload_mass {p['payload_mass']} kg exceeds max_payload_mass "
                             f"{p['max_payload_mass']} kg")
        self.command_index = command_index(base, p["command_joints"])
        self.command_names = [base.joint_names[i] for i in self.command_index]
        self.urdf_model = base
        self.checking_solvers = CheckingSolvers(base)   # ~/check_trajectory's solvers
        payload = start_up_payload(p)      # link → (mass, com, inertia)
        self.payloads = {} if payload is None else {payload[0]: payload[1:]}
        if np.array_equal(self.command_index, np.arange(base.dof)):
            self.command_index = None      # commands in model order: no reordering
        self.outputs.configure(base, self.command_index)
        self.model, self.solver, self.checker = self._build_solvers(self.payloads)
        self.wrench_damping = p["wrench_damping"]
        merger = JointStateMerger(base.joint_names, _joint_names_of(base.urdf_xml))
        self.controller = core.Controller(self.solver, merger, self._settings(p))
        self.get_logger().info(
            f"{base.name}: chain {base.base_link} -> {base.tip_link}, {base.dof} joints "
            f"{list(base.joint_names)}; backend '{p['backend']}', commands for "
            f"{self.command_names}")
        if base.mimic_joints:
            self.get_logger().info(f"mimic joints {list(base.mimic_joints)} follow their "
                                   "master joints; their joint states are ignored")
        for note in base.warnings:
            self.get_logger().warning(f"robot description: {note}")
        for link, (mass, com, inertia) in self.payloads.items():
            self.outputs.publish_payload(link, mass, com, inertia, self._stamp_now())

    def _build_solvers(self, payloads):
        """(model, solver, checker) for the URDF chain with `payloads`, warmed up. Takes
        tens of ms (code generation): never call it holding the lock."""
        built = build_solver_set(self.urdf_model, payloads,
                                 self.get_parameter("backend").value)
        if built.checker is None and self.cross_check_off is None:
            self.get_logger().warning(f"cross-check off: {built.checker_missing}")
        self.cross_check_off = self.cross_check_off or built.checker_missing or None
        return built.model, built.solver, built.checker

    def _settings(self, values):
        return controller_settings(values, self.model, self.solver)

    @_exclusive
    def _on_description(self, msg):
        if self.model is not None:
            return
        try:
            self._configure(msg.data)
        except (RoboDynamicsError, ValueError) as exc:
            self.get_logger().error(f"robot description rejected: {exc}")

    def _values(self):
        return parameters.read(self, parameters.DYNAMICS_NODE)

    @_exclusive
    def _validate_parameters(self, changed):
        dof = self.model.dof if self.model is not None else None
        values = {p.name: p.value for p in changed}
        pair = ("contact_thresholds", "collision_thresholds")
        if any(name in values for name in pair):       # checked together: one may be unset
            current = parameters.read(self, {name: parameters.DYNAMICS_NODE[name]
                                             for name in pair})
            values = {**current, **values}
            if dof is not None:                        # the defaults, explicitly
                defaults = thresholds(None, None, self.model.effort_limit)
                for name, default in zip(pair, defaults):
                    if values[name] is None:
                        values[name] = default.tolist()
        if dof is None:   # before the model is known only the shape-free checks apply
            values = {k: v for k, v in values.items() if k not in parameters.PER_JOINT}
            dof = 1
        reason = parameters.validate(values, dof)
        return SetParametersResult(successful=reason is None, reason=reason or "")

    @_exclusive
    def _apply_parameters(self, _changed):
        self._restart_timers()
        if self.controller is not None:
            values = self._values()
            self.controller.configure(self._settings(values))
            self.wrench_damping = values["wrench_damping"]

    def _restart_timers(self):
        rates = {"cross_check": (self.get_parameter("cross_check_rate").value, self._cross_check),
                 "markers": (self.get_parameter("marker_rate").value, self._publish_markers),
                 "diagnostics": (self.get_parameter("diagnostics_rate").value,
                                 self._publish_diagnostics)}
        for name, (rate, callback) in rates.items():
            timer = self._periodic.pop(name, None)
            if timer is not None:
                self.destroy_timer(timer)
            if rate > 0.0:
                self._periodic[name] = self.create_timer(1.0 / rate, callback)

    def _publish_diagnostics(self):
        diagnostics.publish(self, self.outputs.diagnostics)

    # -- the hot path ------------------------------------------------------------------------
    def _on_joint_state(self, msg):
        if self._model_changes:
            self._apply_due_model_changes()
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
        self.callback_seconds.append(time.perf_counter() - started)
        if self.controller.observer_seconds:
            self.observer_seconds.append(self.controller.observer_seconds)
            self.controller.observer_seconds = 0.0

    def _handle_joint_state(self, msg, started):
        now = self.now()
        try:
            stamp = msg.header.stamp
            cycle = self.controller.step(msg.name, msg.position, msg.velocity, msg.effort, now,
                                         stamp.sec + 1e-9 * stamp.nanosec)
        except Exception as exc:  # a numerical failure must not take the node down
            self.computation_failed(exc)
            return
        if cycle.rejected is not None:
            self.rejected_reason = cycle.rejected
            self.get_logger().warning(
                f"joint_states rejected ({self.controller.merger.rejected} so far): "
                f"{cycle.rejected}", throttle_duration_sec=THROTTLE)
            return
        self.received += 1
        self.input_rate.received(now)
        for event in cycle.events:
            self.report(event)
        if cycle.command is not None:
            try:
                self._publish(msg.header.stamp, cycle, now, started)
            except Exception as exc:
                self.computation_failed(exc)
            if self._recording is not None:
                self._record(now)
        if self._cross_check_due or self._cross_check_steps is not None:
            self._cross_check_step()
        return cycle.command is not None

    def _record(self, now):
        """Give the state to the identification's PoseRecording, or end it when the arm has
        left its plan (a hold, another desired motion)."""
        run, controller = self._recording, self.controller
        if run.trajectory is None or (controller.motion is run.trajectory
                                      and controller.mode == core.TRACKING):
            merger = controller.merger
            run.add(now, merger.q, merger.qd, controller.measured_torque())
        else:
            run.interrupted = (f"safe hold: {controller.hold_reason}" if controller.mode ==
                               core.HOLD else "another desired motion replaced the poses")
            self._recording = None
            self._model_changes.clear()

    def _simulated_time(self):
        """Whether /clock drives the node's clock (the joint-state thread's)."""
        clock = self.get_clock() if self.joint_states is None else self.joint_states.clock
        return bool(getattr(clock, "ros_time_is_active", False))

    def _apply_due_model_changes(self):
        """Swap in the model changes scheduled for now or earlier (schedule_model_change).
        On simulated time one not ready yet is waited for (outside the lock): it then takes
        effect on the same state on every machine. On the system clock it takes effect on
        the first state after it is ready: a joint state never waits for one."""
        now = self.now()
        while self._model_changes and self._model_changes[0].at <= now:
            item = self._model_changes[0]
            if not item.change.done():
                if not self._simulated_time():
                    return
                try:
                    item.change.result(timeout=MODEL_CHANGE_WAIT)
                except concurrent.futures.TimeoutError:
                    self.get_logger().error(f"a model change due at t = {item.at:.3f} s was "
                                            f"not ready after {MODEL_CHANGE_WAIT:g} s: "
                                            "skipped")
                    _resolve(item.change, None)
            self._commit_scheduled(item)

    def _commit_scheduled(self, item):
        """Take `item` off the schedule and swap its change in (once, whichever thread
        comes first); item.done then holds the sentence (None: nothing changed)."""
        with self.lock:
            if item not in self._model_changes:
                return
            self._model_changes.remove(item)
        change = item.change.result() if item.change.done() else None
        try:
            item.done.set_result(None if change is None else self._commit_payload(change))
        except Exception as exc:
            item.done.set_exception(exc)

    def schedule_model_change(self, at):
        """A ScheduledChange: set its `change` Future to a prepared payload change
        (prepare_payload) or None when it is ready; it takes effect at node time `at` [s]
        (in the order scheduled), then `done` holds its sentence."""
        item = ScheduledChange(at, concurrent.futures.Future(), concurrent.futures.Future())
        self._model_changes.append(item)
        return item

    def await_model_change(self, item, timeout=MODEL_CHANGE_WAIT):
        """The sentence of a scheduled change once in effect (None: no change). Without
        joint states to carry it for `timeout` s of wall time, it is swapped in now."""
        try:
            return item.done.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self._commit_scheduled(item)
            return item.done.result(timeout=0) if item.done.done() else None

    def end_model_changes(self, items):
        """Drop the changes of `items` still scheduled (an identification ended), none left
        unresolved for the joint-state thread to wait for."""
        for item in items:
            _resolve(item.change, None)
        with self.lock:
            for item in items:
                if item in self._model_changes:
                    self._model_changes.remove(item)

    def _publish(self, stamp, cycle, now, started):
        """The cycle's outputs (ros/outputs.py), the command first. started: perf_counter
        at the callback's start (the command's time is timed from it)."""
        self.outputs.publish_command(stamp, cycle, now)
        self.command_seconds.append(time.perf_counter() - started)
        result = self.outputs.publish_rest(stamp, cycle, self.controller, self.wrench_damping)
        if result is not None:         # Λ subscribed: /diagnostics need not compute it
            self.last_condition, self.last_near_singular = (result.condition_number,
                                                            result.near_singular)
            self.condition_at = now

    def computation_failed(self, exc, what="dynamics"):
        """Count and report (throttled) a computation or publication that raised."""
        if not self.context.ok():   # shutting down (Ctrl-C): publishing fails, nothing to say
            return
        self.errors += 1
        self.get_logger().error(f"{what} failed ({self.errors} errors so far): {exc}",
                                throttle_duration_sec=THROTTLE)

    def report(self, event):
        """Log a controller event and publish it on ~/events."""
        logger = self.get_logger()     # one call site per severity (rclpy requires it)
        if event.kind == "refused":     # a caller can send these as fast as it likes
            logger.warning(event.message, throttle_duration_sec=THROTTLE)
        elif event.level == core.ERROR:  # transitions: rare by nature
            logger.error(event.message)
        elif event.level == core.WARN:
            logger.warning(event.message)
        else:
            logger.info(event.message)
        self.outputs.publish_event(event, self.controller.mode, self._stamp_now())

    # -- desired motion ----------------------------------------------------------------------
    def _on_trajectory(self, msg):
        """A desired trajectory: converted to a spline outside the node's lock (milliseconds
        for hundreds of points, which a joint state must not wait for), admitted under it."""
        if self.controller is None:
            return
        now, names = self.now(), list(self.model.joint_names)
        try:
            motion = conversions.trajectory_from_msg(msg, names, now)
        except ValueError as exc:
            motion, reason = None, f"desired trajectory rejected: {exc}"
        with self.lock:
            if motion is not None and list(self.model.joint_names) != names:
                motion, reason = None, ("desired trajectory rejected: the robot description "
                                        "changed while it was read")
            self.report(self.controller.desire(motion, now) if motion is not None
                         else self.controller.refuse(reason))

    @_exclusive
    def _on_set_point(self, msg):
        if self.controller is None:
            return
        try:
            index = order_of(list(msg.name), self.model.joint_names,
                                         "desired_state name")
            n = self.model.dof
            q = conversions.vector(msg.position, n, "desired_state position")[index]
            qd = conversions.vector(msg.velocity, n, "desired_state velocity", True)
            qd = qd[index] if len(msg.velocity) else qd
        except ValueError as exc:
            self.report(self.controller.refuse(f"desired state rejected: {exc}"))
            return
        self.report(self.controller.desire(SetPoint(q, qd), self.now()))

    def _cross_check_step(self):
        """One step of the cross-check per joint state (one quantity on one backend), after
        that state's outputs are published and on the normal scheduler (giving_way): a
        cross-check never delays a command nor keeps a core from the process waiting for
        it; it is spread over the next 2 len(CROSS_CHECKED) states, at the state taken when
        it began."""
        steps = self._cross_check_steps
        if steps is None:
            merger = self.controller.merger
            if self.checker is None or not merger.complete():
                return
            self._cross_check_due = False
            steps = self._cross_check_steps = CrossCheckSteps(
                self.checker, self.solver, merger.q, merger.qd, np.zeros(self.model.dof),
                CROSS_CHECKED)
        try:
            with self.joint_states.giving_way():
                steps.step()
        except Exception as exc:
            self._cross_check_steps = None
            self.computation_failed(exc, "cross-check")
            return
        if steps.done:
            self.cross_check_result = steps.report
            self._cross_check_steps = None

    # -- periodic work -------------------------------------------------------------------------
    def _cross_check(self):
        """The cross-check timer only asks for one: the joint-state thread does it."""
        self._cross_check_due = True

    def _publish_markers(self):
        """~/markers and ~/tip_wrench at marker_rate. The dynamics under the node's lock (the
        solver is the joint-state thread's too); building and publishing the messages, most
        of the time (about half a millisecond), outside it, so that a joint state never
        waits for them."""
        with self.lock:
            if self.controller is None or not self.controller.running:
                return
            try:
                q, model, solver = self.controller.merger.q.copy(), self.model, self.solver
                R_tip, p_tip = solver.tip_pose(q)
                result = solver.operational_space(q, np.zeros_like(q))
                tau_g = solver.gravity(q)
            except Exception as exc:
                self.computation_failed(exc, "markers")
                return
        try:
            header = Header(stamp=self.get_clock().now().to_msg(), frame_id=model.base_link)
            if np.all(np.isfinite(result.Lambda)):
                self.outputs.markers.publish(
                    markers.marker_array(header, model, p_tip, result.Lambda, tau_g))
            wrench = R_tip.T @ result.gravity_wrench[:3], R_tip.T @ result.gravity_wrench[3:]
            msg = WrenchStamped(header=Header(stamp=header.stamp, frame_id=model.tip_link))
            (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = wrench[0].tolist()
            (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = wrench[1].tolist()
            if np.all(np.isfinite(result.gravity_wrench)):
                self.outputs.tip_wrench.publish(msg)
        except Exception as exc:
            with self.lock:
                self.computation_failed(exc, "markers")

    # -- payloads -------------------------------------------------------------------------
    def apply_payload(self, link, mass, com, inertia):
        """Make (mass [kg], com (3,) [m], inertia (3, 3) [kg·m²] about the centre of mass, in
        `link`'s frame) the payload at `link` (mass 0: none), now. Validates, builds the new
        solvers outside the lock (code generation takes tens of ms: the command stream goes
        on meanwhile), then swaps them in; the command ramps to the new target. Returns a
        sentence; ValueError with the reason."""
        return self._commit_payload(self.prepare_payload(link, mass, com, inertia))

    def prepare_payload(self, link, mass, com, inertia):
        """The change that makes (mass, com, inertia) the payload at `link` (apply_payload),
        validated and built, not yet in use: for _commit_payload. ValueError."""
        if not self.get_parameter("allow_model_changes").value:
            raise ValueError("model changes are disabled (parameter allow_model_changes is "
                             "false)")
        with self.lock:
            if self.controller is None:
                raise ValueError("no robot description yet")
            payloads = dict(self.payloads)
        self.check_payload_mass(mass)
        self.urdf_model.with_payload(link, mass, com, inertia)    # validates
        payloads[link] = (mass, list(com), np.asarray(inertia, dtype=float))
        built = self._build_solvers(payloads)
        message = (f"payload of {mass:.6g} kg at '{link}'" if mass > 0
                   else f"payload at '{link}' removed")
        return payloads, built, (link, mass, com, inertia), message

    def _commit_payload(self, change):
        """Swap in a prepared payload change; its sentence."""
        payloads, built, (link, mass, com, inertia), message = change
        with self.lock:
            self.payloads = payloads
            self.model, self.solver, self.checker = built
            event = self.controller.replace_solver(self.solver, message)
            self.controller.configure(self._settings(self._values()))
            self.cross_check_result = {}
            self._cross_check_steps = None
        self.report(event)
        self.outputs.publish_payload(link, mass, com, inertia, self._stamp_now())
        return message

    def check_payload_mass(self, mass):
        """ValueError unless 0 <= mass <= max_payload_mass [kg], finite."""
        limit = self.get_parameter("max_payload_mass").value
        if not (math.isfinite(mass) and 0.0 <= mass <= limit):
            raise ValueError(f"mass must be finite, >= 0 and <= max_payload_mass ({limit} kg), "
                             f"got {mass}")

    # -- payload identification (the action: identification_action.py) -----------------------
    def begin_pose_recording(self, goal):
        """Plan the poses of an IdentifyPayload goal and start driving the arm through them:
        (PoseRecording, the solver to fit with: the arm without a payload at goal.link, the
        payload in use at goal.link: (mass, com, inertia) or None). ValueError with the
        reason."""
        timing = (goal.move_time or 3.0, goal.settle_time or 1.0, goal.record_time or 1.0)
        with self.lock:
            controller, model = self.controller, self.model
            if controller is None:
                raise ValueError("no robot description yet")
            if self._recording is not None:
                raise ValueError("an identification is already under way")
            model.payload_frame(goal.link)        # a moving link or the tip, else refused
            if goal.tare and goal.use_tare:
                raise ValueError("tare and use_tare exclude each other")
            if goal.duration and (goal.tare or goal.use_tare):
                raise ValueError("a tare is recorded at poses: not with duration")
            if not 0.0 <= goal.duration <= MAX_RECORD_SECONDS:
                raise ValueError(f"duration must be 0 (poses) or up to {MAX_RECORD_SECONDS} s, "
                                 f"got {goal.duration}")
            if goal.use_tare and self._tare is None:
                raise ValueError("use_tare: no tare recorded yet (a goal with tare: true)")
            if not controller.running:
                raise ValueError("no fresh joint states: the arm is not under control")
            missing = [name for name, tau in zip(model.joint_names,
                                                 controller.measured_torque()) if tau != tau]
            if missing:
                raise ValueError(f"the joint states carry no effort for {missing}: nothing "
                                 "to identify from")
            payloads = {k: v for k, v in self.payloads.items() if k != goal.link}
            original = self.payloads.get(goal.link)
            q = controller.merger.q.copy()
        fit_solver = make_solver(model_with(self.urdf_model, payloads), "rnea")   # code generation:
        changes = not goal.tare and self.get_parameter("allow_model_changes").value
        if goal.duration:                                              # outside the lock
            with self.lock:
                run = self._recording = TimedRecording(self.now(), goal.duration)
                return run, fit_solver, original, self._schedule_changes(run, [])
        poses = self._identification_poses(goal, q, fit_solver)
        with self.lock:
            now = self.now()
            run = PoseRecording(self.controller.merger.q, poses, now, *timing)
            fault = self._too_fast(run.trajectory)
            event = (self.controller.refuse(f"identification poses refused: {fault}") if fault
                     else self.controller.desire(run.trajectory, now))
            if event.kind == "tracking":
                self._recording = run
                refinements = [end for _, end in run.windows[:-1]] if changes else []
                scheduled = self._schedule_changes(run, refinements)
        self.report(event)
        if event.kind != "tracking":
            raise ValueError(event.message)
        return run, fit_solver, original, scheduled

    def _schedule_changes(self, run, refinements):
        """The model changes of an identification, each MODEL_CHANGE_DELAY after the data it
        rests on: a provisional payload after each recorded pose but the last (`refinements`:
        their window ends), then the result: (list of ScheduledChange, the result's)."""
        return ([self.schedule_model_change(end + MODEL_CHANGE_DELAY) for end in refinements],
                self.schedule_model_change(run.end + MODEL_CHANGE_DELAY))

    def _too_fast(self, trajectory):
        """Why a planned identification motion is too fast (a joint beyond
        IDENTIFY_VELOCITY_SHARE of its velocity bound), or None."""
        times = np.arange(0.0, trajectory.times[-1], 0.01)
        _, qd, _ = trajectory.sample_many(times)
        bound = self.controller.settings.velocity_bound
        peak = np.abs(qd).max(axis=0) if len(times) else np.zeros(len(bound))
        over = np.flatnonzero(peak > IDENTIFY_VELOCITY_SHARE * bound)
        if not over.size:
            return None
        j = over[0]
        return (f"'{self.model.joint_names[j]}' would move at {peak[j]:.3g} rad/s, beyond "
                f"{IDENTIFY_VELOCITY_SHARE:.0%} of its velocity bound {bound[j]:.3g}: give "
                "a longer move_time or closer poses")

    def refine_pose_recording(self, run, pose, fit_solver, goal, original, item):
        """After pose `pose` (0-based) is recorded, before the last: set item.change (a
        ScheduledChange of begin_pose_recording) to the payload the states of the poses so far suggest
        (provisional_payload, at most max_payload_mass; the centre of mass of `original`,
        the payload declared at the link before, until the poses show it), prepared, or
        None. It takes effect MODEL_CHANGE_DELAY after that pose's window, on the same
        joint state on every machine when the time is simulated, so that the arm carries
        the payload better on the next moves: an unknown payload gives light wrist joints
        tracking errors."""
        change = None
        try:
            if not run.samples:              # nothing recorded yet (the states stopped)
                return
            q, qd, tau, index = run.arrays()
            mine = index <= pose
            guess = provisional_payload(fit_solver, goal.link, q[mine], qd[mine],
                                        np.zeros_like(q[mine]), tau[mine],
                                        (0.0, 0.0, 0.0) if original is None else original[1],
                                        index[mine])
            if guess is not None:
                mass = min(guess[0], self.get_parameter("max_payload_mass").value)
                change = self.prepare_payload(goal.link, mass, guess[1], np.zeros((3, 3)))
        finally:
            _resolve(item.change, change)

    def restore_payload(self, link, payload):
        """Put back the payload (mass, com, inertia) or none (None) at `link`, unless it is
        still the one in use."""
        with self.lock:
            unchanged = self.payloads.get(link) is payload
        if not unchanged and self.get_parameter("allow_model_changes").value:
            self.apply_payload(link, *(payload or (0.0, np.zeros(3), np.zeros((3, 3)))))

    def _identification_poses(self, goal, q, solver):
        """The goal's poses (K, n) in model order: given, the tare's, or chosen."""
        names, n = self.model.joint_names, self.model.dof
        if goal.poses.points:
            if len(goal.poses.points) > MAX_POSES:
                raise ValueError(f"at most {MAX_POSES} poses, got {len(goal.poses.points)}")
            index = order_of(list(goal.poses.joint_names), names, "poses joint_names")
            poses = np.array([conversions.vector(point.positions, n,
                                                 f"poses point {k} positions")[index]
                              for k, point in enumerate(goal.poses.points)])
            if goal.use_tare and not np.allclose(poses, self._tare[0], atol=1e-6):
                raise ValueError("use_tare: the poses must be the tare's (or empty)")
            return poses
        if goal.use_tare:
            return self._tare[0]
        count = goal.pose_count or DEFAULT_POSES
        if not 2 <= count <= MAX_POSES:
            raise ValueError(f"pose_count must be 2 to {MAX_POSES}, got {count}")
        # consecutive poses up to 2 × spread apart, a quintic move's peak speed 15/8 of the
        # mean: every move well inside IDENTIFY_VELOCITY_SHARE of the velocity bound
        reach = (0.9 * IDENTIFY_VELOCITY_SHARE * self.controller.settings.velocity_bound
                 * (goal.move_time or 3.0) / (2.0 * 15.0 / 8.0))
        return static_poses(solver, goal.link, q, np.minimum(pose_spread(n), reach), count)

    def end_pose_recording(self, run):
        """Stop recording (cancel); when the node drove the arm through poses, it holds
        where it is."""
        with self.lock:
            if self._recording is not run:
                return
            self._recording = None
            if run.trajectory is None:
                return
            merger = self.controller.merger
            event = self.controller.desire(SetPoint(merger.q.copy(), np.zeros(self.model.dof)),
                                           self.now())
        self.report(event)

    def finish_pose_recording(self, run, fit_solver, goal, result, final):
        """After the recording: keep the tare, or fit the payload (and apply it through
        `final`, the ScheduledChange due MODEL_CHANGE_DELAY after the recording). Fills the
        IdentifyPayload result; returns its message. ValueError with the reason."""
        with self.lock:
            if self._recording is run:
                self._recording = None
        if run.trajectory is None:            # recorded while the arm moved: q̈ from q̇
            times, q, qd, tau = run.arrays()
            qd, qdd = velocities_and_accelerations(times, q, qd)
            estimate = self.background.submit(identify_payload, fit_solver, goal.link, q, qd,
                                               qdd, tau, None, goal.estimate_inertia).result()
            return self._identified(estimate, goal, result, final)
        if run.interrupted:
            hint = ("; an unknown payload can pull light joints off the poses: declare an "
                    "approximate one first (~/set_payload) or raise kp"
                    if "tracking error" in run.interrupted else "")
            raise ValueError(f"the poses were interrupted: {run.interrupted}{hint}")
        q, qd, tau, pose = run.arrays()
        if goal.tare:
            self._tare = (run.poses, run.pose_means())
            return f"tare recorded at {len(run.poses)} poses ({len(q)} joint states)"
        tare = self._tare[1][pose] if goal.use_tare else None
        estimate = self.background.submit(identify_payload, fit_solver, goal.link, q, qd,
                                           np.zeros_like(q), tau, tare, False, pose).result()
        return self._identified(estimate, goal, result, final)

    def _identified(self, estimate, goal, result, final):
        """Fill the IdentifyPayload result from a PayloadEstimate, apply it if asked (through
        the ScheduledChange `final`); its message."""
        conversions.fill_inertia(result.payload, estimate.mass, estimate.com, estimate.inertia)
        result.mass_std = estimate.mass_std
        result.com_std.x, result.com_std.y, result.com_std.z = estimate.com_std.tolist()
        result.inertia_identified = estimate.inertia_identified
        result.condition_number = estimate.condition_number
        result.joint_names = list(self.model.joint_names)
        result.rms_before = estimate.rms_before.tolist()
        result.rms_after = estimate.rms_after.tolist()
        result.samples = estimate.samples
        message = (f"{estimate.mass:.4g} ± {estimate.mass_std:.2g} kg at "
                   f"{np.array2string(estimate.com, precision=4)} m in '{goal.link}' "
                   f"({estimate.reason})")
        if goal.apply:      # what the fit cannot tell from zero is applied as zero: on a light
            # last joint a tenth of a millimetre of centre of mass off its axis is a pull
            found = np.abs(estimate.com) > SIGNIFICANT * estimate.com_std
            try:
                final.change.set_result(self.prepare_payload(
                    goal.link, estimate.mass, np.where(found, estimate.com, 0.0),
                    estimate.inertia))
            except Exception:
                _resolve(final.change, None)
                raise
            self.await_model_change(final)
            result.applied = True
            zeroed = [axis for axis, f in zip("xyz", found) if not f]
            message += "; applied" + (f" (centre of mass {', '.join(zeroed)} within "
                                      f"{SIGNIFICANT:g} standard deviations of 0: applied "
                                      "as 0)" if zeroed else "")
        return message

    def _stamp_now(self):
        """The node's clock (now) as a builtin_interfaces/Time."""
        return Time(nanoseconds=round(self.now() * 1e9)).to_msg()

    def now(self):
        """The node's clock in seconds. Without simulated time that is the system clock
        (CLOCK_REALTIME, as rcl reads it), read directly: rclpy's Clock.now() is slower
        (BENCHMARKS.md, "Design measurements"). Whether /clock drives the clock is re-read
        with the subscriber counts (every outputs.REFRESH s). With /clock, the joint-state thread's
        clock: it has taken the /clock message sent before the state (joint_state_thread.py)."""
        if self.outputs.system_time:
            return time.time()
        clock = self.get_clock() if self.joint_states is None else self.joint_states.clock
        return clock.now().nanoseconds * 1e-9



ScheduledChange = collections.namedtuple("ScheduledChange", ["at", "change", "done"])
ScheduledChange.__doc__ = """A model change due at node time `at` [s]: `change` (a Future of
prepare_payload's change or None), `done` (a Future of the sentence once in effect)."""


def _resolve(future, value):
    """Set `future` to `value` unless it is set already (two threads may try)."""
    try:
        future.set_result(value)
    except concurrent.futures.InvalidStateError:
        pass


def pose_spread(n):
    """How far [rad or m] chosen identification poses go from the current pose, per joint:
    the two wrist joints before the last turn the payload against gravity in every
    direction; the last joint, the lightest, stays (the payload's unknown inertia would pull
    it off the moves), the others stay near."""
    spread = np.full(n, 0.2)
    spread[-3:-1] = 0.6
    spread[-1] = 0.0
    return spread


def _lower_priority():
    """Lower the calling thread's scheduling priority by BACKGROUND_NICE (Linux: nice is per
    thread). Raising it back would need privileges: only for threads that stay background."""
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread,
                       os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICE)
    except OSError:
        pass         # not permitted here: the thread runs at the process's priority


def _joint_names_of(urdf_xml):
    import xml.etree.ElementTree as ET
    return [joint.get("name") for joint in ET.fromstring(urdf_xml).iter("joint")]


def main(args=None):
    return run(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())

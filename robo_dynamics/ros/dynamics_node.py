"""dynamics_node: joint states in; gravity compensation, computed torque and Λ out.

Subscribes  joint_states (sensor_msgs/JointState, merged by name from any publishers)
            ~/desired_trajectory (trajectory_msgs/JointTrajectory)
            ~/desired_state (sensor_msgs/JointState: a set-point, positions [+ velocities])
            robot_description (std_msgs/String, transient local; only when no parameter
            gives the description)
Publishes   ~/gravity_torques (JointState, effort), ~/gravity_command (Float64MultiArray,
            command_joints order), ~/computed_torques, ~/computed_torque_command (the same two
            forms, only while a desired trajectory or set-point exists),
            ~/operational_space_inertia (OperationalSpaceInertia), ~/markers (MarkerArray),
            ~/tip_wrench (WrenchStamped), /diagnostics (DiagnosticArray)
Services    ~/inverse_dynamics, ~/forward_dynamics, ~/compute_dynamics, ~/set_payload
The node converts messages, holds parameters and calls the library; it never crashes on
what it receives: bad input is rejected, counted and reported. joint_states is taken on a
thread of its own (joint_state_thread.py); the node's lock serialises the two threads.
"""

import collections
import functools
import math
import sys
import threading
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock_type import ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header, String
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robo_dynamics_interfaces.msg import OperationalSpaceInertia
from robo_dynamics_interfaces.srv import (ComputeDynamics, ForwardDynamics, InverseDynamics,
                                          SetPayload)

from .. import load_robot, make_solver
from ..algorithms.jacobian import LOCAL_WORLD_ALIGNED
from ..algorithms.operational_space import operational_space
from ..backends.cross_check import cross_check
from ..control.computed_torque import commanded_acceleration
from ..control.friction import friction_torque
from ..control.joint_state_merger import JointStateMerger
from ..control.limits import clamp_effort, effort_bounds
from ..control.trajectory import SetPoint
from ..errors import RoboDynamicsError
from ..spatial.inertia import inertia_tensor
from . import conversions, markers, parameters
from .effort_output import EffortOutput
from .joint_state_thread import JointStateThread
from .spin import run

CROSS_CHECKED = ("inverse_dynamics", "gravity", "coriolis_qd", "mass_matrix", "jacobian",
                 "operational_space_inertia")
CONDITION_CAP = 1e300     # what a message carries for an exactly singular pose
THROTTLE = 2.0            # seconds between repeated warnings
REFRESH = 0.1             # seconds between readings of subscriber counts and clock source
OPTIONAL_FIELDS = ("velocities", "accelerations")   # empty in a request means zero


def _service(fill):
    """Wrap a service body: it fills the response and may return its message; any exception
    becomes success = false with the reason, and the node carries on."""
    @functools.wraps(fill)
    def handler(self, request, response):
        try:
            with self._lock:
                message = fill(self, request, response)
        except Exception as exc:
            return type(response)(success=False, message=str(exc) or type(exc).__name__)
        response.success, response.message = True, message or "ok"
        return response
    return handler


def _exclusive(callback):
    """Run a callback holding the node's lock: the joint-state thread and the main executor
    never interleave their work on the node's state."""
    @functools.wraps(callback)
    def locked(self, *args):
        with self._lock:
            return callback(self, *args)
    return locked


class DynamicsNode(Node):
    """The live dynamics of one arm; see the module docstring for its interface."""

    def __init__(self, **kwargs):
        super().__init__("dynamics_node", **kwargs)
        self._lock = threading.RLock()
        for name, (default, kind, _, _) in parameters.PARAMETERS.items():
            value = default if default is not None else _UNSET[kind]
            self.declare_parameter(name, value, parameters.descriptor(name))
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)

        self.received = 0          # accepted joint-state messages
        self.rejected_reason = ""
        self.clamped = 0           # commands that hit an effort limit
        self.errors = 0            # computations that raised (counted, never fatal)
        self.stale = False
        self.joint_states = None   # the joint-state thread, started at the end of __init__
        self.trajectory = None
        self.last_condition = math.nan
        self.last_near_singular = False
        self.cross_check_result = {}
        self.rate_window = collections.deque(maxlen=20_000)  # receipt times of accepted messages
        self.callback_seconds = collections.deque(maxlen=2000)   # joint_states callback times
        self.model = self.solver = self.checker = self.merger = None

        # outputs without rclpy's default QoS-event handlers: each is an entity the executor
        # polls on every message (≈ 4 µs apiece here); a subscriber with incompatible QoS is
        # still reported, by its own node
        output = functools.partial(self.create_publisher,
                                   event_callbacks=PublisherEventCallbacks(
                                       use_default_callbacks=False))
        self.pub_gravity = output(JointState, "~/gravity_torques", 10)
        self.pub_gravity_cmd = output(Float64MultiArray, "~/gravity_command", 10)
        self.pub_ct = output(JointState, "~/computed_torques", 10)
        self.pub_ct_cmd = output(Float64MultiArray, "~/computed_torque_command", 10)
        self.pub_lambda = output(OperationalSpaceInertia, "~/operational_space_inertia", 10)
        self.pub_markers = output(MarkerArray, "~/markers", 1)
        self.pub_wrench = output(WrenchStamped, "~/tip_wrench", 1)
        self.pub_diagnostics = output(DiagnosticArray, "/diagnostics", 10)
        self._subscribed = dict.fromkeys((self.pub_gravity, self.pub_gravity_cmd, self.pub_ct,
                                          self.pub_ct_cmd, self.pub_lambda), False)
        self._refreshed_at = -math.inf
        self._system_time = False      # until _refresh has looked at the clock

        self.create_subscription(JointTrajectory, "~/desired_trajectory", self._on_trajectory, 10)
        self.create_subscription(JointState, "~/desired_state", self._on_set_point, 10)
        self.create_service(InverseDynamics, "~/inverse_dynamics", self._srv_inverse_dynamics)
        self.create_service(ForwardDynamics, "~/forward_dynamics", self._srv_forward_dynamics)
        self.create_service(ComputeDynamics, "~/compute_dynamics", self._srv_compute_dynamics)
        self.create_service(SetPayload, "~/set_payload", self._srv_set_payload)

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
        self.pub_markers.publish(MarkerArray())
        # the hot path, on a thread of its own (joint_state_thread.py). Depth 10: a node that
        # falls behind skips to recent states instead of controlling from a backlog of old ones
        self.joint_states = JointStateThread(self, JointState, "joint_states",
                                             self._on_joint_state, 10,
                                             self.get_parameter("thread_priority").value)

    def destroy_node(self):
        if getattr(self, "joint_states", None) is not None:
            self.joint_states.stop()
        return super().destroy_node()

    # -- configuration ---------------------------------------------------------------------
    def _configure(self, description):
        """Load the chain and build everything that depends on it. Raises on a bad model."""
        p = self._values()
        base = load_robot(description, base_link=p["base_link"] or None,
                          tip_link=p["tip_link"] or None, gravity=p["gravity"])
        reason = parameters.validate(p, base.dof)
        if reason:
            raise ValueError(f"invalid parameter: {reason}")
        command = p["command_joints"] or list(base.joint_names)
        missing = [name for name in command if name not in base.joint_names]
        if missing or len(set(command)) != len(command):
            raise ValueError(f"command_joints must be distinct chain joints; not in the chain: "
                             f"{missing} (chain: {list(base.joint_names)})")
        self.urdf_model = base
        self.payloads = {}
        if p["payload_link"]:
            self.payloads[p["payload_link"]] = (p["payload_mass"], p["payload_com"],
                                                inertia_tensor(*p["payload_inertia"]))
        self.command_names = list(command)
        self.command_index = np.array([base.joint_index(name) for name in command])
        if np.array_equal(self.command_index, np.arange(base.dof)):
            self.command_index = None      # commands in model order: no reordering
        self.merger = JointStateMerger(base.joint_names, _joint_names_of(base.urdf_xml))
        # messages reused on every cycle (the hot path only fills in numbers)
        n = len(command)
        self.out_gravity = (
            self.pub_gravity, EffortOutput(JointState(name=self.command_names), "effort", n),
            self.pub_gravity_cmd, EffortOutput(Float64MultiArray(), "data", n))
        self.out_ct = (
            self.pub_ct, EffortOutput(JointState(name=self.command_names), "effort", n),
            self.pub_ct_cmd, EffortOutput(Float64MultiArray(), "data", n))
        self.out_lambda = OperationalSpaceInertia(
            header=Header(frame_id=base.base_link), tip_frame=base.tip_link)
        self._rebuild_solvers()
        self._apply_parameters(None)
        self.get_logger().info(
            f"{base.name}: chain {base.base_link} -> {base.tip_link}, {base.dof} joints "
            f"{list(base.joint_names)}; backend '{p['backend']}', commands for "
            f"{self.command_names}")

    def _rebuild_solvers(self):
        model = self.urdf_model
        for link, (mass, com, inertia) in self.payloads.items():
            if mass > 0.0:
                model = model.with_payload(link, mass, com, inertia)
        backend = self.get_parameter("backend").value
        other = "rnea" if backend == "pinocchio" else "pinocchio"
        solver, checker = make_solver(model, backend), make_solver(model, other)
        # first calls compile code and load libraries (tens of ms): do them now, not in the
        # middle of a command stream
        zero = np.zeros(model.dof)
        cross_check(checker, solver, zero, zero, zero, CROSS_CHECKED)
        solver.rnea(zero, zero, zero)
        solver.gravity(zero)
        operational_space(solver.jacobian(zero), M_inv=solver.mass_matrix_inverse(zero))
        self.model, self.solver, self.checker = model, solver, checker

    @_exclusive
    def _on_description(self, msg):
        if self.model is not None:
            return
        try:
            self._configure(msg.data)
        except (RoboDynamicsError, ValueError) as exc:
            self.get_logger().error(f"robot description rejected: {exc}")

    def _values(self):
        out = {}
        for name in parameters.PARAMETERS:
            try:
                out[name] = self.get_parameter(name).value
            except ParameterUninitializedException:
                out[name] = None
        for name in ("gravity", "payload_com", "payload_inertia", "kp", "kd"):
            out[name] = list(out[name])
        return out

    @_exclusive
    def _validate_parameters(self, changed):
        dof = self.model.dof if self.model is not None else None
        values = {p.name: p.value for p in changed}
        if dof is None:   # before the model is known only the shape-free checks apply
            values = {k: v for k, v in values.items()
                      if k not in ("kp", "kd", "viscous_friction", "coulomb_friction")}
            dof = 1
        reason = parameters.validate(values, dof)
        return SetParametersResult(successful=reason is None, reason=reason or "")

    @_exclusive
    def _apply_parameters(self, _changed):
        p = self._values()
        self._restart_timers()
        if self.model is None:
            return
        n = self.model.dof
        self.Kp = np.array(parameters.per_joint(p["kp"], n, "kp"))
        self.Kd = np.array(parameters.per_joint(p["kd"], n, "kd"))
        self.bound = effort_bounds(self.model.effort_limit, p["torque_limit_scale"])
        self.stale_timeout = p["stale_timeout"]
        self.friction = p["friction_compensation"]
        viscous = parameters.per_joint(p["viscous_friction"], n, "viscous_friction")
        coulomb = parameters.per_joint(p["coulomb_friction"], n, "coulomb_friction")
        self.viscous = np.array(viscous) if viscous is not None else self.model.damping
        self.coulomb = np.array(coulomb) if coulomb is not None else self.model.friction

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

    # -- the hot path ------------------------------------------------------------------------
    @_exclusive
    def _on_joint_state(self, msg):
        if self.merger is None:
            return
        started = time.perf_counter()
        self._handle_joint_state(msg)
        self.callback_seconds.append(time.perf_counter() - started)

    def _handle_joint_state(self, msg):
        now = self._now()
        reason = self.merger.update(msg.name, msg.position, msg.velocity, now)
        if reason is not None:
            self.rejected_reason = reason
            self.get_logger().warning(f"joint_states rejected ({self.merger.rejected} so far): "
                                      f"{reason}", throttle_duration_sec=THROTTLE)
            return
        self.received += 1
        self.rate_window.append(now)
        if not self.merger.complete():
            return
        self.stale = self.merger.age(now) > self.stale_timeout
        if self.stale:
            return
        try:
            self._compute_and_publish(msg.header, now)
        except Exception as exc:  # a numerical failure must not take the node down
            self.errors += 1
            self.get_logger().error(f"dynamics failed ({self.errors} so far): {exc}",
                                    throttle_duration_sec=THROTTLE)

    def _compute_and_publish(self, header, now):
        """The command first (computed torque while there is a desired motion, else gravity
        compensation: what the arm is waiting for), then the other torques, then Λ. Each
        output is published only when it has a subscriber: publishing to nobody still costs
        the conversion and serialisation. Subscriber counts are re-read every REFRESH
        seconds, not per message."""
        if now - self._refreshed_at > REFRESH:
            self._refresh(now)
        solver = self.solver
        q, qd = self.merger.q, self.merger.qd     # validated by the merger
        friction = friction_torque(qd, self.viscous, self.coulomb) if self.friction else None
        if self.trajectory is not None:
            a = commanded_acceleration(q, qd, *self.trajectory.sample(now), self.Kp, self.Kd)
            tau = solver._rnea(q, qd, a, None)      # M a + C q̇ + g in one recursion
            self._publish_effort(header, tau if friction is None else tau + friction,
                                 self.out_ct)
        tau_g = solver._gravity(q)
        self._publish_effort(header, tau_g if friction is None else tau_g + friction,
                             self.out_gravity)
        result = operational_space(solver._jacobian(q, LOCAL_WORLD_ALIGNED),
                                   M_inv=solver._mass_matrix_inverse(q))
        self.last_condition, self.last_near_singular = (result.condition_number,
                                                        result.near_singular)
        if self._subscribed[self.pub_lambda] and np.isfinite(result.Lambda).all():
            msg = self.out_lambda
            msg.header.stamp = header.stamp
            msg.near_singular = result.near_singular
            msg.condition_number = min(result.condition_number, CONDITION_CAP)
            msg.lambda_matrix = result.Lambda.ravel()
            self.pub_lambda.publish(msg)

    def _publish_effort(self, header, tau, outputs):
        """Clamp to the effort limits, then publish as JointState and Float64MultiArray (each
        only when subscribed; with neither subscribed there is nothing to clamp)."""
        state_pub, state_out, command_pub, command_out = outputs
        to_state, to_command = self._subscribed[state_pub], self._subscribed[command_pub]
        if not (to_state or to_command):
            return
        tau, clamped = clamp_effort(tau, self.bound)   # raises on non-finite: not published
        self.clamped += clamped
        command = tau if self.command_index is None else tau[self.command_index]
        if to_state:
            state_out.publish(state_pub, command, header.stamp)
        if to_command:
            command_out.publish(command_pub, command)

    def _refresh(self, now):
        """Re-read what may change while running but is too dear to read per message: the
        outputs' subscriber counts and whether simulated time drives the clock."""
        self._subscribed = {pub: pub.get_subscription_count() > 0 for pub in self._subscribed}
        self._refreshed_at = now
        clock = self.get_clock()
        self._system_time = (clock.clock_type != ClockType.STEADY_TIME
                             and not getattr(clock, "ros_time_is_active", False))

    # -- desired motion ----------------------------------------------------------------------
    @_exclusive
    def _on_trajectory(self, msg):
        if self.model is None:
            return
        try:
            self.trajectory = conversions.trajectory_from_msg(msg, self.model.joint_names,
                                                              self._now())
        except ValueError as exc:
            self.get_logger().warning(f"desired trajectory rejected: {exc}",
                                      throttle_duration_sec=THROTTLE)

    @_exclusive
    def _on_set_point(self, msg):
        if self.model is None:
            return
        try:
            index = conversions.order_of(list(msg.name), self.model.joint_names,
                                         "desired_state name")
            n = self.model.dof
            q = conversions.vector(msg.position, n, "desired_state position")[index]
            qd = conversions.vector(msg.velocity, n, "desired_state velocity", True)
            qd = qd[index] if len(msg.velocity) else qd
            self.trajectory = SetPoint(q, qd)
        except ValueError as exc:
            self.get_logger().warning(f"desired state rejected: {exc}",
                                      throttle_duration_sec=THROTTLE)

    # -- periodic work -------------------------------------------------------------------------
    @_exclusive
    def _cross_check(self):
        if self.merger is None or not self.merger.complete():
            return
        q, qd = self.merger.q.copy(), self.merger.qd.copy()
        try:
            self.cross_check_result = cross_check(self.checker, self.solver, q, qd,
                                                  np.zeros_like(q), CROSS_CHECKED)
        except Exception as exc:
            self.errors += 1
            self.get_logger().error(f"cross-check failed: {exc}", throttle_duration_sec=THROTTLE)

    @_exclusive
    def _publish_markers(self):
        if self.merger is None or not self.merger.complete() or self.stale:
            return
        try:
            q = self.merger.q.copy()
            header = Header(stamp=self.get_clock().now().to_msg(), frame_id=self.model.base_link)
            R_tip, p_tip = self.solver.tip_pose(q)
            result = self.solver.operational_space(q, np.zeros_like(q))
            tau_g = self.solver.gravity(q)
            if np.all(np.isfinite(result.Lambda)):
                self.pub_markers.publish(
                    markers.marker_array(header, self.model, p_tip, result.Lambda, tau_g))
            wrench = R_tip.T @ result.gravity_wrench[:3], R_tip.T @ result.gravity_wrench[3:]
            msg = WrenchStamped(header=Header(stamp=header.stamp, frame_id=self.model.tip_link))
            (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = wrench[0].tolist()
            (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = wrench[1].tolist()
            if np.all(np.isfinite(result.gravity_wrench)):
                self.pub_wrench.publish(msg)
        except Exception as exc:
            self.errors += 1
            self.get_logger().error(f"markers failed: {exc}", throttle_duration_sec=THROTTLE)

    @_exclusive
    def _publish_diagnostics(self):
        now = self._now()
        status = DiagnosticStatus(name="robo_dynamics: dynamics_node", hardware_id="")
        values = {}
        if self.model is None:
            status.level, status.message = DiagnosticStatus.WARN, "no robot description yet"
        else:
            status.hardware_id = self.model.name
            age = self.merger.age(now) if self.merger.complete() else math.inf
            window = [t for t in self.rate_window if now - t <= 1.0]
            worst = max((d.max_rel for d in self.cross_check_result.values()), default=0.0)
            tolerance = self.get_parameter("cross_check_tolerance").value
            values = {
                "backend": self.solver.name, "input_rate_hz": f"{len(window):.0f}",
                "state_age_s": f"{age:.4f}", "messages_accepted": str(self.received),
                "messages_rejected": str(self.merger.rejected),
                "last_rejection": self.rejected_reason, "commands_clamped": str(self.clamped),
                "computation_errors": str(self.errors),
                "lambda_condition_number": f"{self.last_condition:.4g}",
                "near_singular": str(self.last_near_singular),
                "cross_check_max_relative_difference": f"{worst:.3g}",
                "trajectory_active": str(self.trajectory is not None),
                "joint_state_thread": (self.joint_states.scheduling if self.joint_states
                                       else "not started"),
            }
            if self.callback_seconds:
                times = np.sort(np.array(self.callback_seconds)) * 1e6
                rank = lambda p: times[min(len(times) - 1, int(p * len(times)))]  # noqa: E731
                values.update({"callback_p50_us": f"{rank(0.50):.1f}",
                               "callback_p99_us": f"{rank(0.99):.1f}",
                               "callback_max_us": f"{times[-1]:.1f}"})
                values["callback_samples"] = str(len(times))
            for name, diff in self.cross_check_result.items():
                values[f"cross_check_{name}"] = f"{diff.max_rel:.3g}"
            stale = self.merger.stale_joints(now, self.stale_timeout)
            if worst > tolerance:
                status.level = DiagnosticStatus.ERROR
                status.message = (f"backends disagree: relative difference {worst:.3g} > "
                                  f"{tolerance:g}")
            elif not self.merger.complete():
                status.level = DiagnosticStatus.WARN
                status.message = f"waiting for joint states of {stale}"
            elif stale:
                status.level = DiagnosticStatus.WARN
                status.message = f"stale joint states (> {self.stale_timeout} s) for {stale}: " \
                                 "commands stopped"
            elif self.last_near_singular:
                status.level, status.message = DiagnosticStatus.WARN, "near a singularity"
            else:
                status.level, status.message = DiagnosticStatus.OK, "publishing"
        status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
        self.pub_diagnostics.publish(DiagnosticArray(
            header=Header(stamp=self.get_clock().now().to_msg()), status=[status]))

    # -- services ----------------------------------------------------------------------------
    def _request_state(self, request, *fields):
        """(order, arrays in model order) from a request's joint_names and fields."""
        if self.model is None:
            raise ValueError("no robot description yet")
        names = list(request.joint_names)
        index = conversions.order_of(names, self.model.joint_names)
        n = self.model.dof
        arrays = [conversions.vector(getattr(request, field), n, field,
                                     default_zero=field in OPTIONAL_FIELDS)[index]
                  for field in fields]
        order = names or list(self.model.joint_names)
        return order, arrays

    @_service
    def _srv_inverse_dynamics(self, request, response):
        order, (q, qd, qdd) = self._request_state(request, "positions", "velocities",
                                                  "accelerations")
        f_tip, frame = None, "local_world_aligned"
        if request.use_tip_wrench:
            w = request.tip_wrench.wrench
            f_tip = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y,
                              w.torque.z])
            frame_id = request.tip_wrench.header.frame_id
            if frame_id == self.model.tip_link:
                frame = "local"
            elif frame_id not in ("", self.model.base_link):
                raise ValueError(f"tip_wrench frame_id must be '{self.model.base_link}' "
                                 f"(or empty) or '{self.model.tip_link}', got '{frame_id}'")
        tau = _finite(self.solver.inverse_dynamics(q, qd, qdd, f_tip, frame), "effort")
        response.joint_names = order
        response.effort = _in_order(tau, order, self.model).tolist()

    @_service
    def _srv_forward_dynamics(self, request, response):
        order, (q, qd, tau) = self._request_state(request, "positions", "velocities",
                                                  "efforts")
        qdd = _finite(self.solver.forward_dynamics(q, qd, tau), "accelerations")
        response.joint_names = order
        response.accelerations = _in_order(qdd, order, self.model).tolist()

    @_service
    def _srv_compute_dynamics(self, request, response):
        _, (q, qd) = self._request_state(request, "positions", "velocities")
        g = _finite(self.solver.gravity(q), "gravity")
        result = self.solver.operational_space(q)
        _finite(self.solver.bias(q, qd), "Coriolis terms")
        response.joint_names = list(self.model.joint_names)
        response.dof = self.model.dof
        response.mass_matrix = self.solver.mass_matrix(q).ravel().tolist()
        response.coriolis = (self.solver.bias(q, qd) - g).tolist()
        response.gravity = g.tolist()
        response.jacobian_frame = self.model.base_link
        response.tip_frame = self.model.tip_link
        response.jacobian = self.solver.jacobian(q).ravel().tolist()
        response.operational_space_inertia = result.Lambda.ravel().tolist()
        response.condition_number = min(result.condition_number, CONDITION_CAP)
        response.near_singular = result.near_singular
        return "ok (matrices row-major; joint order of joint_names)"

    @_service
    def _srv_set_payload(self, request, response):
        if self.model is None:
            raise ValueError("no robot description yet")
        inertia = inertia_tensor(request.ixx, request.ixy, request.ixz, request.iyy,
                                 request.iyz, request.izz)
        com = [request.center_of_mass.x, request.center_of_mass.y, request.center_of_mass.z]
        if not (math.isfinite(request.mass) and request.mass >= 0.0):
            raise ValueError(f"mass must be finite and >= 0, got {request.mass}")
        self.urdf_model.with_payload(request.link, request.mass, com, inertia)  # validates
        previous = dict(self.payloads)
        self.payloads[request.link] = (request.mass, com, inertia)
        try:
            self._rebuild_solvers()
        except Exception:
            self.payloads = previous
            raise
        message = (f"payload of {request.mass} kg at '{request.link}'" if request.mass > 0
                   else f"payload at '{request.link}' removed")
        self.get_logger().info(message)
        return message

    def _now(self):
        """The node's clock in seconds. Without simulated time that is the system clock
        (CLOCK_REALTIME, as rcl reads it), read directly: rclpy's Clock.now() costs ≈ 10 µs
        per joint state in the running node. Whether /clock drives the clock is re-read with
        the subscriber counts (every REFRESH s)."""
        if self._system_time:
            return time.time()
        return self.get_clock().now().nanoseconds * 1e-9


_UNSET = {  # parameters without a default are declared by type and stay unset unless given
    parameters.ParameterType.PARAMETER_STRING_ARRAY: Parameter.Type.STRING_ARRAY,
    parameters.ParameterType.PARAMETER_DOUBLE_ARRAY: Parameter.Type.DOUBLE_ARRAY,
}


def _finite(values, what):
    """values, or ValueError when the inputs were finite but too large for a finite result."""
    if not np.isfinite(values).all():
        raise ValueError(f"{what} is not finite: the inputs are out of range")
    return values


def _in_order(values, order, model):
    """Reorder model-order `values` into the joint order `order`."""
    return np.asarray(values)[[model.joint_index(name) for name in order]]


def _joint_names_of(urdf_xml):
    import xml.etree.ElementTree as ET
    return [joint.get("name") for joint in ET.fromstring(urdf_xml).iter("joint")]


def main(args=None):
    return run(DynamicsNode, args)


if __name__ == "__main__":
    sys.exit(main())

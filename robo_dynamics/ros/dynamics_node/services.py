"""dynamics_node's services: each request converted, checked, computed by the library and
answered. A bad request (a ValueError, which the library's errors are too) is answered with
success false and the reason; any other exception is a bug: logged with its traceback,
answered with success false, and the node carries on.

    ~/inverse_dynamics, ~/forward_dynamics, ~/compute_dynamics   the dynamics at a state
    ~/set_payload                 the payload at a link (DynamicsNode.apply_payload)
    ~/set_contact_thresholds      the observer's two threshold parameters
    ~/reset_observer              std_srvs/Trigger
    ~/check_trajectory            do a trajectory's torques, speeds, accelerations fit?
"""

import functools
import traceback

import numpy as np
from geometry_msgs.msg import Vector3, Wrench
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

from robo_dynamics_interfaces.srv import (CheckTrajectory, ComputeDynamics, ForwardDynamics,
                                          InverseDynamics, SetContactThresholds, SetPayload)

from ...control.joint_order import order_of
from ...control.solver_set import check_payload_mass
from ...control.trajectory_check import check_trajectory
from ...spatial.inertia import inertia_tensor
from .. import conversions

DEFAULT_SAMPLE_PERIOD = 1e-3    # ~/check_trajectory, s
MAX_CHECK_SAMPLES = 200_000     # ~/check_trajectory: bounds one call's time and memory
OPTIONAL_FIELDS = ("velocities", "accelerations")   # empty in a request means zero


def answered(fill=None, *, locked=True):
    """Wrap a service body: it fills the response and may return its message (see the
    module docstring for what becomes of an exception). locked=False: the body takes the
    node's lock itself."""
    if fill is None:
        return functools.partial(answered, locked=locked)

    @functools.wraps(fill)
    def handler(self, request, response):
        try:
            if locked:
                with self.live.lock:
                    message = fill(self, request, response)
            else:
                message = fill(self, request, response)
        except ValueError as exc:
            return type(response)(success=False, message=str(exc) or type(exc).__name__)
        except Exception as exc:
            self.logger.error(f"{fill.__name__} failed on a valid-looking "
                                         f"request:\n{traceback.format_exc()}")
            return type(response)(success=False,
                                  message=f"internal error ({type(exc).__name__}: {exc}); "
                                          "logged by the node")
        response.success, response.message = True, message or "ok"
        return response
    return handler


class DynamicsServices:
    """dynamics_node's services over `live` (live.py), each made by `create_service` (the
    node's). Each handler is public: the service calls it, and so may a test, with a
    request and an empty response. logger: where a handler's bug is told; parameter(name):
    a parameter's value; set_parameters(list): the node's set_parameters_atomically;
    apply_payload(link, mass, com, inertia): the node's model change (its sentence);
    background: the executor that checks trajectories off the command stream's thread."""

    def __init__(self, live, create_service, logger, parameter, set_parameters,
                 apply_payload, background):
        self.live, self.logger, self.parameter = live, logger, parameter
        self.set_parameters, self.apply_payload = set_parameters, apply_payload
        self.background = background
        for kind, name in ((InverseDynamics, "inverse_dynamics"),
                           (ForwardDynamics, "forward_dynamics"),
                           (ComputeDynamics, "compute_dynamics"), (SetPayload, "set_payload"),
                           (SetContactThresholds, "set_contact_thresholds"),
                           (Trigger, "reset_observer"), (CheckTrajectory, "check_trajectory")):
            create_service(kind, f"~/{name}", getattr(self, name))

    def _state(self, request, *fields):
        """(order, arrays in model order) from a request's joint_names and fields."""
        model = self.live.model
        if model is None:
            raise ValueError("no robot description yet")
        names = list(request.joint_names)
        index = order_of(names, model.joint_names)
        arrays = [conversions.vector(getattr(request, field), model.dof, field,
                                     default_zero=field in OPTIONAL_FIELDS)[index]
                  for field in fields]
        return names or list(model.joint_names), arrays

    @answered
    def inverse_dynamics(self, request, response):
        model, solver = self.live.model, self.live.solver
        order, (q, qd, qdd) = self._state(request, "positions", "velocities", "accelerations")
        f_tip, frame = None, "local_world_aligned"
        if request.use_tip_wrench:
            w = request.tip_wrench.wrench
            f_tip = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y,
                              w.torque.z])
            frame_id = self.live.link(request.tip_wrench.header.frame_id)
            if frame_id == model.tip_link:
                frame = "local"
            elif frame_id not in ("", model.base_link):
                raise ValueError(f"tip_wrench frame_id must be '{model.base_link}' "
                                 f"(or empty) or '{model.tip_link}', got '{frame_id}'")
        tau = _finite(solver.inverse_dynamics(q, qd, qdd, f_tip, frame), "effort")
        response.joint_names = order
        response.effort = _in_order(tau, order, model).tolist()
        if hasattr(solver, "closure_wrenches"):          # a closed linkage's loops
            _closure_wrenches(response, solver.closure_wrenches(q, qd, qdd, f_tip, frame))

    @answered
    def forward_dynamics(self, request, response):
        order, (q, qd, tau) = self._state(request, "positions", "velocities", "efforts")
        solver = self.live.solver
        qdd = _finite(solver.forward_dynamics(q, qd, tau), "accelerations")
        response.joint_names = order
        response.accelerations = _in_order(qdd, order, self.live.model).tolist()
        if hasattr(solver, "closure_wrenches"):          # a closed linkage's loops
            _closure_wrenches(response, solver.closure_wrenches(q, qd, qdd))

    @answered
    def compute_dynamics(self, request, response):
        model, solver = self.live.model, self.live.solver
        _, (q, qd) = self._state(request, "positions", "velocities")
        g = _finite(solver.gravity(q), "gravity")
        result = solver.operational_space(q)
        b = _finite(solver.bias(q, qd), "Coriolis terms")
        response.joint_names = list(model.joint_names)
        response.dof = model.dof
        response.mass_matrix = solver.mass_matrix(q).ravel().tolist()
        response.coriolis = (b - g).tolist()
        response.gravity = g.tolist()
        response.jacobian_frame = model.base_link
        response.tip_frame = model.tip_link
        response.jacobian = solver.jacobian(q).ravel().tolist()
        response.operational_space_inertia = result.Lambda.ravel().tolist()
        response.condition_number = min(result.condition_number, conversions.CONDITION_CAP)
        response.near_singular = result.near_singular
        return "ok (matrices row-major; joint order of joint_names)"

    @answered(locked=False)
    def set_payload(self, request, response):
        """Attach, replace or (mass 0) remove the payload at a link."""
        inertia = inertia_tensor(request.ixx, request.ixy, request.ixz, request.iyy,
                                 request.iyz, request.izz)
        com = [request.center_of_mass.x, request.center_of_mass.y, request.center_of_mass.z]
        return self.apply_payload(request.link, request.mass, com, inertia)

    @answered(locked=False)
    def set_contact_thresholds(self, request, response):
        """Set the two threshold parameters (validated like any parameter change; a joint
        not named keeps its thresholds)."""
        live = self.live
        with live.lock:
            if live.controller is None:
                raise ValueError("no robot description yet")
            settings, names = live.controller.settings, live.model.joint_names
        order = list(request.joint_names) or list(names)
        unknown = [name for name in order if name not in names]
        if unknown or len(set(order)) != len(order):
            raise ValueError(f"joint_names must name chain joints {list(names)} at most once"
                             + (f"; unknown: {unknown}" if unknown else ""))
        index = [names.index(name) for name in order]
        contact, collision = settings.contact_threshold.copy(), settings.collision_threshold.copy()
        for field, target in (("contact_thresholds", contact),
                              ("collision_thresholds", collision)):
            target[index] = conversions.vector(getattr(request, field), len(order), field)
        result = self.set_parameters([
            Parameter("contact_thresholds", value=contact.tolist()),
            Parameter("collision_thresholds", value=collision.tolist())])
        if not result.successful:
            raise ValueError(result.reason)
        return f"thresholds of {order} set"

    @answered
    def reset_observer(self, request, response):
        live = self.live
        if live.controller is None:
            raise ValueError("no robot description yet")
        event = live.controller.reset_observer()
        live.report(event)
        if event.kind != "observer_reset":
            raise ValueError(event.message)
        return event.message

    @answered(locked=False)
    def check_trajectory(self, request, response):
        """Check the trajectory on a solver of its own (batched in-house inverse dynamics),
        outside the lock, on the node's background thread: the command stream goes on."""
        live = self.live
        with live.lock:
            if live.controller is None:
                raise ValueError("no robot description yet")
            payloads, names = dict(live.payloads), live.model.joint_names
            velocity_bound = live.controller.settings.velocity_bound
        margin = request.effort_margin or 1.0
        period = request.sample_period or DEFAULT_SAMPLE_PERIOD
        if request.payload_link:
            mass, com, inertia = conversions.payload_from_inertia(request.payload)
            check_payload_mass(mass, self.parameter("max_payload_mass"))
            payloads[request.payload_link] = (mass, com, inertia)
        elif request.payload.m != 0.0:
            raise ValueError("a payload needs payload_link (empty: the payload in use)")
        trajectory = conversions.trajectory_from_msg(request.trajectory, names, 0.0)
        result = self.background.submit(
            check_trajectory, live.checking_solvers.solver(payloads), trajectory,
            live.urdf_model.effort_limit, period, margin, MAX_CHECK_SAMPLES, None,
            velocity_bound).result()
        response.feasible = result.feasible
        if result.violation is not None:
            v = result.violation
            response.violation_index, response.violation_time = v.index, v.time
            response.violation_joint, response.violation_effort = v.joint, v.value
            response.violation_limit, response.violation_kind = v.limit, v.kind
        response.joint_names = list(names)
        response.peak_effort = result.peak_effort.tolist()
        response.peak_ratio = result.peak_ratio.tolist()
        response.min_time_scale = result.min_time_scale
        response.samples = len(result.times)
        if result.feasible:
            return f"within the limits; time scale: {result.reason}"
        return f"beyond the limits: {result.reason}"


def _closure_wrenches(response, wrenches):
    """Fill closure_names and closure_wrenches (closures.ClosureWrench, base axes)."""
    def vector3(values, what):
        x, y, z = _finite(values, what).tolist()
        return Vector3(x=x, y=y, z=z)
    response.closure_names = [w.name for w in wrenches]
    response.closure_wrenches = [Wrench(force=vector3(w.force, "closure forces"),
                                        torque=vector3(w.moment, "closure moments"))
                                 for w in wrenches]


def _finite(values, what):
    """values, or ValueError when the inputs were finite but too large for a finite result."""
    if not np.isfinite(values).all():
        raise ValueError(f"{what} is not finite: the inputs are out of range")
    return values


def _in_order(values, order, model):
    """Reorder model-order `values` into the joint order `order`."""
    return np.asarray(values)[[model.joint_index(name) for name in order]]

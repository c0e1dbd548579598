"""/diagnostics of dynamics_node (diagnostic_msgs/DiagnosticArray, one status): the level and
message of control/health.py and the node's figures as key-values.

The node's state is read under its lock (Λ's condition number computed there when the
joint-state thread has not: REFRESH); the timing percentiles, the message and its
publication, a millisecond or more in all, outside it, so that a joint state never waits.
"""

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from std_msgs.msg import Header

from ...control import contact_safety, health
from ...control.safety_limits import point_states
from .outputs import REFRESH

LEVELS = {health.OK: DiagnosticStatus.OK, health.WARN: DiagnosticStatus.WARN,
          health.ERROR: DiagnosticStatus.ERROR}


def publish(node, publisher):
    """Publish `node`'s (a DynamicsNode) status on `publisher`, stamped with the time of
    the node's clock its figures were computed at (one read: a clock that moves on while
    they are computed, simulated time, cannot pair them with a later stamp)."""
    with node.lock:
        now = node.get_clock().now()
        status, values, timings = _state(node, now.nanoseconds * 1e-9)
    for what, seconds in timings:
        values.update(health.percentiles(what, seconds))
    status.values = [KeyValue(key=k, value=v) for k, v in values.items()]
    publisher.publish(DiagnosticArray(header=Header(stamp=now.to_msg()), status=[status]))


def _state(node, now):
    """(DiagnosticStatus without values, values {key: text}, timings [(what, seconds)]) at
    node time `now` [s]."""
    status = DiagnosticStatus(name="robo_dynamics: dynamics_node", hardware_id="")
    lifecycle = {"lifecycle": node.lifecycle_state()}
    if node.model is None:
        status.level, status.message = DiagnosticStatus.WARN, (
            f"not configured: {node.configure_failure}" if node.configure_failure
            else "unconfigured (managed: configure it)" if node.managed
            else "no robot description yet")
        return status, lifecycle, []
    model, controller, h = node.model, node.controller, node.health
    status.hardware_id = model.name
    worst = max((d.max_rel for d in node.cross_check.result.values()), default=0.0)
    _update_condition(node, now)
    values = {**lifecycle, **_figures(node, now, worst), **_contact_safety(node)}
    for i, note in enumerate(model.warnings, start=1):
        values[f"model_warning_{i}"] = note
    for name, diff in node.cross_check.result.items():
        values[f"cross_check_{name}"] = f"{diff.max_rel:.3g}"
    level, status.message = health.status(
        controller, now, worst, node.get_parameter("cross_check_tolerance").value,
        h.near_singular, len(model.warnings))
    status.level = LEVELS[level]
    timings = [(what, list(seconds)) for what, seconds in (
        ("callback", h.callback_seconds), ("command", h.command_seconds),
        ("observer", h.observer_seconds))]
    return status, values, timings


def _contact_safety(node):
    """Of the tool and each monitored point: its speed, the mass it carries along its
    motion, the speed a contact with the most restrictive body region allows and the
    margin (control/contact_safety.py); and the tracked trajectory's speed scaling now."""
    controller = node.controller
    state, contact = controller.measured_state(), controller.settings.contact
    if state is None:
        return {}
    (q, qd), motion = state, controller.motion
    kind = ("clamped" if contact is not None and contact.clamped else "transient") + (
        "" if contact else ", not enforced")
    values = {"speed_scaling": "1" if motion is None
              else f"{motion.speed_scaling(node.live.now()):.3g}"}
    try:
        M_inv = node.solver.mass_matrix_inverse(q)
        links = ["tool"] + [link for link, _ in (contact.points if contact else ())]
        for i, (name, (_, J_v)) in enumerate(zip(links, point_states(node.solver, q,
                                                                     contact))):
            limit = contact_safety.point_limit(J_v, M_inv, qd, contact, i)
            values.update({
                f"{name}_speed": f"{limit.speed:.3g} m/s",
                f"{name}_reflected_mass": f"{limit.mass:.3g} kg",
                f"{name}_speed_limit": f"{limit.v_max:.3g} m/s ({limit.region}, {kind})",
                f"{name}_speed_margin": f"{limit.margin:.3g} m/s"})
    except Exception as exc:               # reported, never a reason to stop the status
        node.live.failed(exc, "contact safety")
    return values


def _figures(node, now, worst):
    """The node's figures as key-values {key: text} (docs/node.md, /diagnostics); worst:
    the cross-check's largest relative difference."""
    model, controller, h = node.model, node.controller, node.health
    counts = controller.counts
    return {
        "backend": node.solver.name,
        "input_rate_hz": f"{h.input_rate.per_second(now):.0f}",
        "state_age_s": f"{controller.input_age(now):.4f}", "messages_accepted": str(h.received),
        "messages_rejected": str(controller.rejected), "last_rejection": h.rejected_reason,
        "mode": controller.mode, "hold_reason": controller.hold_reason,
        "hold_failed": controller.halted,
        "commands": str(counts["commands"]), "commands_clamped": str(counts["clamped"]),
        "commands_rate_limited": str(counts["rate_limited"]),
        "desired_motions_refused": str(counts["refused"]),
        "faults": str(counts["faults"]), "stale_stops": str(counts["stale"]),
        "last_event": controller.last_event.message if controller.last_event else "",
        "computation_errors": str(h.errors),
        "external_torque_observer": health.observer_line(controller, model.joint_names),
        "collisions": str(counts["collisions"]),
        "lambda_condition_number": f"{h.condition:.4g}",
        "near_singular": str(h.near_singular),
        "cross_check_max_relative_difference": f"{worst:.3g}",
        "cross_check": ("off: " + node.cross_check_off if node.checker is None
                        else f"{node.checker.name} against {node.solver.name}"),
        "joint_state_thread": (node.joint_states.scheduling if node.joint_states
                               else "not started"),
        "model_warnings": str(len(model.warnings)),
    }


def _update_condition(node, now):
    """Λ's condition number and near_singular at the latest state, unless the joint-state
    thread has computed them within the last REFRESH seconds (Λ subscribed)."""
    h = node.health
    state = node.controller.measured_state()
    if 0.0 <= now - h.condition_at <= REFRESH or state is None:
        return
    try:
        result = node.solver.operational_space(state[0])
    except Exception as exc:
        node.computation_failed(exc, "Λ for /diagnostics")
        return
    h.singularity(result, now)

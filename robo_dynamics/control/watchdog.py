"""Checks of the arm's state against per-joint bounds, each naming the first joint at fault.

Each returns None when every joint is within its bound, else a sentence naming the joint,
the value and the bound. Bounds are (n,) arrays in model order; inf means unbounded.
Plain Python over a handful of joints (cheaper than NumPy per call on the hot path).
"""

from . import safety_planes


def _first_over(values, bounds):
    """(index, value) of the first |value| > bound (NaN counts as over), or None.
    values, bounds: (n,) arrays."""
    for i, (v, b) in enumerate(zip(values.tolist(), bounds.tolist())):
        if not -b <= v <= b:
            return i, v
    return None


def velocity_fault(qd, bound, names):
    """|q̇_i| > bound_i [rad/s or m/s]: a joint moves faster than allowed."""
    over = _first_over(qd, bound)
    if over is None:
        return None
    i, v = over
    return f"joint '{names[i]}' velocity {v:.3g} exceeds the velocity bound {bound[i]:.3g}"


def tracking_fault(q, q_desired, bound, names):
    """|q_d,i − q_i| > bound_i [rad or m]: the arm is not following the desired motion."""
    over = _first_over(q_desired - q, bound)
    if over is None:
        return None
    i, error = over
    return (f"joint '{names[i]}' tracking error {error:.3g} exceeds max_tracking_error "
            f"{bound[i]:.3g}")


def start_fault(q, q_start, tolerance, names):
    """|q_start,i − q_i| > tolerance_i: a desired motion does not start where the arm is."""
    over = _first_over(q_start - q, tolerance)
    if over is None:
        return None
    i, offset = over
    return (f"it starts {offset:.3g} from joint '{names[i]}' measured position "
            f"{q[i]:.4g} (start_tolerance {tolerance[i]:.3g})")


def position_fault(positions, lower, upper, names):
    """A desired position (m, n) or (n,) outside [lower_i, upper_i]; joints whose lower and
    upper limits are equal (continuous joints in URDF) are not checked."""
    for row in positions.reshape(-1, len(names)).tolist():
        for i, (x, lo, hi) in enumerate(zip(row, lower.tolist(), upper.tolist())):
            if lo < hi and not lo <= x <= hi:
                return (f"joint '{names[i]}' desired position {x:.4g} is outside its limits "
                        f"[{lo:.4g}, {hi:.4g}]")
    return None


def admission_fault(motion, now, merger, settings, solver, period):
    """Why a desired motion (Trajectory, SetPoint or CartesianTarget) cannot start at `now`
    [s], or None: the arm's last state (complete, fresh, not moving past a velocity bound),
    then the motion's own (a Cartesian target's admission at the control period [s]; a joint
    motion within the limits that starts where the arm is). merger: the JointStateMerger."""
    model, s = solver.model, settings
    if not merger.complete():
        return "no complete joint state yet"
    if merger.age(now) > s.stale_timeout:
        return f"joint states are stale (older than {s.stale_timeout:g} s)"
    moving = velocity_fault(merger.qd, s.velocity_bound, model.joint_names)
    if moving is not None:
        return f"the arm is moving too fast to start: {moving}"
    if motion.mode != "tracking":      # a Cartesian target
        return ("the control period is not known yet" if period is None else
                motion.admission_fault(solver, merger.q, period)
                or safety_planes.motion_fault(motion, solver, merger.q, s))
    return (position_fault(motion.positions, model.lower, model.upper, model.joint_names)
            or start_fault(merger.q, motion.sample(now)[0], s.start_tolerance,
                           model.joint_names)
            or safety_planes.motion_fault(motion, solver, merger.q, s))

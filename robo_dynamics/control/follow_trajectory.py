"""A FollowJointTrajectory goal (control_msgs) as the controller's desired motion: what is
admitted, the tolerances it is held to, and how it ends. No ROS here.

The conventions are MoveIt's and joint_trajectory_controller's (ros2_controllers):
- the goal names every chain joint once, in any order, else INVALID_JOINTS;
- header.stamp 0 starts the trajectory on receipt, a later stamp then (until then the arm
  holds the current desired pose); a stamp whose first point is already due:
  OLD_HEADER_TIMESTAMP;
- a first point after time 0: the motion starts from the current desired state (a running
  goal's: a continuation; else the measured pose at rest), as joint_trajectory_controller
  does; a first point at time 0 must be within start_tolerance of the measured pose (the
  controller's admission, which also checks the position limits);
- tolerances (JointTolerance): > 0 the value, 0 the server's default, -1 not checked. The
  defaults are parameters named as joint_trajectory_controller's (constraints.<joint>.trajectory
  and .goal, constraints.goal_time, constraints.stopped_velocity_tolerance; 0: not checked,
  goal_time 0: no time limit). Accelerations are not measured: their tolerances are taken and
  not checked;
- before the last point's time, |q_d − q| beyond the path position tolerance or |q̇_d − q̇|
  beyond the path velocity tolerance ends the goal, PATH_TOLERANCE_VIOLATED, and the arm holds
  where it is (computed torque to that pose, not the gravity-only float);
- after it, the goal succeeds once every joint is within its goal position tolerance of the
  last point and |q̇_end − q̇| within its goal velocity tolerance; still outside goal_time after
  the last point's time: GOAL_TOLERANCE_VIOLATED. Either way the arm goes on holding the last
  point (a position hold by computed torque, until the next goal);
- a point's efforts are a joint torque added to the computed torque (a force the model does
  not know, e.g. a tool pressing on a surface), linear between points;
- a cancel slows the rest of the path to a stop (Stopping), then the arm holds there.
"""

import collections
import math

import numpy as np

from .joint_order import order_of
from .trajectory import Motion, Trajectory, point_field, trajectory_from_points

SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP = 0, -1, -2, -3
PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = -4, -5
UNCHECKED = -1.0          # a JointTolerance value that removes the check
POSITION, VELOCITY = ("position", "rad or m"), ("velocity", "rad/s or m/s")

Outcome = collections.namedtuple("Outcome", ["code", "message", "cancelled"])
Outcome.__doc__ = """How a goal ended: code (the result's error_code), message (a sentence
naming the joint, the tolerance and by how much), cancelled (it ended on a cancel request)."""

Tolerances = collections.namedtuple("Tolerances", ["path_position", "path_velocity",
                                                   "goal_position", "goal_velocity",
                                                   "goal_time"])
Tolerances.__doc__ = """One goal's tolerances, each (n,) in model joint order [rad or m,
/s], inf where not checked; goal_time [s] (inf: no limit)."""


class GoalRefused(ValueError):
    """A goal that cannot run: code (the result's error_code) and the reason."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def tolerances(names, trajectory, goal, goal_time, path_tolerance=(), goal_tolerance=(),
               goal_time_tolerance=0.0, stopped_velocity_tolerance=0.01):
    """Tolerances for the chain `names` from the server's defaults (trajectory, goal: (n,)
    position tolerances, 0 not checked; goal_time [s], 0 no limit; stopped_velocity_tolerance)
    and the goal's (path_tolerance, goal_tolerance: (name, position, velocity, acceleration)
    each; goal_time_tolerance [s], 0 the default). GoalRefused for a joint not in the chain
    or a value that is not > 0, 0 or -1."""
    n = len(names)
    path_position = np.where(np.asarray(trajectory) > 0, trajectory, np.inf).astype(float)
    goal_position = np.where(np.asarray(goal) > 0, goal, np.inf).astype(float)
    path_velocity = np.full(n, np.inf)
    goal_velocity = np.full(n, stopped_velocity_tolerance if stopped_velocity_tolerance > 0
                            else np.inf)
    for which, given, position, velocity in (
            ("path_tolerance", path_tolerance, path_position, path_velocity),
            ("goal_tolerance", goal_tolerance, goal_position, goal_velocity)):
        for name, *values in given:
            if name not in names:
                raise GoalRefused(INVALID_JOINTS, f"{which} names '{name}', which is not a "
                                                  f"joint of the chain {list(names)}")
            i = names.index(name)
            for value, array, what in zip(values, (position, velocity, None),
                                          ("position", "velocity", "acceleration")):
                _override(array, i, value, f"{which} {what} of '{name}'")
    if not math.isfinite(goal_time_tolerance) or goal_time_tolerance < 0.0:
        raise GoalRefused(INVALID_GOAL, "goal_time_tolerance must be >= 0, got "
                                        f"{goal_time_tolerance!r} s")
    limit = goal_time_tolerance if goal_time_tolerance > 0.0 else goal_time
    return Tolerances(path_position, path_velocity, goal_position, goal_velocity,
                      limit if limit > 0.0 else math.inf)


def _override(array, i, value, what):
    """array[i] := a goal's tolerance value (0: keep the default; -1: inf, not checked);
    array None: the value is only checked (accelerations)."""
    if not math.isfinite(value) or (value < 0.0 and value != UNCHECKED):
        raise GoalRefused(INVALID_GOAL, f"{what} must be > 0, 0 (the default) or -1 (not "
                                        f"checked), got {value!r}")
    if array is not None and value != 0.0:
        array[i] = value if value > 0.0 else math.inf


def plan(joint_names, names, points, stamp, now, current):
    """(Trajectory in model order, efforts (m, n) or None, first) of a goal: `names` its
    joint_names, `points` (time_from_start [s], positions, velocities, accelerations,
    efforts) each (arrays in `names` order, empty where not given), `stamp` its header stamp
    [s] (0: now), `current` the desired state now (q, q̇, q̈) it continues from when its
    first point is after time 0; `first`: how many points were put before the goal's (0 or
    1). GoalRefused with the code and the reason."""
    names = list(names)
    unknown = [name for name in names if name not in joint_names]
    missing = [name for name in joint_names if name not in names]
    if unknown or missing or len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise GoalRefused(INVALID_JOINTS, "the goal must name each chain joint once "
                                          f"({list(joint_names)}): " + "; ".join(
                                              f"{what} {which}" for what, which in
                                              (("unknown", unknown), ("missing", missing),
                                               ("named twice", twice)) if which))
    if not points:
        raise GoalRefused(INVALID_GOAL, "the trajectory has no points")
    start = stamp if stamp > 0.0 else now
    if stamp > 0.0 and start + points[0][0] < now:
        raise GoalRefused(OLD_HEADER_TIMESTAMP,
                          f"its first point was due {now - start - points[0][0]:.3f} s ago "
                          f"(header.stamp {stamp:.3f} s, now {now:.3f} s)")
    try:
        trajectory = trajectory_from_points(names, [p[:4] for p in points], joint_names,
                                            start)
        efforts = _efforts(names, points, joint_names)
    except ValueError as exc:
        raise GoalRefused(INVALID_GOAL, str(exc)) from None
    if trajectory.times[0] == 0.0:
        return trajectory, efforts, 0
    q, qd, qdd = current
    velocities, accelerations = trajectory.velocities, trajectory.accelerations
    trajectory = Trajectory(
        start, np.concatenate(([0.0], trajectory.times)),
        np.vstack((q, trajectory.positions)),
        None if velocities is None else np.vstack((qd, velocities)),
        None if accelerations is None else np.vstack((qdd, accelerations)))
    if efforts is not None:
        efforts = np.vstack((np.zeros(len(joint_names)), efforts))
    return trajectory, efforts, 1


def _efforts(names, points, joint_names):
    """The points' efforts (m, n) in model order, or None when no point gives any."""
    efforts = point_field(points, 4, "efforts", order_of(names, joint_names))
    if efforts is not None and not np.all(np.isfinite(efforts)):
        raise ValueError("trajectory efforts must be finite")
    return efforts


class Stopping:
    """The rest of a trajectory's path from `now`, slowed to a stop: path time s(τ) = s₀ +
    c (τ − τ²/(2T)) for 0 ≤ τ ≤ T (its rate ṡ falls linearly from c, the speed scaling's at
    `now`, to 0), then s₀ + c T/2. With T = max_i |q̇_d,i| / deceleration_i (q̇_d at `now`)
    each joint's speed along the path falls at about its deceleration [rad/s² or m/s²]:
    q̇ = q'(s) ṡ, q̈ = q''(s) ṡ² + q'(s) s̈."""

    def __init__(self, trajectory, now, deceleration):
        self.trajectory, self.begin = trajectory, now
        self.s0 = trajectory.elapsed(now)
        qd = trajectory.sample(now)[1]
        self.rate = 1.0 if trajectory.scale is None else trajectory.scale.at(
            now - trajectory.start)[1]
        self.duration = float(np.max(np.abs(qd) / deceleration, initial=0.0))
        self.end = now + self.duration

    def sample(self, now):
        """(q_d, q̇_d, q̈_d) at absolute time `now` [s]."""
        T, traj, c = self.duration, self.trajectory, self.rate
        if T == 0.0:
            q = traj.sample_path(self.s0)[0]
            return q, np.zeros_like(q), np.zeros_like(q)
        tau = min(max(now - self.begin, 0.0), T)
        rate = c * (1.0 - tau / T)
        q, qd, qdd = traj.sample_path(self.s0 + c * (tau - tau * tau / (2.0 * T)))
        return q, qd * rate, qdd * rate * rate - (c * qd / T if tau < T else 0.0 * qd)


class TrajectoryGoal(Motion):
    """A goal being executed: the controller's desired motion (module docstring) and its
    outcome. trajectory: a Trajectory in model order; efforts (m, n) or None; first: points
    put before the goal's (feedback's index counts the goal's own); tolerances: Tolerances;
    names: the chain's joints."""

    def __init__(self, trajectory, efforts, first, tolerances, names):
        self.trajectory, self.efforts, self.first = trajectory, efforts, first
        self.tolerances, self.names = tolerances, list(names)
        self.positions = trajectory.positions       # the controller's admission checks them
        self.times = trajectory.start + trajectory.times     # absolute [s], for the efforts
        self.stopping = None       # the Stopping after a cancel, or None
        self.outcome = None        # Outcome once ended
        self.actual = None         # (now, q, q̇) of the last joint state judged

    def begin(self, solver, q, now, settings):
        self.trajectory.begin(solver, q, now, settings)

    def sample(self, now):
        return (self.stopping or self.trajectory).sample(now)

    def slowed(self):
        return self.trajectory.slowed()

    def speed_scaling(self, now):
        return self.trajectory.speed_scaling(min(now, self.stopping.begin) if self.stopping
                                             else now)

    def feed_forward(self, now):
        if self.efforts is None:
            return None
        if self.stopping is not None:
            now = min(now, self.stopping.begin)
        t = self.trajectory.start + self.trajectory.elapsed(now)     # on the path
        return np.array([np.interp(t, self.times, column) for column in self.efforts.T])

    def index(self, now):
        """The index of the goal's point the motion is heading for (its last once past)."""
        t = self.trajectory.elapsed(now)
        k = int(np.searchsorted(self.trajectory.times, t, side="left"))
        return max(0, min(k, len(self.trajectory.times) - 1) - self.first)

    def judge(self, now, q, qd, q_d, qd_d):
        self.actual = (now, q.copy(), qd.copy())
        if self.outcome is not None:
            return None
        tol, t = self.tolerances, self.trajectory.elapsed(now)
        if self.stopping is not None:
            if now >= self.stopping.end and _beyond(qd, 0.0, tol.goal_velocity, self.names,
                                                    VELOCITY) is None:
                self.outcome = Outcome(SUCCESSFUL, "cancelled: stopped along the path "
                                       f"{now - self.stopping.begin:.3f} s after the cancel "
                                       "request; the arm holds there", True)
            return None
        end = self.trajectory.times[-1]
        if t < end:
            beyond = (_beyond(q, q_d, tol.path_position, self.names)
                      or _beyond(qd, qd_d, tol.path_velocity, self.names, VELOCITY))
            if beyond is None:
                return None
            reason = f"path tolerance violated at t = {t:.3f} s: {beyond}"
            self.outcome = Outcome(PATH_TOLERANCE_VIOLATED, reason + "; the arm holds where "
                                   "it is", False)
            return reason
        # after its last point a trajectory holds that point at rest (trajectory.py)
        beyond = (_beyond(q, self.positions[-1], tol.goal_position, self.names)
                  or _beyond(qd, 0.0, tol.goal_velocity, self.names, VELOCITY))
        if beyond is None:
            self.outcome = Outcome(SUCCESSFUL, "reached the last point within the goal "
                                   f"tolerance {t - end:.3f} s after its time", False)
        elif t - end > tol.goal_time:
            self.outcome = Outcome(GOAL_TOLERANCE_VIOLATED,
                                   f"goal tolerance violated {t - end:.3f} s after the last "
                                   f"point's time (goal time tolerance {tol.goal_time:g} s): "
                                   f"{beyond}; the arm holds the last point", False)
        return None

    def cancel(self, now, deceleration):
        """Slow the rest of the path to a stop (Stopping), then hold; the outcome comes when
        the arm has stopped."""
        if self.stopping is None and self.outcome is None:
            self.stopping = Stopping(self.trajectory, now, deceleration)

    def ended(self, reason, replaced=False):
        """The controller left the goal: for another motion (replaced) or a safety fault."""
        if self.outcome is None:
            code = INVALID_GOAL if replaced else PATH_TOLERANCE_VIOLATED
            self.outcome = Outcome(code, f"ended by the controller: {reason}", False)


def _beyond(actual, desired, tolerance, names, kind=POSITION):
    """A sentence for the joint farthest beyond its tolerance (|desired − actual| over the
    tolerance), or None when every joint is within. kind: POSITION or VELOCITY."""
    error = np.abs(np.asarray(desired) - np.asarray(actual))
    excess = error / tolerance
    i = int(np.argmax(excess))
    if not excess[i] > 1.0:
        return None
    return (f"'{names[i]}' {kind[0]} error {error[i]:.4g} {kind[1]} beyond its tolerance "
            f"{tolerance[i]:.4g}")

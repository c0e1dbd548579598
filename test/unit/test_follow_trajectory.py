"""A FollowJointTrajectory goal in the controller core, without ROS: admission codes, the
tolerances' rules (control_msgs' 0 / -1), and, closed-loop on the simulated UR5e, success
within the goal tolerance, a push beyond the path tolerance (held where it is), a cancel that
stops along the path within the deceleration, a continuation and a feed-forward effort."""

import dataclasses
import math

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.control import follow_trajectory as ft
from robo_dynamics.control.controller import HOLD, TRACKING, Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.limits import velocity_bounds
from robo_dynamics.control.settings import Settings
from robo_dynamics.control.trajectory import SetPoint
from robo_dynamics.simulation.simulated_arm import IntegratedPlant, SimulatedArm
from conftest import SHIPPED

ROBOT = rd.load_robot(SHIPPED / "rd_ur5e.urdf")
NAMES = list(ROBOT.joint_names)
REF = rd.make_solver(ROBOT, "pinocchio")
N = ROBOT.dof
Q0 = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
DT = 1e-3
AT_REST = (Q0, np.zeros(N), np.zeros(N))


def controller(**changes):
    values = dict(kp=np.full(N, 400.0), kd=np.full(N, 40.0), effort_bound=ROBOT.effort_limit,
                  max_torque_rate=np.full(N, 1000.0), start_tolerance=np.full(N, 0.01),
                  max_tracking_error=np.full(N, 0.25),
                  velocity_bound=velocity_bounds(ROBOT.velocity_limit),
                  hold_damping=None, stale_timeout=0.1)
    values.update(changes)
    return Controller(rd.make_solver(ROBOT, "pinocchio"), JointStateMerger(NAMES, NAMES),
                      Settings(**values))


def tolerances(**given):
    defaults = dict(trajectory=np.full(N, 0.05), goal=np.full(N, 0.005), goal_time=0.5)
    defaults.update(given)
    return ft.tolerances(NAMES, **defaults)


def points(times, positions, velocities=None, efforts=None):
    return [(t, list(p), [] if velocities is None else list(velocities[k]), [],
             [] if efforts is None else list(efforts[k]))
            for k, (t, p) in enumerate(zip(times, positions))]


def a_goal(now, move=0.3, duration=2.0, first_time=0.0, tol=None, efforts=None, stamp=0.0,
           current=AT_REST):
    """From current[0], joints 1 (shoulder_lift) and 4 (wrist_2) move by `move` rad,
    smooth (zero end velocities)."""
    times = np.linspace(first_time, first_time + duration, 21)
    s = (times - first_time) / duration
    shape = 3 * s ** 2 - 2 * s ** 3
    rate = (6 * s - 6 * s ** 2) / duration
    direction = np.zeros(N)
    direction[[1, 4]] = move
    positions = current[0] + shape[:, None] * direction
    velocities = rate[:, None] * direction
    trajectory, forces, first = ft.plan(NAMES, NAMES, points(times, positions, velocities,
                                                             efforts), stamp, now, current)
    return ft.TrajectoryGoal(trajectory, forces, first, tol or tolerances(), NAMES)


class Loop:
    """The controller closing the loop on the simulated arm (1 kHz, RK4)."""

    def __init__(self, ctrl=None):
        self.ctrl = ctrl or controller()
        self.arm = SimulatedArm(IntegratedPlant(REF, "rk4", DT), Q0, command_timeout=1.0,
                                brakes=True)
        self.t, self.commands = 0.0, []
        self.run(0.01)                            # the stream starts: hold Q0, settle
        assert self.ctrl.desire(SetPoint(Q0, np.zeros(N)), self.t).kind == "tracking"
        self.run(0.5)

    def goal(self, **given):
        return a_goal(self.t, current=self.ctrl.desired_state(self.t), **given)

    def run(self, seconds, until=None):
        for _ in range(int(round(seconds / DT))):
            cycle = self.ctrl.step(NAMES, self.arm.q.tolist(), self.arm.v.tolist(), [], self.t)
            if cycle.command is not None:
                self.arm.set_command(cycle.command)
                self.commands.append(cycle.command.copy())
            self.arm.step()
            self.t += DT
            if until is not None and until():
                return True
        return False


# -- admission --------------------------------------------------------------------------------
def test_goals_naming_other_joints_are_refused_invalid_joints():
    p = points([0.0, 1.0], [Q0, Q0])
    for names, words in ((NAMES[:-1], "missing ['wrist_3_joint']"),
                         (NAMES + ["gripper"], "unknown ['gripper']"),
                         (NAMES[:-1] + [NAMES[0]], "named twice ['shoulder_pan_joint']")):
        with pytest.raises(ft.GoalRefused) as refused:
            ft.plan(NAMES, names, [(t, pos[:len(names)], [], [], []) for t, pos, *_ in p],
                    0.0, 5.0, AT_REST)
        assert refused.value.code == ft.INVALID_JOINTS == -2
        assert words in str(refused.value)


def test_goals_with_bad_points_or_an_old_stamp_are_refused_with_their_codes():
    cases = [([(0.0, list(Q0), [], [], []), (0.0, list(Q0), [], [], [])], 0.0, ft.INVALID_GOAL,
              "strictly increasing"),
             ([(0.0, [math.nan] * N, [], [], [])], 0.0, ft.INVALID_GOAL, "finite"),
             ([(0.5, list(Q0), [], [], [1.0])], 0.0, ft.INVALID_GOAL, "efforts"),
             ([], 0.0, ft.INVALID_GOAL, "no points"),
             ([(0.5, list(Q0), [], [], [])], 4.0, ft.OLD_HEADER_TIMESTAMP, "0.500 s ago")]
    for pts, stamp, code, words in cases:
        with pytest.raises(ft.GoalRefused) as refused:
            ft.plan(NAMES, NAMES, pts, stamp, 5.0, AT_REST)
        assert refused.value.code == code and words in str(refused.value), str(refused.value)


def test_a_first_point_after_zero_starts_from_the_current_desired_state():
    current = (Q0 + 0.01, np.full(N, 0.2), np.zeros(N))
    trajectory, _, first = ft.plan(NAMES, NAMES, points([0.5, 1.0], [Q0 + 0.1, Q0 + 0.2],
                                                        [np.zeros(N)] * 2), 0.0, 3.0, current)
    assert first == 1
    q, qd, _ = trajectory.sample(3.0 + 1e-9)       # just after: the spline's first segment
    np.testing.assert_allclose(q, Q0 + 0.01, atol=1e-9)
    np.testing.assert_allclose(qd, 0.2, atol=1e-6)
    np.testing.assert_allclose(trajectory.sample(3.5)[0], Q0 + 0.1)


def test_tolerances_follow_control_msgs_zero_default_minus_one_unchecked():
    tol = tolerances(path_tolerance=[("elbow_joint", 0.3, 0.0, 0.0),
                                     ("wrist_1_joint", -1.0, 0.7, -1.0)],
                     goal_tolerance=[("wrist_3_joint", 0.0, -1.0, 0.0)],
                     goal_time_tolerance=2.0, stopped_velocity_tolerance=0.02)
    assert tol.path_position[2] == 0.3 and tol.path_position[3] == math.inf
    assert tol.path_position[0] == 0.05 and tol.path_velocity[3] == 0.7
    assert tol.path_velocity[0] == math.inf
    assert tol.goal_velocity[5] == math.inf and tol.goal_velocity[0] == 0.02
    assert tol.goal_position[5] == 0.005 and tol.goal_time == 2.0
    assert tolerances(goal_time=0.0).goal_time == math.inf        # 0: no time limit
    assert tolerances(trajectory=np.zeros(N)).path_position[0] == math.inf
    for given, code in (([("gripper", 0.1, 0.0, 0.0)], ft.INVALID_JOINTS),
                        ([("elbow_joint", -0.5, 0.0, 0.0)], ft.INVALID_GOAL),
                        ([("elbow_joint", 0.1, math.nan, 0.0)], ft.INVALID_GOAL)):
        with pytest.raises(ft.GoalRefused) as refused:
            tolerances(path_tolerance=given)
        assert refused.value.code == code


# -- closed loop ------------------------------------------------------------------------------
def test_a_goal_succeeds_within_its_goal_tolerance_and_the_arm_then_holds_the_last_point():
    loop = Loop()
    goal = loop.goal()
    assert loop.ctrl.desire(goal, loop.t).kind == "tracking"
    assert loop.run(3.0, until=lambda: goal.outcome is not None)
    assert goal.outcome.code == ft.SUCCESSFUL, goal.outcome
    final = goal.trajectory.positions[-1]
    assert np.max(np.abs(loop.arm.q - final)) <= 0.005           # the goal tolerance
    assert np.max(np.abs(loop.arm.v)) <= 0.01                     # stopped_velocity_tolerance
    assert loop.t - goal.trajectory.start >= 2.0                 # not before the last point
    loop.run(2.0)                                                 # the hold: no drift
    assert np.max(np.abs(loop.arm.q - final)) < 1e-3
    assert loop.ctrl.mode == TRACKING


def test_a_push_beyond_the_path_tolerance_ends_the_goal_and_holds_the_arm_where_it_is():
    loop = Loop()
    goal = loop.goal(duration=3.0, tol=tolerances(trajectory=np.full(N, 0.01)))
    loop.ctrl.desire(goal, loop.t)
    loop.run(1.0)
    assert goal.outcome is None
    loop.arm.set_external_wrench("forearm_link", np.array([0.0, 0.0, -40.0]), np.zeros(3))
    assert loop.run(1.0, until=lambda: goal.outcome is not None)
    assert goal.outcome.code == ft.PATH_TOLERANCE_VIOLATED == -4
    assert "path tolerance violated" in goal.outcome.message, goal.outcome.message
    assert "tolerance 0.01" in goal.outcome.message
    loop.arm.set_external_wrench("forearm_link", np.zeros(3), np.zeros(3))
    held = loop.ctrl.desired_state(loop.t)[0]
    loop.run(1.5)
    assert loop.ctrl.mode == TRACKING                          # a position hold, not the float
    assert np.max(np.abs(loop.arm.q - held)) < 2e-3
    assert np.max(np.abs(loop.arm.v)) < 1e-2


def test_a_goal_not_reached_within_goal_time_ends_goal_tolerance_violated():
    loop = Loop()
    soft = dataclasses.replace(loop.ctrl.settings, kp=np.full(N, 4.0), kd=np.full(N, 4.0))
    loop.ctrl.configure(soft)                                  # too soft to keep up
    goal = loop.goal(duration=0.5, tol=tolerances(trajectory=np.zeros(N), goal_time=0.2))
    assert loop.ctrl.desire(goal, loop.t).kind == "tracking"
    assert loop.run(2.0, until=lambda: goal.outcome is not None)
    assert goal.outcome.code == ft.GOAL_TOLERANCE_VIOLATED == -5, goal.outcome
    assert abs(loop.t - goal.trajectory.start - 0.7) <= 2 * DT   # 0.5 s + goal_time 0.2 s


def test_a_cancel_stops_along_the_path_within_the_deceleration_then_holds():
    loop = Loop()
    goal = loop.goal(duration=2.0)
    loop.ctrl.desire(goal, loop.t)
    loop.run(1.0)                                     # mid-way: the fastest part
    speed = np.abs(goal.sample(loop.t)[1])
    assert speed.max() > 0.2
    deceleration = np.full(N, 1.0)
    goal.cancel(loop.t, deceleration)
    expected = speed.max() / 1.0                      # T = max |q̇_d| / deceleration
    assert goal.stopping.duration == pytest.approx(expected, rel=1e-9)
    desired = []
    t0 = loop.t
    while goal.outcome is None and loop.t < t0 + 3.0:
        desired.append(goal.sample(loop.t)[1])
        loop.run(DT)
    assert goal.outcome.cancelled and goal.outcome.code == ft.SUCCESSFUL
    assert loop.t - t0 <= expected + 0.2
    qd = np.array(desired)
    assert np.max(np.abs(np.diff(qd, axis=0))) / DT <= 1.0 * 1.05      # the deceleration
    path = goal.trajectory.positions
    q = loop.arm.q
    between = (q - path[0]) / (path[-1] - path[0] + 1e-300)
    assert np.allclose(between[[1, 4]], between[1], atol=2e-3)          # on the path
    assert 0.0 < between[1] < 1.0                                       # short of its end


def test_a_continuation_replaces_the_running_goal_from_its_desired_state():
    loop = Loop()
    first = loop.goal(duration=2.0)
    loop.ctrl.desire(first, loop.t)
    loop.run(0.8)
    current = loop.ctrl.desired_state(loop.t)
    second = a_goal(loop.t, move=-0.2, duration=1.5, first_time=0.1, current=current)
    assert loop.ctrl.desire(second, loop.t).kind == "tracking"
    assert first.outcome.code == ft.INVALID_GOAL and "replaced" in first.outcome.message
    np.testing.assert_allclose(second.sample(loop.t + 1e-9)[0], current[0], atol=1e-8)
    np.testing.assert_allclose(second.sample(loop.t + 1e-9)[1], current[1], atol=1e-6)
    steps = np.abs(np.diff(np.array(loop.commands[-5:]), axis=0))
    loop.run(0.05)
    after = np.abs(np.diff(np.array(loop.commands[-50:]), axis=0))
    assert after.max() <= max(steps.max(), 1e-9) * 20 + 1.0            # no jump in torque
    assert loop.run(3.0, until=lambda: second.outcome is not None)
    assert second.outcome.code == ft.SUCCESSFUL


def test_the_efforts_of_the_points_are_added_to_the_computed_torque():
    base, pushed = controller(), controller()
    efforts = np.tile([0.0, 5.0, 0.0, 0.0, -2.0, 0.0], (21, 1))
    for ctrl, forces in ((base, None), (pushed, efforts)):
        for k in range(20):
            ctrl.step(NAMES, list(Q0), [0.0] * N, [], k * DT)
        assert ctrl.desire(a_goal(20 * DT, move=0.0, efforts=forces), 20 * DT).kind == "tracking"
    for k in range(20, 1000):            # same states: the difference is the feed-forward
        a = base.step(NAMES, list(Q0), [0.0] * N, [], k * DT).command
        b = pushed.step(NAMES, list(Q0), [0.0] * N, [], k * DT).command
    np.testing.assert_allclose(b - a, efforts[0], atol=1e-9)


def test_a_safety_fault_ends_the_goal_with_a_code_and_the_fault():
    loop = Loop()
    goal = loop.goal(duration=2.0, tol=tolerances(trajectory=np.zeros(N)))
    loop.ctrl.desire(goal, loop.t)
    loop.run(0.5)
    loop.arm.set_external_wrench(ROBOT.tip_link, np.array([0, 0, -200.0]), np.zeros(3))
    assert loop.run(2.0, until=lambda: goal.outcome is not None)
    assert loop.ctrl.mode == HOLD
    assert goal.outcome.code == ft.PATH_TOLERANCE_VIOLATED
    assert goal.outcome.message.startswith("ended by the controller: safe hold:")


def test_hardware_compensating_gravity_gets_the_command_without_it_and_the_same_bounds():
    full, partial = controller(), controller(hardware_compensates_gravity=True)
    q = Q0.copy()
    for k in range(50):
        a = full.step(NAMES, list(q), [0.0] * N, [], k * DT).command
        b = partial.step(NAMES, list(q), [0.0] * N, [], k * DT).command
    if a is not None:
        np.testing.assert_allclose(a - b, REF.gravity(q), atol=1e-9)
    tight = ROBOT.effort_limit * 0.3             # g(q) of the shoulder exceeds 30 %
    full, partial = (controller(effort_bound=tight),
                     controller(effort_bound=tight, hardware_compensates_gravity=True))
    for k in range(2000):
        a = full.step(NAMES, list(q), [0.0] * N, [], k * DT).command
        b = partial.step(NAMES, list(q), [0.0] * N, [], k * DT).command
    assert np.all(np.abs(a) <= tight + 1e-12)                # clamped on the full torque
    np.testing.assert_allclose(b, a - REF.gravity(q), atol=1e-9)

"""The trajectory effort check (control/trajectory_check.py): torques against Pinocchio called
per sample, the time scale against re-timing the trajectory, and bad input refused."""

import math

import numpy as np
import pinocchio as pin
import pytest

import robo_dynamics as rd
from robo_dynamics.control.trajectory import Trajectory
from robo_dynamics.control.trajectory_check import check_trajectory, sample_times
from conftest import SHIPPED

ROBOT = rd.load_robot(str(SHIPPED / "rd_ur5e.urdf"))
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])


def swing(duration, amplitude=0.8, scale=1.0):
    """A quintic-spline swing of every joint (positions, velocities, accelerations given at
    21 points), timed `duration` × scale: the same path, `scale` times slower."""
    t = np.linspace(0.0, duration, 21)
    w = 2.0 * np.pi / duration
    q = Q0 + amplitude * np.sin(w * t)[:, None] * np.linspace(1.0, 0.4, 6)
    qd = amplitude * w * np.cos(w * t)[:, None] * np.linspace(1.0, 0.4, 6)
    qdd = -amplitude * w * w * np.sin(w * t)[:, None] * np.linspace(1.0, 0.4, 6)
    return Trajectory(0.0, t * scale, q, qd / scale, qdd / scale ** 2)


@pytest.mark.parametrize("kind", ["quintic", "cubic", "linear"])
def test_sample_many_is_sample_at_each_time(kind):
    trajectory = swing(1.0)
    if kind != "quintic":      # the same points without accelerations (or velocities)
        trajectory = Trajectory(0.0, trajectory.times, trajectory.positions,
                                None if kind == "linear" else trajectory.velocities)
    times = np.concatenate(([-0.1], np.linspace(0.0, 1.0, 1500), [1.2]))   # > one block
    q, qd, qdd = trajectory.sample_many(times)
    for i, t in enumerate(times):
        for got, expected in zip((q[i], qd[i], qdd[i]), trajectory.sample(t)):
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", rd.BACKENDS)
def test_torques_equal_pinocchio_per_sample(backend):
    solver = rd.make_solver(ROBOT, backend)
    trajectory = swing(1.0)
    result = check_trajectory(solver, trajectory, ROBOT.effort_limit, sample_period=0.01)
    reference = rd.make_solver(ROBOT, "pinocchio")
    pm, data = reference.pin_model, reference.pin_model.createData()
    for i, t in enumerate(result.times):
        q, qd, qdd = trajectory.sample(t)
        tau = pin.rnea(pm, data, q, qd, qdd)      # rd_ur5e: Pinocchio's joints are ours
        np.testing.assert_allclose(result.efforts[i], tau, rtol=1e-9, atol=1e-9)
    assert np.allclose(result.peak_effort, np.abs(result.efforts).max(axis=0))


def test_fast_motion_is_refused_and_the_time_scale_is_exact():
    """Slowed by the reported k, the re-timed trajectory (checked from scratch) peaks exactly
    at a limit; slowed a little less, it exceeds one. (Efforts only: the arm here has no
    velocity limits.)"""
    import dataclasses
    unlimited = dataclasses.replace(ROBOT, velocity_limit=np.full(ROBOT.dof, np.inf))
    solver = rd.make_solver(unlimited, "pinocchio")
    fast = check_trajectory(solver, swing(0.4), ROBOT.effort_limit, sample_period=0.002)
    assert not fast.feasible and fast.violation is not None
    v = fast.violation
    assert v.kind == "effort" and abs(v.value) > v.limit and v.joint in ROBOT.joint_names
    assert fast.efforts[v.index, ROBOT.joint_names.index(v.joint)] == v.value
    assert not np.any(np.abs(fast.efforts[:v.index]) > fast.limits)   # it is the first
    k = fast.min_time_scale
    assert 1.0 < k < math.inf and fast.peak_ratio.max() > 1.0
    slowed = check_trajectory(solver, swing(0.4, scale=k), ROBOT.effort_limit,
                              sample_period=0.002 * k)
    assert slowed.feasible and slowed.peak_ratio.max() == pytest.approx(1.0, abs=1e-9)
    assert slowed.min_time_scale == pytest.approx(1.0, abs=1e-9)
    faster = check_trajectory(solver, swing(0.4, scale=0.99 * k), ROBOT.effort_limit,
                              sample_period=0.002 * 0.99 * k)
    assert not faster.feasible


def test_margin_scales_the_limits():
    solver = rd.make_solver(ROBOT, "pinocchio")
    full = check_trajectory(solver, swing(2.0), ROBOT.effort_limit, sample_period=0.01)
    half = check_trajectory(solver, swing(2.0), ROBOT.effort_limit, sample_period=0.01,
                            effort_margin=0.5)
    np.testing.assert_allclose(half.limits, 0.5 * ROBOT.effort_limit)
    np.testing.assert_allclose(half.peak_ratio, 2.0 * full.peak_ratio)


def test_gravity_beyond_a_limit_is_infeasible_at_any_speed():
    solver = rd.make_solver(ROBOT, "pinocchio")
    still = Trajectory(0.0, [0.0, 1.0], [Q0, Q0])
    limits = ROBOT.effort_limit.copy()
    limits[1] = 0.5 * abs(solver.gravity(Q0)[1])        # the shoulder cannot hold the arm
    result = check_trajectory(solver, still, limits, sample_period=0.1)
    assert not result.feasible and result.min_time_scale == math.inf
    assert "gravity alone" in result.reason and "shoulder_lift_joint" in result.reason


def test_bad_arguments_are_refused_with_the_reason():
    solver = rd.make_solver(ROBOT, "pinocchio")
    with pytest.raises(ValueError, match="sample_period"):
        check_trajectory(solver, swing(1.0), ROBOT.effort_limit, sample_period=0.0)
    with pytest.raises(ValueError, match="effort_margin"):
        check_trajectory(solver, swing(1.0), ROBOT.effort_limit, effort_margin=1.5)
    with pytest.raises(ValueError, match="strictly increasing"):
        Trajectory(0.0, [0.0, 1.0, 0.5], [Q0, Q0, Q0])
    with pytest.raises(ValueError, match="finite"):
        Trajectory(0.0, [0.0, 1.0], [Q0, Q0 * np.nan])


def test_sample_times_end_at_the_duration():
    assert sample_times(1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert sample_times(1.1, 0.25).tolist()[-2:] == [1.0, 1.1]


def test_a_move_too_fast_for_the_velocity_limits_is_named_and_its_time_scale_fits():
    """1.5 rad on the wrist in 0.4 s, from rest to rest (a quintic: peak speed 15/8 × 1.5 /
    0.4 = 7.03 rad/s, the URDF's limit 3.14): within the effort limits, beyond the velocity
    limit. The check names it, and its time scale is the closed form 7.03 / 3.14; the same
    path re-timed by that scale fits every limit, and 1 % faster does not."""
    rest = np.zeros((2, 6))
    start, end = Q0.copy(), Q0.copy()
    end[3] += 1.5
    solver = rd.make_solver(ROBOT, "rnea")

    def move(seconds):
        return Trajectory(0.0, [0.0, seconds], np.array([start, end]), rest, rest)
    result = check_trajectory(solver, move(0.4), ROBOT.effort_limit, sample_period=1e-4)
    assert not result.feasible
    assert [v.kind for v in result.violations] == ["velocity"]
    v = result.violation
    assert v.kind == "velocity" and v.joint == ROBOT.joint_names[3]
    assert v.limit == pytest.approx(ROBOT.velocity_limit[3])
    expected = (15.0 / 8.0) * 1.5 / 0.4 / ROBOT.velocity_limit[3]
    assert result.min_time_scale == pytest.approx(expected, rel=1e-6)
    assert "velocity of 'wrist_1_joint'" in result.reason
    k = result.min_time_scale
    assert check_trajectory(solver, move(0.4 * k * (1 + 1e-9)), ROBOT.effort_limit,
                            sample_period=1e-4).feasible
    assert not check_trajectory(solver, move(0.4 * k * 0.99), ROBOT.effort_limit,
                                sample_period=1e-4).feasible


def test_acceleration_limits_scale_with_the_square_root_and_positions_at_no_speed():
    rest = np.zeros((2, 6))
    start, end = Q0.copy(), Q0.copy()
    end[4] += 0.5
    solver = rd.make_solver(ROBOT, "rnea")
    move = Trajectory(0.0, [0.0, 2.0], np.array([start, end]), rest, rest)
    # a quintic's peak acceleration: 10 / √3 × Δq / T²
    peak = 10.0 / math.sqrt(3.0) * 0.5 / 4.0
    limits = np.full(6, np.inf)
    limits[4] = peak / 4.0
    result = check_trajectory(solver, move, ROBOT.effort_limit, sample_period=1e-4,
                              acceleration_limits=limits)
    assert [v.kind for v in result.violations] == ["acceleration"]
    assert result.min_time_scale == pytest.approx(2.0, rel=1e-4)
    beyond = end.copy()
    beyond[1] = ROBOT.upper[1] + 0.1
    far = Trajectory(0.0, [0.0, 20.0], np.array([start, beyond]), rest, rest)
    result = check_trajectory(solver, far, ROBOT.effort_limit, sample_period=1e-2)
    assert result.violation.kind == "position" and math.isinf(result.min_time_scale)
    assert "position limits at any speed" in result.reason


ECHOED = """header:
  stamp:
    sec: 0
    nanosec: 0
  frame_id: ''
joint_names:
- elbow_joint
- shoulder_pan_joint
- shoulder_lift_joint
- wrist_1_joint
- wrist_2_joint
- wrist_3_joint
points:
- positions: [1.4, 0.3, -1.1, -0.9, 1.2, 0.4]
  velocities: []
  accelerations: []
  effort: []
  time_from_start:
    sec: 0
    nanosec: 0
- positions: [1.2, 0.5, -1.0, -0.8, 1.1, 0.3]
  velocities: []
  accelerations: []
  effort: []
  time_from_start:
    sec: 1
    nanosec: 500000000
---
"""


def test_a_trajectory_as_ros2_topic_echo_prints_it_loads_and_two_are_refused(tmp_path):
    """`ros2 topic echo --once` output, its header and the `---` after the message included,
    joints in another order than the chain's: the knots' positions at their times, in
    model order, are the file's numbers; a file of two messages (echo without --once) is
    refused with the reason."""
    from robo_dynamics.io.trajectory_yaml import load_trajectory
    names = list(rd.load_robot(SHIPPED / "rd_ur5e.urdf").joint_names)
    path = tmp_path / "echoed.yaml"
    path.write_text(ECHOED)
    trajectory = load_trajectory(str(path), names)
    np.testing.assert_allclose(trajectory.sample(0.0)[0], [0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
    np.testing.assert_allclose(trajectory.sample(1.5)[0], [0.5, -1.0, 1.2, -0.8, 1.1, 0.3])
    path.write_text(ECHOED + ECHOED)
    with pytest.raises(ValueError, match="2 messages"):
        load_trajectory(str(path), names)

"""dynamics_node's ~/check_trajectory over ROS 2: peak torques against Pinocchio called per
sample, the time scale against re-timing the trajectory, payloads, and bad requests answered
with the reason while the node keeps publishing."""

import math
import threading

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Inertia, Vector3
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

import robo_dynamics as rd
from robo_dynamics.control.trajectory import Trajectory
from robo_dynamics_interfaces.srv import CheckTrajectory, SetPayload
import ros_harness
from conftest import SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
NAMES = list(ROBOT.joint_names)
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])
SHAPE = np.linspace(1.0, 0.4, 6)
PERIOD = 0.005


@pytest.fixture(scope="module", autouse=True)
def ros_context(ros):
    yield


@pytest.fixture(scope="module")
def harness(ros):
    h = ros_harness.Harness(default_state=(NAMES, Q0, np.zeros(6)), backend="pinocchio",
                            robot_description_file=URDF)
    yield h
    h.close()


def swing(duration, scale=1.0, amplitude=0.8):
    """(waypoints, message): a sine swing of every joint through 21 points with positions,
    velocities and accelerations, timed duration × scale; the message names the joints in
    reverse order (the node maps them by name)."""
    t = np.linspace(0.0, duration, 21)
    w = 2.0 * np.pi / duration
    q = Q0 + amplitude * np.sin(w * t)[:, None] * SHAPE
    qd = amplitude * w * np.cos(w * t)[:, None] * SHAPE / scale
    qdd = -amplitude * w * w * np.sin(w * t)[:, None] * SHAPE / scale ** 2
    msg = JointTrajectory(joint_names=NAMES[::-1])
    for k in range(len(t)):
        nanoseconds = int(round(t[k] * scale * 1e9))
        msg.points.append(JointTrajectoryPoint(
            positions=q[k, ::-1].tolist(), velocities=qd[k, ::-1].tolist(),
            accelerations=qdd[k, ::-1].tolist(),
            time_from_start=Duration(sec=nanoseconds // 10 ** 9,
                                     nanosec=nanoseconds % 10 ** 9)))
    times = [p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points]
    return Trajectory(0.0, times, q, qd, qdd), msg


def pinocchio_peaks(waypoints, model, period):
    """max |τ| per joint, Pinocchio called at every sample time 0, Δt, … (and the end)."""
    solver = rd.make_solver(model, "pinocchio")
    end = waypoints.times[-1]
    times = np.append(np.arange(0.0, end - 1e-12, period), end)
    taus = [solver.inverse_dynamics(*waypoints.sample(t)) for t in times]
    return np.max(np.abs(taus), axis=0), len(times)


def check(harness, msg, **fields):
    return harness.call(CheckTrajectory, "check_trajectory",
                        CheckTrajectory.Request(trajectory=msg, sample_period=PERIOD,
                                                **fields))


def test_peaks_equal_pinocchio_per_sample_and_the_message_says_within(harness):
    waypoints, msg = swing(3.0)
    response = check(harness, msg)
    assert response.success, response.message
    peaks, samples = pinocchio_peaks(waypoints, ROBOT, PERIOD)
    assert list(response.joint_names) == NAMES and response.samples == samples
    np.testing.assert_allclose(response.peak_effort, peaks, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(response.peak_ratio, peaks / ROBOT.effort_limit, rtol=1e-9)
    assert response.feasible and response.min_time_scale == 1.0
    assert "within the limits" in response.message


def test_too_fast_is_refused_and_slowed_by_the_time_scale_it_fits(harness):
    """A short fast swing (0.08 rad in 0.2 s: beyond the effort limits, within the velocity
    limits)."""
    _, fast = swing(0.2, amplitude=0.08)
    response = check(harness, fast)
    assert response.success and not response.feasible
    k = response.min_time_scale
    assert 1.0 < k < math.inf
    j = NAMES.index(response.violation_joint)
    assert response.violation_kind == "effort"
    assert abs(response.violation_effort) > response.violation_limit == ROBOT.effort_limit[j]
    assert response.violation_time == pytest.approx(response.violation_index * PERIOD)
    assert response.violation_joint in response.message
    # re-timed by k (every time_from_start × k, sampled k times further apart): exactly at
    # the limit (up to the nanoseconds of time_from_start)
    _, slowed = swing(0.2, scale=k, amplitude=0.08)
    answer = harness.call(CheckTrajectory, "check_trajectory", CheckTrajectory.Request(
        trajectory=slowed, sample_period=PERIOD * k))
    assert answer.success
    assert max(answer.peak_ratio) == pytest.approx(1.0, abs=1e-9)
    assert answer.min_time_scale == pytest.approx(1.0, abs=1e-9)
    _, faster = swing(0.2, scale=0.98 * k, amplitude=0.08)
    assert not check(harness, faster).feasible


def test_a_move_beyond_the_velocity_bound_is_named_with_the_time_scale_that_fits(harness):
    """1.5 rad of wrist 1 in 0.4 s from rest to rest: a quintic, peak speed 15/8 × 1.5 / 0.4
    = 7.03 rad/s against the URDF's 3.14 (the node's velocity bound at the default
    velocity_limit_scale 1): refused, named, and slowed by exactly 7.03 / 3.14."""
    start, end = Q0.copy(), Q0.copy()
    end[3] += 1.5
    msg = JointTrajectory(joint_names=NAMES)
    for seconds, q in ((0, start), (0.4, end)):
        msg.points.append(JointTrajectoryPoint(
            positions=q.tolist(), velocities=[0.0] * 6, accelerations=[0.0] * 6,
            time_from_start=Duration(sec=0, nanosec=int(seconds * 1e9))))
    response = harness.call(CheckTrajectory, "check_trajectory", CheckTrajectory.Request(
        trajectory=msg, sample_period=1e-4))
    assert response.success and not response.feasible
    assert response.violation_kind == "velocity" and response.violation_joint == NAMES[3]
    assert response.violation_limit == pytest.approx(ROBOT.velocity_limit[3])
    expected = 15.0 / 8.0 * 1.5 / 0.4 / ROBOT.velocity_limit[3]
    assert response.min_time_scale == pytest.approx(expected, rel=1e-6)
    assert "velocity of 'wrist_1_joint'" in response.message


def test_a_payload_in_the_request_and_the_payload_in_use(harness):
    waypoints, msg = swing(3.0)
    payload = Inertia(m=2.0, com=Vector3(x=0.0, y=0.0, z=0.05), ixx=0.01, iyy=0.01, izz=0.01)
    response = check(harness, msg, payload_link="tool0", payload=payload)
    assert response.success, response.message
    loaded = ROBOT.with_payload("tool0", 2.0, [0.0, 0.0, 0.05], np.diag([0.01] * 3))
    peaks, _ = pinocchio_peaks(waypoints, loaded, PERIOD)
    np.testing.assert_allclose(response.peak_effort, peaks, rtol=1e-9, atol=1e-9)
    unloaded, _ = pinocchio_peaks(waypoints, ROBOT, PERIOD)
    assert not np.allclose(peaks, unloaded, rtol=1e-3)     # the payload matters here
    assert harness.call(SetPayload, "set_payload", SetPayload.Request(
        link="tool0", mass=2.0, center_of_mass=payload.com, ixx=0.01, iyy=0.01,
        izz=0.01)).success
    try:
        in_use = check(harness, msg)                       # no payload given: the one in use
        np.testing.assert_allclose(in_use.peak_effort, peaks, rtol=1e-9, atol=1e-9)
        without = check(harness, msg, payload_link="tool0", payload=Inertia(m=0.0))
        np.testing.assert_allclose(without.peak_effort, unloaded, rtol=1e-9, atol=1e-9)
    finally:
        assert harness.call(SetPayload, "set_payload",
                            SetPayload.Request(link="tool0", mass=0.0)).success


def nice_of(thread_id):
    """The nice value of one thread of this process (/proc, field 19 of stat)."""
    with open(f"/proc/self/task/{thread_id}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[16])


def test_the_check_runs_on_a_thread_of_lower_priority(harness):
    _, msg = swing(3.0)
    assert check(harness, msg).success
    workers = [t for t in threading.enumerate() if t.name.startswith("dynamics_node_background")]
    assert len(workers) == 1
    main = nice_of(threading.main_thread().native_id)
    assert nice_of(workers[0].native_id) == min(19, main + 10)


def test_gravity_alone_beyond_the_margin_is_infeasible_at_any_speed(harness):
    _, msg = swing(3.0)
    response = check(harness, msg, effort_margin=0.05)
    assert response.success and not response.feasible
    assert response.min_time_scale == math.inf and "at any speed" in response.message


def bad(msg_change=None, **fields):
    _, msg = swing(1.0)
    if msg_change is not None:
        msg_change(msg)
    return CheckTrajectory.Request(trajectory=msg, **fields)


def _unknown_joint(msg):
    msg.joint_names[0] = "nope"


def _backwards(msg):
    msg.points[3].time_from_start = Duration(sec=0, nanosec=1)


def _nan(msg):
    msg.points[2].positions[1] = math.nan


def _huge_velocity(msg):
    msg.points[2].velocities[1] = 1e200          # finite, but its square is not


def _short(msg):
    msg.points[4].velocities = msg.points[4].velocities[:3]


@pytest.mark.parametrize("request_msg, fragment", [
    (bad(_unknown_joint), "unknown ['nope']"),
    (bad(_backwards), "strictly increasing"),
    (bad(_nan), "must be finite"),
    (bad(_short), "every point needs 6 velocities"),
    (bad(_huge_velocity), "the torques are not finite"),
    (CheckTrajectory.Request(), "trajectory has no points"),
    (bad(effort_margin=1.5), "effort_margin must be in (0, 1]"),
    (bad(effort_margin=math.nan), "effort_margin must be in (0, 1]"),
    (bad(sample_period=-1.0), "sample_period must be > 0"),
    (bad(sample_period=1e-9), "use a longer sample_period"),
    (bad(payload=Inertia(m=1.0)), "a payload needs payload_link"),
    (bad(payload_link="tool0", payload=Inertia(m=1e6)), "<= max_payload_mass"),
    (bad(payload_link="nowhere", payload=Inertia(m=1.0)), "'nowhere' is not a moving link"),
    (bad(payload_link="tool0", payload=Inertia(m=1.0, ixx=0.1, iyy=0.1, izz=0.5)),
     "triangle inequality"),
], ids=["unknown joint", "time backwards", "NaN", "short velocities", "huge velocity",
        "empty", "margin", "margin NaN", "period", "too many samples", "payload without link",
        "heavy payload", "unknown link", "unphysical inertia"])
def test_bad_requests_answer_false_with_the_reason(harness, request_msg, fragment):
    response = harness.call(CheckTrajectory, "check_trajectory", request_msg)
    assert not response.success and fragment in response.message, response.message
    harness.stream("gravity")                             # the node still works

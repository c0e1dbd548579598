"""~/follow_joint_trajectory over ROS 2 with an action client that behaves as MoveIt's
(control_msgs/FollowJointTrajectory, goal → feedback → result): dynamics_node drives the UR5e
simulated by MuJoCo (sim_arm, lockstep on simulated time, never faster than real time, so
that what the client does at a wall-clock moment lands near the simulated moment meant). Success within the goal
tolerance, feedback whose desired.effort is Pinocchio's inverse dynamics, each refusal code,
a push beyond the path tolerance (held where it is), a cancel (stopped within the
deceleration), a continuation, a future start."""

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from rclpy.action import ActionClient
from trajectory_msgs.msg import JointTrajectoryPoint

import robo_dynamics as rd
from robo_dynamics.demo.supervisor import forearm_push
from ros_harness import Loop, closed_loop_nodes
from conftest import SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
PINOCCHIO = rd.make_solver(ROBOT, "pinocchio")
NAMES = list(ROBOT.joint_names)
N = len(NAMES)
Q0 = [0.0, -1.2, 1.3, -1.6, -1.57, 0.0]
R = FollowJointTrajectory.Result
TIMEOUT = 300.0      # s: a hang guard only; each wait is for the action's result


@pytest.fixture(scope="module")
def loop(ros):
    """sim_arm (MuJoCo) ↔ dynamics_node, lockstep on simulated time, and a client node."""
    sim, node = closed_loop_nodes(
        URDF, Q0, {"engine": "mujoco",
                   "lockstep_max_speed": 1.0},   # as a real arm: what the client does lands
        {"kp": [400.0], "kd": [40.0], "collision_reaction": "none"})        # in time
    closed = Client(sim, node)
    assert closed.spin_until(lambda: node.controller is not None and node.controller.running,
                             timeout=60.0)
    yield closed
    closed.close()


class Client(Loop):
    def __init__(self, sim, node):
        super().__init__(sim, node)
        self.sim, self.node = sim, node
        self.peer = self.add(rclpy.create_node("moveit_like_client"))
        self.client = ActionClient(self.peer, FollowJointTrajectory,
                                   "/dynamics_node/follow_joint_trajectory")
        self.push = self.peer.create_publisher(WrenchStamped, "/sim_arm/external_wrench", 10)
        self.feedback, self.states, self.truth = [], [], []
        self.peer.create_subscription(JointState, "/joint_states", self.states.append, 1000)
        # sim_arm publishes a push's joint torques once, when it takes the push
        self.peer.create_subscription(JointState, "/sim_arm/external_joint_torques",
                                      self.truth.append, 100)
        assert self.spin_until(lambda: self.push.get_subscription_count() > 0
                               and sim.pub_external.get_subscription_count() > 0)

    def q(self):
        """The simulated arm's joint positions (MuJoCo's state, model order)."""
        return self.sim.arm.q.copy()

    def now(self):
        return self.node.get_clock().now().nanoseconds * 1e-9

    def send(self, goal):
        """Send a goal: its handle once accepted (every goal is)."""
        assert self.client.wait_for_server(timeout_sec=10.0)
        self.feedback = []
        sent = self.client.send_goal_async(goal, feedback_callback=self.feedback.append)
        assert self.spin_until(sent.done, timeout=30.0)
        handle = sent.result()
        assert handle.accepted
        return handle

    def result(self, handle):
        """(status, result) of a goal, waiting for its end."""
        future = handle.get_result_async()
        assert self.spin_until(future.done, timeout=TIMEOUT)
        return future.result().status, future.result().result

    def run(self, goal):
        return self.result(self.send(goal))


def duration(t):
    return Duration(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))


def goal_from(q_start, move, seconds, count=11, names=NAMES, first=0.0, **fields):
    """A smooth move of `move` (n,) from q_start over `seconds` (points from time `first`),
    with velocities and accelerations, as MoveIt's time parameterisation gives."""
    goal = FollowJointTrajectory.Goal(**fields)
    goal.trajectory.joint_names = list(names)
    order = [NAMES.index(name) for name in names]
    for t in np.linspace(0.0, seconds, count):
        s = t / seconds
        shape, rate = 10 * s**3 - 15 * s**4 + 6 * s**5, (30 * s**2 - 60 * s**3 + 30 * s**4)
        accel = (60 * s - 180 * s**2 + 120 * s**3)
        q = np.asarray(q_start) + shape * np.asarray(move)
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=q[order].tolist(),
            velocities=(rate / seconds * np.asarray(move))[order].tolist(),
            accelerations=(accel / seconds**2 * np.asarray(move))[order].tolist(),
            time_from_start=duration(first + t)))
    return goal


MOVE = np.array([0.4, -0.3, 0.3, 0.2, 0.3, 0.5])


def test_a_goal_is_tracked_to_success_with_feedback_and_the_model_torque(loop):
    q0 = loop.q()
    goal = goal_from(q0, MOVE, 2.0, names=NAMES[::-1])          # any joint order
    goal.goal_tolerance = [JointTolerance(name=name, position=0.002) for name in NAMES]
    status, result = loop.run(goal)
    assert result.error_code == R.SUCCESSFUL, result.error_string
    assert status == 4                                            # SUCCEEDED
    assert np.max(np.abs(loop.q() - (q0 + MOVE))) <= 0.002
    feedback = [f.feedback for f in loop.feedback]
    assert len(feedback) >= 10
    # at action_monitor_rate (50 Hz) on simulated time: stamps (each of the last joint state
    # the goal saw, 500 Hz) at least 20 ms − one state period apart, whatever the wall clock
    stamps = np.array([f.header.stamp.sec + 1e-9 * f.header.stamp.nanosec for f in feedback])
    assert np.min(np.diff(stamps)) >= 0.02 - 0.002 - 1e-9, np.diff(stamps)
    errors = [np.max(np.abs(f.error.positions)) for f in feedback]
    assert max(errors) < 0.2                                      # the default path tolerance
    f = feedback[len(feedback) // 2]
    assert list(f.joint_names) == NAMES
    expected = PINOCCHIO.inverse_dynamics(np.array(f.desired.positions),
                                          np.array(f.desired.velocities),
                                          np.array(f.desired.accelerations))
    np.testing.assert_allclose(f.desired.effort, expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.subtract(f.desired.positions, f.actual.positions),
                               f.error.positions, atol=1e-12)
    # then it holds the last point (a position hold, not the gravity float)
    held = loop.q()
    t = loop.now()
    assert loop.spin_until(lambda: loop.now() > t + 1.0, timeout=60.0)
    assert np.max(np.abs(loop.q() - held)) < 1e-3


def test_each_goal_that_cannot_run_ends_with_its_code_and_reason(loop):
    q0 = loop.q()
    missing = goal_from(q0, MOVE, 2.0)
    missing.trajectory.joint_names = NAMES[:-1]
    for point in missing.trajectory.points:
        for field in ("positions", "velocities", "accelerations"):
            setattr(point, field, list(getattr(point, field))[:-1])
    far = goal_from(q0 + 0.1, MOVE, 2.0)                         # starts 0.1 rad away
    assert loop.spin_until(lambda: loop.now() > 3.0, timeout=60.0)
    old = goal_from(q0, MOVE, 2.0)
    old.trajectory.header.stamp.sec = int(loop.now() - 1.0)       # 1 s or more ago (not 0)
    fast = goal_from(q0, MOVE * 1.5, 0.12)                       # torques beyond the limits
    beyond = goal_from(q0, np.array([0, 0, 4.5, 0, 0, 0]) - q0 * [0, 0, 1, 0, 0, 0], 3.0)
    not_finite = goal_from(q0, MOVE, 2.0)
    not_finite.trajectory.points[3].positions[2] = float("nan")
    backwards = goal_from(q0, MOVE, 2.0)
    backwards.trajectory.points[4].time_from_start = duration(0.1)
    pushing = goal_from(q0, MOVE, 2.0)                           # a feed-forward too large
    for point in pushing.trajectory.points:
        point.effort = [0.0, 0.0, 0.0, 0.0, 0.0, 40.0]            # wrist 3: 28 N·m bound
    bad_tolerance = goal_from(q0, MOVE, 2.0)
    bad_tolerance.path_tolerance = [JointTolerance(name=NAMES[0], position=-0.5)]
    cases = [(missing, R.INVALID_JOINTS, "missing ['wrist_3_joint']"),
             (far, R.INVALID_GOAL, "start_tolerance"),
             (old, R.OLD_HEADER_TIMESTAMP, "was due"),
             (fast, R.INVALID_GOAL, "slowed by"),
             (beyond, R.INVALID_GOAL, "'elbow_joint'"),           # its URDF limit ±π
             (not_finite, R.INVALID_GOAL, "finite"),
             (backwards, R.INVALID_GOAL, "strictly increasing"),
             (pushing, R.INVALID_GOAL, "with its efforts (feed-forward), the torque of "
                                       "'wrist_3_joint'"),
             (bad_tolerance, R.INVALID_GOAL, "-1 (not checked)")]
    for goal, code, words in cases:
        status, result = loop.run(goal)
        assert status == 6 and result.error_code == code, result.error_string   # ABORTED
        assert words in result.error_string, result.error_string
    assert np.max(np.abs(loop.q() - q0)) < 1e-3                  # nothing moved


def test_a_push_beyond_the_path_tolerance_aborts_and_holds_the_arm_where_it_is(loop):
    q0 = loop.q()
    goal = goal_from(q0, -MOVE, 4.0)
    goal.path_tolerance = [JointTolerance(name=name, position=0.005) for name in NAMES]
    handle = loop.send(goal)
    assert loop.spin_until(lambda: len(loop.feedback) >= 20, timeout=60.0)
    push = forearm_push(ROBOT, 30.0)        # a steady error of about 1e-2 rad (K_p⁻¹ M⁻¹ τ)
    loop.push.publish(push)
    status, result = loop.result(handle)
    loop.push.publish(WrenchStamped(header=push.header))          # released
    assert status == 6 and result.error_code == R.PATH_TOLERANCE_VIOLATED, result.error_string
    assert "path tolerance violated" in result.error_string
    assert "holds where it is" in result.error_string
    t = loop.now()
    assert loop.spin_until(lambda: loop.now() > t + 1.0, timeout=60.0)
    held = loop.q()
    t = loop.now()
    assert loop.spin_until(lambda: loop.now() > t + 1.0, timeout=60.0)
    assert np.max(np.abs(loop.q() - held)) < 1e-3                # held, not floating
    assert loop.node.controller.mode == "tracking"
    assert np.max(np.abs(held - (q0 - MOVE))) > 0.05             # short of the goal


def test_a_cancel_stops_along_the_path_within_the_deceleration(loop):
    """stop_deceleration 2 rad/s² (the default): the arm (MuJoCo's joint velocities, on
    simulated time) slows at about that, stops on the path short of its end, then holds."""
    q0 = loop.q()
    handle = loop.send(goal_from(q0, MOVE, 2.0))
    assert loop.spin_until(lambda: loop.feedback and loop.feedback[-1].feedback.desired
                           .time_from_start.sec >= 1, timeout=60.0)
    cancelled = handle.cancel_goal_async()
    loop.states.clear()
    status, result = loop.result(handle)
    assert cancelled.done()
    assert status == 5 and result.error_code == R.SUCCESSFUL, result.error_string  # CANCELED
    assert "stopped along the path" in result.error_string
    t = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in loop.states])
    v = np.array([m.velocity for m in loop.states])
    speed = np.max(np.abs(v), axis=1)
    assert speed[0] > 0.2                                      # it was moving
    k = np.argmax(speed < 0.01)                                # stopped (the goal's rule)
    assert speed[k] < 0.01
    slowing = np.abs(np.diff(v[:k], axis=0)) / np.diff(t[:k])[:, None]
    smooth = np.convolve(np.max(slowing, axis=1), np.ones(10) / 10, mode="valid")
    assert smooth.max() <= 2.0 * 1.3, smooth.max()             # about the deceleration
    assert t[k] - t[0] >= 0.8 * speed[0] / 2.0                 # not faster than it allows
    stopped = loop.q()
    progress = (stopped - q0) / MOVE
    assert np.allclose(progress, progress[0], atol=0.02)       # on the path
    assert 0.5 < progress[0] < 1.0                             # before its end


def test_a_continuation_replaces_the_running_goal_and_a_future_stamp_waits(loop):
    q0 = loop.q()
    first = loop.send(goal_from(q0, MOVE, 3.0))
    assert loop.spin_until(lambda: len(loop.feedback) >= 25, timeout=60.0)
    desired = np.array(loop.feedback[-1].feedback.desired.positions)
    second = loop.send(goal_from(desired, -MOVE, 3.0, first=0.1))
    status, result = loop.result(first)
    assert status == 6 and result.error_code == R.INVALID_GOAL
    assert "replaced" in result.error_string
    status, result = loop.result(second)
    assert result.error_code == R.SUCCESSFUL, result.error_string
    # a stamp 1 s ahead: nothing moves until then
    q1 = loop.q()
    goal = goal_from(q1, MOVE * 0.5, 1.0)
    start = loop.now() + 1.0
    goal.trajectory.header.stamp.sec = int(start)
    goal.trajectory.header.stamp.nanosec = int((start - int(start)) * 1e9)
    handle = loop.send(goal)
    assert loop.spin_until(lambda: loop.now() > start - 0.2, timeout=60.0)
    assert np.max(np.abs(loop.q() - q1)) < 1e-3
    status, result = loop.result(handle)
    assert result.error_code == R.SUCCESSFUL, result.error_string
    assert np.max(np.abs(loop.q() - (q1 + 0.5 * MOVE))) < 0.02


def test_a_steady_push_misses_the_goal_tolerance_and_the_efforts_feed_forward_cancel_it(loop):
    """A 30 N push on the forearm (at its end, across it) held through a goal that stays
    where the arm is: computed
    torque leaves a steady error (K_p⁻¹ M⁻¹ τ_push) beyond a 2 mrad goal tolerance, so the
    goal ends GOAL_TOLERANCE_VIOLATED goal_time_tolerance after its last point. The same
    goal with the points' efforts = −τ_push (the push's joint torques, as sim_arm publishes
    them: the truth) cancels it: SUCCESSFUL."""
    status, result = loop.run(goal_from(loop.q(), np.zeros(N), 0.5))   # hold where it is
    assert result.error_code == R.SUCCESSFUL, result.error_string
    truth = loop.truth
    before = len(truth)
    push = forearm_push(ROBOT, 30.0)          # at its end, across it and the elbow axis
    loop.push.publish(push)
    assert loop.spin_until(lambda: len(truth) > before, timeout=60.0)
    assert max(map(abs, truth[-1].effort)) > 5.0           # a push the joints feel
    t = loop.now()
    assert loop.spin_until(lambda: loop.now() > t + 1.0, timeout=60.0)     # settled
    tight = [JointTolerance(name=name, position=0.002) for name in NAMES]
    unchecked = [JointTolerance(name=name, position=-1.0) for name in NAMES]
    try:
        q = loop.q()
        goal = goal_from(q, np.zeros(N), 1.0, path_tolerance=unchecked, goal_tolerance=tight,
                         goal_time_tolerance=duration(0.3))
        status, result = loop.run(goal)
        assert status == 6 and result.error_code == R.GOAL_TOLERANCE_VIOLATED, \
            result.error_string
        assert "goal tolerance violated 0.30" in result.error_string, result.error_string
        assert np.max(np.abs(loop.q() - q)) > 0.002
        t = loop.now()
        assert loop.spin_until(lambda: loop.now() > t + 0.5, timeout=60.0)   # settled again
        q = loop.q()
        last = truth[-1]
        tau_push = np.array([last.effort[list(last.name).index(name)] for name in NAMES])
        goal = goal_from(q, np.zeros(N), 1.0, path_tolerance=unchecked, goal_tolerance=tight,
                         goal_time_tolerance=duration(0.3))
        for point in goal.trajectory.points:
            point.effort = (-tau_push).tolist()
        status, result = loop.run(goal)
        assert status == 4 and result.error_code == R.SUCCESSFUL, result.error_string
        assert np.max(np.abs(loop.q() - q)) <= 0.002
    finally:
        loop.push.publish(WrenchStamped(header=push.header))

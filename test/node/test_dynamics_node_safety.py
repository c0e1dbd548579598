"""dynamics_node's safety envelope through ROS, on simulated time: the input rate, the
torque-rate limit across source switches, a far set-point refused, velocity and tracking
faults → the safe hold on the same state, a hold that fails stops the commands.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported)."""

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from rclpy.time import Time
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robo_dynamics_interfaces.msg import ControllerEvent
from robo_dynamics_interfaces.srv import SetPayload
from conftest import rel

from node_harness import (NAMES, Q, REF, ROBOT, SIM, SimulatedClock, assert_rate_limited,  # noqa: F401 (fixtures)
                          backend, diagnostic_status, diagnostic_value, harness, ros_context)


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_input_rate_counts_the_states_of_the_last_second_of_the_node_clock(harness):
    """/diagnostics input_rate_hz: the joint states accepted within the last second of the
    node's clock; none after the clock went back (simulated time restarting)."""
    clock = SimulatedClock(harness)
    for t in (100.0, 100.05, 100.1, 100.15, 100.2):
        clock.set(t)
        harness.send_and_wait(NAMES, Q)

    def rate_at(t):
        """input_rate_hz of the first report made at node time t (the clock set to t)."""
        clock.set(t)
        start = len(harness.inbox["diagnostics"])
        ns = Time(seconds=t).nanoseconds
        at_t = lambda: [d for d in harness.inbox["diagnostics"][start:]     # noqa: E731
                        if Time.from_msg(d.header.stamp).nanoseconds == ns]
        assert harness.spin_until(at_t), f"no /diagnostics at t = {t}"
        return int(diagnostic_value(at_t()[0], "input_rate_hz"))
    assert rate_at(100.9) == 5
    assert rate_at(101.125) == 2       # 100.0, 100.05, 100.1 are more than 1 s old
    clock.set(50.0)                    # the clock goes back; the timer runs on from there
    assert rate_at(50.1) == 0


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_commands_never_change_faster_than_the_limit_across_source_switches(harness):
    clock = SimulatedClock(harness)
    t = 100.0
    node = harness.node

    def run(steps, q=Q):
        nonlocal t
        for _ in range(steps):
            t += 0.002
            clock.state(t, q)
    run(60)                                           # start-up: a ramp from zero to g(q)
    assert rel(clock.log[-1][1], REF.gravity(Q)) <= 1e-9
    harness.set_point.publish(JointState(name=NAMES, position=list(Q + 0.009)))
    assert harness.spin_until(lambda: node.controller.mode == "tracking")
    run(40)                                           # gravity -> computed torque
    traj = JointTrajectory(joint_names=NAMES)
    traj.header.stamp = Time(seconds=t).to_msg()
    traj.points = [JointTrajectoryPoint(positions=list(Q), time_from_start=Duration(sec=0)),
                   JointTrajectoryPoint(positions=list(Q + [0, 0.3, 0, 0, 0, 0]),
                                        time_from_start=Duration(sec=2))]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: node.controller.motion is not None
                              and hasattr(node.controller.motion, "times"))
    run(40)                                           # a new trajectory
    assert harness.call(SetPayload, "set_payload",
                        SetPayload.Request(link="tool0", mass=4.0)).success
    run(40)                                           # a payload
    assert node.set_parameters([Parameter("kp", value=[3000.0])])[0].successful
    run(40)                                           # a gain change
    t += 0.5                                          # 0.5 s without joint states
    run(60)                                           # resumed: the motion is abandoned
    assert node.controller.mode == "hold"
    kinds = [e.kind for e in harness.inbox["events"]]
    assert kinds[:2] == ["started", "tracking"] and "model" in kinds
    # the gap in the motion ends it for the hold: seen by the node's watch on the clock
    # (stale, safe_hold, then resumed), or, when the state after the jump comes before the
    # watch looks, on resuming (resumed, safe_hold); the same commands either way
    assert kinds[-2:] in (["resumed", "safe_hold"], ["safe_hold", "resumed"]), kinds
    assert_rate_limited(clock.log, 1000.0)
    # and the ramps really were needed: the targets jumped by more than one step allows
    assert node.controller.counts["rate_limited"] >= 5


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_a_set_point_two_radians_away_is_refused_with_the_reason(harness):
    clock = SimulatedClock(harness)
    for k in range(5):
        clock.state(50.0 + 0.002 * k)
    far = Q + [2.0, 0, 0, 0, 0, 0]
    harness.set_point.publish(JointState(name=NAMES, position=list(far)))
    assert harness.spin_until(lambda: any(e.kind == "refused" for e in harness.inbox["events"]))
    event = [e for e in harness.inbox["events"] if e.kind == "refused"][-1]
    assert event.level == ControllerEvent.WARN and event.mode == "gravity"
    assert "shoulder_pan_joint" in event.message and "start_tolerance" in event.message
    assert harness.node.controller.mode == "gravity"
    before = clock.log[-1][1]
    after = clock.state(50.010)                       # the command did not move towards far
    assert np.max(np.abs(after - before)) <= 1000.0 * 0.002 + 1e-9
    clock.set(50.1)
    assert harness.spin_until(lambda: diagnostic_value(harness.inbox["diagnostics"][-1],
                                             "desired_motions_refused") == "1")


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_velocity_fault_gives_the_safe_hold_on_the_same_joint_state(harness):
    clock = SimulatedClock(harness)
    t = 10.0
    for k in range(60):
        t += 0.002
        clock.state(t)
    last = clock.log[-1][1]
    qd = np.zeros(6)
    qd[1] = 1.2 * ROBOT.velocity_limit[1]
    t += 0.002
    command = clock.state(t, Q, qd)                   # the joint state that shows the fault
    # the documented hold: M(q)(−λ q̇) + C(q, q̇) q̇ + g(q), λ = 20/s on the moving shoulder
    # (Pinocchio's M, C, g); where that passes an effort limit the deceleration scaled
    # down to what the limits allow; then within what this cycle's command can reach (one
    # 2 ms step at 1000 N m/s from the last command): the joints whose torque would leave
    # that range held at its edge, in turn, and the others' accelerations kept
    # (docs/node.md): M_FF a_F + M_FS a_S = τ_F − h_F
    M, h = REF.mass_matrix(Q), REF.coriolis_matrix(Q, qd) @ qd + REF.gravity(Q)
    bound = ROBOT.effort_limit
    lo = np.maximum(last - 2.0, -bound)
    hi = np.minimum(last + 2.0, bound)
    a = -20.0 * qd
    scales = [(np.sign(d) * b - g) / d for d, g, b in zip(M @ a, h, bound) if abs(g + d) > b]
    a = min([1.0, *scales]) * a
    expected, S = h + M @ a, np.zeros(6, dtype=bool)
    while np.any(((expected < lo) | (expected > hi)) & ~S):
        S |= (expected < lo) | (expected > hi)
        s_, f_ = np.flatnonzero(S), np.flatnonzero(~S)
        expected[s_] = np.clip(expected[s_], lo[s_], hi[s_])
        a_S = np.linalg.solve(M[np.ix_(s_, s_)],
                              expected[s_] - h[s_] - M[np.ix_(s_, f_)] @ a[f_])
        expected[f_] = h[f_] + M[np.ix_(f_, f_)] @ a[f_] + M[np.ix_(f_, s_)] @ a_S
    assert S.any() and not S.all()                     # the rule is exercised
    np.testing.assert_allclose(command, expected, rtol=0, atol=1e-9)
    assert harness.spin_until(lambda: any(e.kind == "safe_hold" for e in harness.inbox["events"]))
    event = [e for e in harness.inbox["events"] if e.kind == "safe_hold"][-1]
    assert event.level == ControllerEvent.ERROR and "shoulder_lift_joint" in event.message
    clock.set(t + 0.05)
    assert harness.spin_until(lambda: diagnostic_status(harness.inbox["diagnostics"][-1]).level
                              == DiagnosticStatus.ERROR)
    assert "safe hold" in diagnostic_status(harness.inbox["diagnostics"][-1]).message


@pytest.mark.parametrize("harness", [{**SIM, "hold_timeout": 0.1}], indirect=True)
def test_a_hold_that_does_not_stop_the_arm_stops_the_commands(harness):
    """The joint stays beyond its velocity bound in the hold: commands until hold_timeout,
    then none, a hold_failed ERROR event and ERROR on /diagnostics."""
    clock = SimulatedClock(harness)
    t = 10.0
    for k in range(5):
        t += 0.002
        clock.state(t)
    qd = np.zeros(6)
    qd[5] = 1.2 * ROBOT.velocity_limit[5]
    for k in range(45):                               # 0.088 s of the hold: it commands
        t += 0.002
        clock.state(t, Q, qd)
    t += 0.02
    clock.state(t, Q, qd, expect_command=False)      # 0.108 s, beyond hold_timeout
    clock.state(t + 0.002, Q, qd, expect_command=False)
    assert harness.spin_until(lambda: any(e.kind == "hold_failed"
                                          for e in harness.inbox["events"]))
    event = [e for e in harness.inbox["events"] if e.kind == "hold_failed"][-1]
    assert event.level == ControllerEvent.ERROR and "wrist_3_joint" in event.message
    clock.set(t + 0.05)
    assert harness.spin_until(lambda: "commands stopped: safe hold failed" in diagnostic_status(
        harness.inbox["diagnostics"][-1]).message)


@pytest.mark.parametrize("harness", [{**SIM, "stale_timeout": 1.0}], indirect=True)
def test_tracking_fault_gives_the_safe_hold_and_a_new_motion_leaves_it(harness):
    clock = SimulatedClock(harness)
    t = 20.0
    clock.state(t)
    traj = JointTrajectory(joint_names=NAMES)        # joint 3 to move 1 rad in 1 s
    traj.header.stamp = Time(seconds=t).to_msg()
    traj.points = [JointTrajectoryPoint(positions=list(Q), time_from_start=Duration(sec=0)),
                   JointTrajectoryPoint(positions=list(Q + [0, 0, 1.0, 0, 0, 0]),
                                        time_from_start=Duration(sec=1))]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: harness.node.controller.mode == "tracking")
    clock.state(t + 0.248)                             # the arm stays put: error 0.248 rad
    assert harness.node.controller.mode == "tracking"
    clock.state(t + 0.252)                             # 0.252 rad > 0.25: hold
    assert harness.node.controller.mode == "hold"
    assert "elbow_joint" in harness.node.controller.hold_reason
    harness.set_point.publish(JointState(name=NAMES, position=list(Q)))
    assert harness.spin_until(lambda: harness.node.controller.mode == "tracking")

"""The controller core without ROS: the control law against Pinocchio, the safety envelope
(rate limit, admission, watchdogs, staleness) against its stated bounds, and the safe hold
against the physics of a simulated arm."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.control.controller import GRAVITY, HOLD, TRACKING, Controller
from robo_dynamics.control.settings import Settings
from robo_dynamics.control.limits import velocity_bounds
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.rate_limit import MAX_INTERVAL, TorqueRateLimiter
from robo_dynamics.control.trajectory import SetPoint, Trajectory
from robo_dynamics.simulation.simulated_arm import IntegratedPlant, SimulatedArm
from conftest import SHIPPED, rel

ROBOT = rd.load_robot(SHIPPED / "rd_ur5e.urdf")
NAMES = list(ROBOT.joint_names)
REF = rd.make_solver(ROBOT, "pinocchio")
N = ROBOT.dof
Q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
QD = np.array([0.2, -0.1, 0.3, 0.0, -0.2, 0.1])
RATE = 1000.0
DT = 0.002


def settings(**changes):
    values = dict(kp=np.full(N, 100.0), kd=np.full(N, 20.0), effort_bound=ROBOT.effort_limit,
                  max_torque_rate=np.full(N, RATE), start_tolerance=np.full(N, 0.01),
                  max_tracking_error=np.full(N, 0.25),
                  velocity_bound=velocity_bounds(ROBOT.velocity_limit),
                  hold_damping=None, stale_timeout=0.1)
    values.update(changes)
    return Settings(**values)


def controller(backend="pinocchio", **changes):
    solver = rd.make_solver(ROBOT, backend)
    return Controller(solver, JointStateMerger(NAMES, NAMES), settings(**changes))


def run(ctrl, q, qd, t0, steps, effort=(), dt=DT):
    """Feed `steps` identical joint states DT apart from t0; (times, commands, events)."""
    times, commands, events = [], [], []
    for k in range(steps):
        t = t0 + k * dt
        cycle = ctrl.step(NAMES, list(q), list(qd), list(effort), t)
        assert cycle.rejected is None
        events += cycle.events
        if cycle.command is not None:
            times.append(t)
            commands.append(cycle.command.copy())
    return np.array(times), np.array(commands), events


def assert_rate_limited(times, commands, rate=RATE):
    dt = np.minimum(np.diff(times), MAX_INTERVAL)
    step = np.abs(np.diff(commands, axis=0))
    assert np.all(step <= rate * dt[:, None] + 1e-9), step.max()


# -- the rate limiter -------------------------------------------------------------------------
@pytest.mark.parametrize("keep_direction", [False, True])
def test_rate_limiter_bounds_every_step_and_reaches_the_target(keep_direction):
    """Every step within rate · Δt; clipped per joint, or with keep_direction a fraction s
    of the change asked, the same on every joint, as large as the bounds allow; reach()
    gives the range of the next step (the hold's law chooses within it)."""
    rng = np.random.default_rng(1)
    rate = np.array([1000.0, 50.0, 5.0])
    limiter = TorqueRateLimiter(rate)
    limiter.restart(np.zeros(3), 0.0)
    t, last = 0.0, np.zeros(3)
    for _ in range(2000):
        dt = rng.choice([0.0005, 0.001, 0.004, 0.05, -0.02])      # gaps and a clock going back
        t += dt
        target = rng.uniform(-100, 100, 3)
        bound = np.array([80.0, 60.0, 90.0])
        lo, hi = limiter.reach(t, bound)       # what limit() lets through, within ±bound
        allowed = rate * min(max(dt, 0.0), MAX_INTERVAL)
        np.testing.assert_allclose(lo, np.maximum(last - allowed, -bound), atol=1e-12)
        np.testing.assert_allclose(hi, np.minimum(last + allowed, bound), atol=1e-12)
        out, limited = limiter.limit(target, t, keep_direction)
        assert np.all(np.abs(out - last) <= allowed + 1e-12)
        if keep_direction:
            s = (out - last) / (target - last)
            assert np.ptp(s) <= 1e-9 and 0.0 <= s[0] <= 1.0
            assert limited == (s[0] < 1.0)
            if limited and dt > 0.0:
                assert np.max(np.abs(out - last) / allowed) == pytest.approx(1.0, rel=1e-9)
        else:
            np.testing.assert_allclose(out, last + np.clip(target - last, -allowed, allowed),
                                       rtol=0, atol=1e-12)
        last = out.copy()
    limiter.restart(np.zeros(3), 0.0)
    for k in range(1, 3000):                                      # a constant target: reached
        out, limited = limiter.limit(np.array([10.0, -1.0, 0.5]), k * 1e-3, keep_direction)
    np.testing.assert_array_equal(out, [10.0, -1.0, 0.5])
    assert not limited


# -- the control law -------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["pinocchio", "rnea"])
def test_gravity_mode_starts_at_the_measured_effort_and_ramps_to_g(backend):
    ctrl = controller(backend)
    g = REF.gravity(Q)
    measured = g + np.array([5.0, -3.0, 2.0, 0.5, -0.5, 0.1])      # what the drives apply now
    times, commands, events = run(ctrl, Q, np.zeros(N), 0.0, 200, effort=measured)
    # the first state gives the period; on the second the measured effort counts as the
    # command of the period before: one rate-limited step from it towards g
    assert times[0] == DT
    np.testing.assert_allclose(commands[0], measured + np.clip(g - measured, -RATE * DT,
                                                               RATE * DT), rtol=0, atol=1e-12)
    assert events[0].kind == "started" and "measured effort of 6 of 6" in events[0].message
    assert_rate_limited(times, commands)
    assert rel(commands[-1], g) <= 1e-12 and ctrl.mode == GRAVITY


def test_without_measured_effort_the_first_command_ramps_from_zero():
    ctrl = controller()
    times, commands, _ = run(ctrl, Q, np.zeros(N), 0.0, 300)
    np.testing.assert_array_equal(commands[0], np.zeros(N))
    assert_rate_limited(times, commands)
    assert rel(commands[-1], REF.gravity(Q)) <= 1e-12


@pytest.mark.parametrize("backend", ["pinocchio", "rnea"])
def test_tracking_command_is_computed_torque(backend):
    ctrl = controller(backend, max_torque_rate=np.full(N, 1e9))     # no ramp: the law itself
    run(ctrl, Q, QD, 0.0, 3)
    goal = Q + 0.005
    assert ctrl.desire(SetPoint(goal, np.zeros(N)), 0.006).kind == "tracking"
    _, commands, _ = run(ctrl, Q, QD, 0.006, 2)
    expected = REF.mass_matrix(Q) @ (100.0 * (goal - Q) - 20.0 * QD) + REF.bias(Q, QD)
    assert rel(commands[-1], expected) <= 1e-9 and ctrl.mode == TRACKING


# -- admission ---------------------------------------------------------------------------------
def test_a_set_point_two_radians_away_is_refused_and_changes_nothing():
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 0.0, 100)
    far = Q.copy()
    far[0] += 2.0
    event = ctrl.desire(SetPoint(far, np.zeros(N)), 0.2)
    assert event.kind == "refused" and event.level == "warn"
    assert "shoulder_pan_joint" in event.message and "start_tolerance 0.01" in event.message
    assert ctrl.mode == GRAVITY and ctrl.motion is None and ctrl.counts["refused"] == 1


def test_positions_outside_the_urdf_limits_are_refused():
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 0.0, 3)
    beyond = np.array([Q, Q + [0, 0, 0, 0, 0, 10.0]])             # wrist_3 limit is ±2π
    event = ctrl.desire(Trajectory(0.0, [0.0, 5.0], beyond), 0.006)
    assert event.kind == "refused" and "wrist_3_joint" in event.message
    assert "outside its limits" in event.message


def test_refused_before_any_joint_state_and_when_stale():
    ctrl = controller()
    assert "no complete joint state" in ctrl.desire(SetPoint(Q, np.zeros(N)), 0.0).message
    run(ctrl, Q, np.zeros(N), 0.0, 3)
    assert "stale" in ctrl.desire(SetPoint(Q, np.zeros(N)), 1.0).message


def test_a_motion_sent_while_a_joint_moves_too_fast_is_refused():
    ctrl = controller()
    fast = np.zeros(N)
    fast[3] = 1.05 * ROBOT.velocity_limit[3]
    run(ctrl, Q, fast, 0.0, 3)                                    # (now in the hold)
    event = ctrl.desire(SetPoint(Q, np.zeros(N)), 0.006)
    assert event.kind == "refused" and "wrist_1_joint" in event.message
    assert "moving too fast" in event.message and ctrl.mode == HOLD
    slower = 0.95 * fast
    run(ctrl, Q, slower, 0.006, 1)
    assert ctrl.desire(SetPoint(Q, slower), 0.008).kind == "tracking"


def test_within_tolerance_the_step_of_a_set_point_is_a_ramp():
    """A set-point at the tolerance with stiff gains asks for a large torque change at once:
    it is reached at ≤ max_torque_rate, never stepped."""
    ctrl = controller(kp=np.full(N, 4000.0), kd=np.full(N, 100.0))
    run(ctrl, Q, np.zeros(N), 0.0, 200)
    goal = Q + 0.0099
    assert ctrl.desire(SetPoint(goal, np.zeros(N)), 0.4).kind == "tracking"
    times, commands, _ = run(ctrl, Q, np.zeros(N), 0.4, 200)
    target = REF.mass_matrix(Q) @ (4000.0 * (goal - Q)) + REF.gravity(Q)
    assert np.max(np.abs(target - REF.gravity(Q))) > 20 * RATE * DT   # a real step asked
    assert_rate_limited(times, commands)
    assert rel(commands[-1], np.clip(target, -ROBOT.effort_limit, ROBOT.effort_limit)) <= 1e-9


# -- watchdogs and the safe hold ----------------------------------------------------------------
def test_velocity_fault_switches_to_the_hold_on_that_joint_state():
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 0.0, 100)
    fast = np.zeros(N)
    fast[2] = 1.1 * ROBOT.velocity_limit[2]
    cycle = ctrl.step(NAMES, list(Q), list(fast), [], 0.2)
    assert ctrl.mode == HOLD and cycle.command is not None
    (event,) = cycle.events
    assert event.level == "error" and event.kind == "safe_hold" and "elbow_joint" in event.message
    times, commands, _ = run(ctrl, Q, fast, 0.202, 300)
    # the hold: M(q)(−λ q̇) + C(q, q̇) q̇ + g(q), λ = 20/s, from Pinocchio's M, C and g
    hold = (REF.mass_matrix(Q) @ (-20.0 * fast) + REF.coriolis_matrix(Q, fast) @ fast
            + REF.gravity(Q))
    assert rel(commands[-1], np.clip(hold, -ROBOT.effort_limit, ROBOT.effort_limit)) <= 1e-12
    ctrl = controller(hold_damping=np.full(N, 3.0))              # D given: g − D q̇
    run(ctrl, Q, np.zeros(N), 0.0, 100)
    times, commands, _ = run(ctrl, Q, fast, 0.2, 200)
    hold = REF.gravity(Q) - 3.0 * fast
    assert rel(commands[-1], np.clip(hold, -ROBOT.effort_limit, ROBOT.effort_limit)) <= 1e-12


def test_tracking_fault_abandons_the_motion_and_a_new_motion_leaves_the_hold():
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 0.0, 3)
    # a trajectory that starts here and moves joint 2 by 1 rad in 1 s; the arm stays put
    goal = Q + [0, 1.0, 0, 0, 0, 0]
    assert ctrl.desire(Trajectory(0.006, [0.0, 1.0], [Q, goal]), 0.006).kind == "tracking"
    faults = []
    for k in range(600):
        cycle = ctrl.step(NAMES, list(Q), [0.0] * N, [], 0.006 + k * DT)
        faults += [e for e in cycle.events if e.kind == "safe_hold"]
        if faults:
            break
    t_fault = 0.006 + k * DT
    assert ctrl.mode == HOLD and ctrl.motion is None
    assert "shoulder_lift_joint" in faults[0].message
    assert abs(t_fault - 0.006 - 0.25) <= DT + 1e-9            # the error reached 0.25 rad
    assert ctrl.desire(SetPoint(Q, np.zeros(N)), t_fault + DT).kind == "tracking"
    assert ctrl.mode == TRACKING


def test_safe_hold_brings_a_moving_arm_to_rest_in_simulation():
    """Closed loop with the simulated arm: a joint pushed beyond the velocity bound trips the
    hold, which stops the arm (no torque source drives it any more)."""
    ctrl = controller(velocity_bound=np.full(N, 0.5))
    arm = SimulatedArm(IntegratedPlant(REF, "rk4", 1e-3), Q, v0=[0, 0, 0.8, 0, 0, 0.8],
                       command_timeout=1.0)
    speeds = []
    for k in range(1500):
        cycle = ctrl.step(NAMES, arm.q.tolist(), arm.v.tolist(), [], k * 1e-3)
        if cycle.command is not None:
            arm.set_command(cycle.command)
        arm.step()
        speeds.append(np.max(np.abs(arm.v)))
    assert ctrl.mode == HOLD and ctrl.counts["faults"] == 1
    assert speeds[-1] < 1e-3 * speeds[0]
    assert not ctrl.halted                       # the hold held: the stream never stopped


def test_a_hold_that_does_not_stop_the_arm_stops_the_stream_until_a_new_motion():
    """A joint still beyond its velocity bound hold_timeout after the hold began (something
    the damping cannot stop drives it): no more commands, one hold_failed ERROR; a motion is
    refused while the joint is still fast, admitted once the arm is at rest, and the stream
    then starts again as a ramp from the measured effort."""
    ctrl = controller(hold_timeout=0.2)
    run(ctrl, Q, np.zeros(N), 0.0, 100)
    fast = np.zeros(N)
    fast[5] = -1.3 * ROBOT.velocity_limit[5]
    times, commands, events = run(ctrl, Q, fast, 0.2, 200)      # 0.4 s at that speed
    kinds = [e.kind for e in events]
    assert kinds == ["safe_hold", "hold_failed"], kinds
    failed = events[1]
    assert failed.level == "error" and "wrist_3_joint" in failed.message
    assert "a model error, e.g. a wrong payload, or an external force (no observer)" in \
        failed.message
    assert ctrl.halted and ctrl.counts["faults"] == 2
    # commands while the hold had its chance, none after: the last one 0.2 s after the first
    assert times[-1] - times[0] == pytest.approx(0.2, abs=DT + 1e-9)
    assert len(times) < 200
    assert ctrl.desire(SetPoint(Q, np.zeros(N)), 0.6).kind == "refused"    # still fast
    assert ctrl.halted
    _, none, _ = run(ctrl, Q, np.zeros(N), 0.6, 5)                        # at rest now
    assert len(none) == 0 and ctrl.halted
    assert ctrl.desire(SetPoint(Q, np.zeros(N)), 0.61).kind == "tracking"
    effort = REF.gravity(Q)
    times, commands, events = run(ctrl, Q, np.zeros(N), 0.612, 300, effort=effort)
    assert [e.kind for e in events] == ["resumed"] and not ctrl.halted
    assert np.all(np.abs(commands[0] - effort) <= RATE * DT + 1e-9)       # a ramp from there
    assert_rate_limited(times, commands)
    assert rel(commands[-1], REF.gravity(Q)) <= 1e-9                       # tracking at rest


# -- staleness -----------------------------------------------------------------------------------
def test_stale_input_stops_commands_and_resuming_ramps_from_the_last_command():
    ctrl = controller()
    times, commands, _ = run(ctrl, Q, np.zeros(N), 0.0, 300)
    last = commands[-1]
    partial = NAMES[:3]                         # three joints keep coming, three go silent
    for k in range(100):
        cycle = ctrl.step(partial, list(Q[:3]), [], [], 0.6 + k * DT)
    assert cycle.command is None and cycle.events == ()
    assert not ctrl.running and ctrl.counts["stale"] == 1
    q2 = Q + 0.005
    times, commands, events = run(ctrl, q2, np.zeros(N), 1.0, 200)
    assert events[0].kind == "resumed"
    np.testing.assert_array_equal(commands[0], last)           # from the last command...
    assert_rate_limited(times, commands)                       # ...as a ramp
    assert rel(commands[-1], REF.gravity(q2)) <= 1e-12


def test_a_burst_joining_an_old_measurement_to_new_ones_is_stale():
    """Two drivers (wrist a, shoulder b), both at 500 Hz, their messages stamped on the
    receiver's clock. The receiver is starved from 0.15 s to 0.9 s and then takes its queue
    at once; b's driver stopped at 0.2 s. Its last measurement thus arrives in the same
    instant as 0.7 s of a's newer ones: receipt times alone call each joined state fresh,
    the stamps say b's part is older than stale_timeout; no command may answer it."""
    ctrl = controller()
    a, b = NAMES[3:], NAMES[:3]
    queue = []
    for k in range(450):
        t = k * DT
        queue += ([(b, Q[:3], t)] if t < 0.2 else []) + [(a, Q[3:], t)]
    commanded, events = [], []
    for i, (names, q, stamp) in enumerate(queue):
        now = stamp if stamp < 0.15 else 0.9 + 1e-5 * i                  # receipt [s]
        cycle = ctrl.step(names, list(q), [], [], now, stamp=stamp)
        events += cycle.events
        if cycle.command is not None:
            commanded.append(stamp)
    assert commanded and max(commanded) - 0.198 <= 0.1 + 1e-9, max(commanded) - 0.198
    assert events[-1].kind == "stale" and f"joint states of {b} are" in events[-1].message
    back = ctrl.step(b, list(Q[:3]), [], [], 0.91, stamp=0.9)          # b is back
    assert back.command is not None and [e.kind for e in back.events] == ["resumed"]
    for b_stamp in (0.0, 5000.0):   # b unstamped, or on another clock: receipt times only
        other = controller()
        for k in range(5):         # at 3 s: an unstamped 0 would be 3 s behind a's stamps
            now = 3.0 + k * DT
            other.step(a, list(Q[3:]), [], [], now, stamp=now)
            cycle = other.step(b, list(Q[:3]), [], [], now, stamp=b_stamp and b_stamp + k)
        assert cycle.command is not None and other.counts["stale"] == 0


def test_the_watch_between_states_stops_the_stream_once_the_states_are_stale():
    """Joint states that stop altogether: the watch (a timer's call) reports the stream's
    end once the newest state is older than stale_timeout, once; a motion being tracked
    is abandoned for the hold; the next states resume the stream as a ramp."""
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 0.0, 3)
    assert ctrl.desire(SetPoint(Q, np.zeros(N)), 0.006).kind == "tracking"
    run(ctrl, Q, np.zeros(N), 0.006, 2)                        # the last state at 0.008 s
    assert ctrl.watch(0.008 + 0.1) == ()                       # not older than 0.1 s
    events = ctrl.watch(0.008 + 0.1 + 1e-9)
    assert [e.kind for e in events] == ["stale", "safe_hold"] and ctrl.mode == HOLD
    assert "0.1 s old" in events[0].message and "command stream stopped" in events[0].message
    assert ctrl.watch(0.5) == () and ctrl.counts["stale"] == 1     # once
    times, commands, events = run(ctrl, Q, np.zeros(N), 1.0, 50)
    assert [e.kind for e in events] == ["resumed"] and ctrl.mode == HOLD
    assert_rate_limited(times, commands)
    assert controller().watch(5.0) == ()                       # no state yet: nothing to stop


def test_a_gap_during_tracking_abandons_the_motion():
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 0.0, 3)
    ctrl.desire(SetPoint(Q, np.zeros(N)), 0.006)
    _, _, events = run(ctrl, Q, np.zeros(N), 0.5, 2)           # 0.5 s without a joint state
    assert [e.kind for e in events] == ["resumed", "safe_hold"] and ctrl.mode == HOLD


def test_a_clock_going_back_holds_the_command_for_that_cycle():
    ctrl = controller()
    run(ctrl, Q, np.zeros(N), 10.0, 5)
    before = ctrl.limiter.last.copy()
    cycle = ctrl.step(NAMES, list(Q), [0.0] * N, [], 5.0)
    np.testing.assert_array_equal(cycle.command, before)
    _, commands, _ = run(ctrl, Q, np.zeros(N), 5.002, 300)
    assert rel(commands[-1], REF.gravity(Q)) <= 1e-12

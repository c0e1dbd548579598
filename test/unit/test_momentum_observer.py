"""The external-torque observer (control/momentum_observer.py) in the controller core, on an
independent plant: MuJoCo advances the arm from the same URDF and the test applies the
external torques, so the truth is known. Checked: the step response against the first-order
lag ṙ = K_O (τ_ext − r) the observer promises, detection time, noise, friction mismatch,
missing and current-valued efforts, the collision reaction, and the tip wrench against
Pinocchio's inverse dynamics with a tip wrench."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.control.controller import GRAVITY, HOLD, TRACKING, Controller
from robo_dynamics.control.settings import Settings
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.momentum_observer import (COLLISION, CONTACT, DEFAULT_THRESHOLDS,
                                                     NONE, UNKNOWN, MomentumObserver,
                                                     external_wrench)
from robo_dynamics.control.trajectory import Motion, SetPoint
from robo_dynamics.simulation.mujoco_plant import MujocoPlant
from conftest import SHIPPED, random_states

ROBOT = rd.load_robot(SHIPPED / "rd_ur5e.urdf")
NAMES = list(ROBOT.joint_names)
N = ROBOT.dof
REF = rd.make_solver(ROBOT, "pinocchio")
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])
AMPLITUDE = np.array([0.35, 0.25, 0.3, 0.4, 0.5, 0.6])
OMEGA = np.array([1.2, 1.5, 1.9, 2.2, 2.6, 3.0])
H = 1e-3                      # s: plant step = control period
K_O = 50.0                    # 1/s
CONTACT_AT = DEFAULT_THRESHOLDS[0] * ROBOT.effort_limit     # the node's defaults
COLLISION_AT = DEFAULT_THRESHOLDS[1] * ROBOT.effort_limit


class Wave(Motion):
    """q0 + A (1 − cos ω t) from t0 (its derivatives too): the arm keeps moving."""

    def __init__(self, t0, q0):
        self.t0, self.q0 = t0, q0.copy()
        self.positions = q0[None]

    def sample(self, t):
        t = max(t - self.t0, 0.0)
        return (self.q0 + AMPLITUDE * (1.0 - np.cos(OMEGA * t)),
                AMPLITUDE * OMEGA * np.sin(OMEGA * t),
                AMPLITUDE * OMEGA ** 2 * np.cos(OMEGA * t) * (t > 0.0))


def controller(**changes):
    values = dict(kp=np.full(N, 100.0), kd=np.full(N, 20.0), effort_bound=ROBOT.effort_limit,
                  max_torque_rate=np.full(N, 1000.0), start_tolerance=np.full(N, 0.01),
                  max_tracking_error=np.full(N, 0.5),    # fault than a collision
                  velocity_bound=np.full(N, np.inf),     # the observer's tests: no other
                  hold_damping=None, stale_timeout=0.1,
                  observer_gain=np.full(N, K_O), contact_threshold=CONTACT_AT,
                  collision_threshold=COLLISION_AT, collision_reaction="none")
    values.update(changes)
    return Controller(rd.make_solver(ROBOT, "pinocchio"), JointStateMerger(NAMES, NAMES),
                      Settings(**values))


def no_torque(t, q, v):
    return np.zeros(N)


def closed_loop(ctrl, seconds, external=no_torque, plant=None, noise=0.0,
                effort=lambda tau, t: tau, track=True, unmodelled=None):
    """Run the controller on MuJoCo for `seconds`, tracking Wave from 10 ms. external(t, q,
    v): the true external joint torques over the step from t; unmodelled(t, q, v): torques
    the plant applies itself (reported as the truth instead, not applied again). The
    measured effort published with each state is the motor torque applied over the step
    before it (plus noise). Returns (times, residuals, levels, truth over the step before
    each state, events)."""
    plant = plant or MujocoPlant(ROBOT)
    rng = np.random.default_rng(7)
    q, v, applied, truth = Q0.copy(), np.zeros(N), REF.gravity(Q0), np.zeros(N)
    out = {"t": [], "r": [], "levels": [], "truth": [], "events": []}
    for k in range(int(round(seconds / H))):
        t = k * H
        measured = effort(applied + rng.normal(0.0, noise, N), t)
        cycle = ctrl.step(NAMES, q.tolist(), v.tolist(), measured.tolist(), t, t)
        out["events"] += cycle.events
        if k == 10 and track:
            assert ctrl.desire(Wave(t, q), t).kind == "tracking"
        if cycle.external is not None:
            for key, value in (("t", t), ("r", cycle.external.torque.copy()),
                               ("levels", cycle.external.levels.copy()), ("truth", truth)):
                out[key].append(value)
        applied = cycle.command if cycle.command is not None else applied
        pushed = external(t, q, v)
        truth = pushed if unmodelled is None else unmodelled(t, q, v)
        q, v = plant.advance(q, v, applied + pushed)
    return (np.array(out["t"]), np.array(out["r"]), np.array(out["levels"]),
            np.array(out["truth"]), out["events"])


def lagged(truth, gain=K_O, h=H):
    """The first-order lag ṙ = K (τ_ext − r) of a truth held over each step, exactly."""
    decay = np.exp(-gain * h)
    r, out = np.zeros(truth.shape[1]), []
    for value in truth:
        r = value + (r - value) * decay
        out.append(r.copy())
    return np.array(out)


STEP = np.array([0.0, 20.0, -9.0, 0.0, 0.0, 0.0])      # N·m
STEP_AT = 1.0                                          # s


def step_torque(t, q, v):
    return STEP if t >= STEP_AT else np.zeros(N)


def test_a_step_of_external_torque_is_estimated_within_1_percent_after_5_over_K():
    """Exact model, no noise, the arm tracking a motion: r within 1 % of τ_ext 5/K_O after
    the step, and the collision detected within 3/K_O + one control period."""
    t, r, levels, truth, events = closed_loop(controller(), STEP_AT + 0.2, step_torque)
    before = t < STEP_AT
    assert np.abs(r[before & (t > 0.02)]).max() < 1e-3          # no false residual
    settled = np.flatnonzero(t >= STEP_AT + 5.0 / K_O + H)[0]
    error = np.abs(r[settled:] - STEP).max()
    assert error <= 0.01 * np.abs(STEP).max(), error
    first = t[np.flatnonzero((levels == COLLISION).any(axis=1))[0]]
    assert first - STEP_AT <= 3.0 / K_O + H + 1e-9, first - STEP_AT
    collisions = [e for e in events if e.kind == "collision"]
    assert len(collisions) == 1 and "shoulder_lift_joint" in collisions[0].message
    expected = np.where(np.abs(STEP) > COLLISION_AT, COLLISION,
                        np.where(np.abs(STEP) > CONTACT_AT, CONTACT, NONE))
    assert levels[-1].tolist() == expected.tolist() == [NONE, COLLISION, CONTACT, NONE,
                                                        NONE, NONE]


def test_a_push_on_a_moving_arm_equals_the_first_order_lag_of_its_joint_torques():
    """A 30 N push at the middle of the forearm for 0.3 s (its joint torques change as the
    arm moves): r equals the lag K_O/(s + K_O) of the true τ_ext to 1 % of its peak."""
    plant = MujocoPlant(ROBOT)
    force = np.array([0.0, 30.0, 0.0])
    middle = 0.5 * np.asarray(ROBOT.origin_translation[3])     # forearm → wrist 1 joint
    torque = np.cross(middle, force)

    def push(t, q, v):
        if 1.0 <= t < 1.3:
            return plant.external_joint_torque(q, "forearm_link", force, torque)
        return np.zeros(N)

    t, r, levels, truth, _ = closed_loop(controller(), 1.6, push, plant=plant)
    expected = lagged(truth)
    peak = np.abs(truth).max()
    assert peak > 5.0
    assert np.abs(r - expected).max() <= 0.01 * peak, np.abs(r - expected).max() / peak


def test_with_effort_noise_no_false_contact_and_the_push_is_detected():
    """Effort noise 0.5 N·m on every joint: no contact at the default thresholds (3 % / 6 %
    of the effort limits) over 2 s of tracking; a 30 N push at the end of the forearm is
    detected within 3/K_O + one period, and for as long as it lasts."""
    plant = MujocoPlant(ROBOT)
    force, end = np.array([0.0, 30.0, 0.0]), np.asarray(ROBOT.origin_translation[3])

    def push(t, q, v):
        if t >= 2.0:
            return plant.external_joint_torque(q, "forearm_link", force, np.cross(end, force))
        return np.zeros(N)

    t, r, levels, truth, _ = closed_loop(controller(), 2.3, push, plant=plant, noise=0.5)
    assert (levels[t < 2.0] == NONE).all(), np.abs(r[t < 2.0]).max(axis=0)
    assert (np.abs(truth[-1]) > CONTACT_AT).any()
    detected = (levels >= CONTACT).any(axis=1)
    assert detected[t >= 2.0 + 3.0 / K_O + H].all()


def test_friction_the_model_lacks_shows_as_external_torque_and_the_model_removes_it():
    """MuJoCo applies viscous joint damping D: without a friction model the residual is the
    lag of −D q̇ (the friction is an external torque to the rigid-body model); with the
    node's friction model set to D it is gone."""
    damping = np.array([1.5, 1.5, 0.5, 0.015, 0.004, 0.0002])

    def friction(t, q, v):
        return -damping * v

    t, r, _, truth, _ = closed_loop(controller(), 1.0, plant=MujocoPlant(ROBOT, damping=damping),
                                    unmodelled=friction)
    _, r_known, _, _, _ = closed_loop(controller(viscous=damping, coulomb=np.zeros(N),
                                                friction_compensation=True), 1.0,
                                      plant=MujocoPlant(ROBOT, damping=damping))
    expected = lagged(truth)
    peak = np.abs(expected).max()
    assert peak > 0.5
    assert np.abs(r - expected).max() <= 0.02 * peak, np.abs(r - expected).max() / peak
    assert np.abs(r_known).max() <= 0.01 * peak, np.abs(r_known).max() / peak


def test_a_joint_without_effort_has_no_estimate_and_the_others_are_unaffected():
    """Joint 5's effort is missing (NaN) until 1.05 s: its residual is NaN and its level
    UNKNOWN, the other joints estimate the step as before; then it starts from zero."""
    def effort(tau, t):
        tau = tau.copy()
        if t < 1.05:
            tau[4] = np.nan
        return tau
    step = np.array([0.0, 20.0, 0.0, 0.0, 3.0, 0.0])
    t, r, levels, _, _ = closed_loop(controller(), 1.2,
                                     lambda time, q, v: step if time >= 1.0 else np.zeros(N),
                                     effort=effort)
    missing = t < 1.05
    assert np.isnan(r[missing, 4]).all() and (levels[missing, 4] == UNKNOWN).all()
    assert np.isfinite(np.delete(r, 4, axis=1)).all()
    assert abs(r[-1, 1] - 20.0) <= 0.2
    back = np.flatnonzero(~missing)[0]
    assert r[back, 4] == 0.0 and np.isfinite(r[back:, 4]).all()


def test_motor_currents_with_torque_constants_give_the_same_estimate():
    k = np.array([10.0, 12.0, 9.0, 3.0, 3.5, 2.5])     # N·m/A, gear ratio included
    _, r_torque, _, _, _ = closed_loop(controller(), 1.1, step_torque)
    _, r_current, _, _, _ = closed_loop(controller(torque_constants=k), 1.1, step_torque,
                                        effort=lambda tau, t: tau / k)
    assert np.abs(r_current - r_torque).max() <= 1e-9 * np.abs(STEP).max()


def test_collision_reaction_hold_leaves_the_motion_and_reset_observer_releases_it():
    ctrl = controller(collision_reaction="hold")
    _, _, _, _, events = closed_loop(ctrl, STEP_AT + 0.1, step_torque)
    holds = [e for e in events if e.kind == "safe_hold"]
    assert len(holds) == 1 and "collision" in holds[0].message and ctrl.mode == HOLD
    assert ctrl.counts["collisions"] == 1
    event = ctrl.reset_observer()
    assert event.kind == "observer_reset" and ctrl.mode == GRAVITY
    assert np.isnan(ctrl.external.observer.residual).all()


def test_without_reaction_a_collision_is_reported_and_tracking_goes_on():
    ctrl = controller(collision_reaction="none")
    _, _, _, _, events = closed_loop(ctrl, STEP_AT + 0.1, step_torque)
    assert [e.kind for e in events if e.level != "info"] == ["collision"]
    assert ctrl.mode == TRACKING


def test_a_hold_for_another_fault_is_not_released_by_reset_observer():
    ctrl = controller()
    closed_loop(ctrl, 0.05, track=False)
    assert ctrl.desire(SetPoint(ctrl.measured_state()[0], np.zeros(N)), 0.05).kind == "tracking"
    ctrl.step(NAMES, (Q0 + 0.6).tolist(), [0.0] * N, [], 0.051, 0.051)   # tracking fault
    assert ctrl.mode == HOLD and "tracking" not in ctrl.hold_kind
    ctrl.reset_observer()
    assert ctrl.mode == HOLD


def test_a_gap_in_the_joint_states_restarts_the_observer():
    """Momentum balance across a gap longer than stale_timeout is not trusted: r restarts
    from zero instead of turning the unseen interval into a spike."""
    observer = MomentumObserver(np.full(2, K_O))
    p = np.array([1.0, -1.0])
    assert observer.update(0.0, p, np.zeros(2), np.zeros(2)).tolist() == [0.0, 0.0]
    ctrl = controller()
    closed_loop(ctrl, 0.2, track=False)
    pushed = (REF.gravity(Q0) + 5.0).tolist()    # 5 N·m the momentum balance cannot see
    ctrl.step(NAMES, Q0.tolist(), [0.0] * N, pushed, 5.0, 5.0)
    cycle = ctrl.step(NAMES, Q0.tolist(), [0.0] * N, pushed, 5.001, 5.001)
    assert cycle.external.torque.tolist() == [0.0] * N


# -- the tip wrench ---------------------------------------------------------------------------
def joint_torques_of(q, wrench):
    """τ_ext of a wrench the environment applies at the tip (base axes): Pinocchio's inverse
    dynamics with that wrench at rest, minus gravity."""
    return REF.inverse_dynamics(q, np.zeros(N), np.zeros(N), wrench) - REF.gravity(q)


def test_the_tip_wrench_explains_the_external_torques_at_a_regular_pose():
    wrench = np.array([12.0, -30.0, 5.0, 1.5, -0.7, 2.0])
    J = REF.jacobian(Q0)
    tau = joint_torques_of(Q0, wrench)
    assert np.abs(external_wrench(J, tau, 0.0) - wrench).max() <= 1e-9 * 30.0
    damped = external_wrench(J, tau, 0.02)
    assert np.abs(damped - wrench).max() <= 0.01 * 30.0


@pytest.mark.parametrize("singular", [[0.3, -1.2, 0.0, -0.9, 1.2, 0.4],    # elbow straight
                                      [0.3, -1.2, 1.4, -0.9, 0.0, 0.4]])   # wrist aligned
def test_at_a_singular_pose_the_damped_wrench_is_finite_and_explains_what_it_can(singular):
    q = np.array(singular)
    J = REF.jacobian(q)
    assert np.linalg.matrix_rank(J, tol=1e-9) < 6
    wrench = np.array([12.0, -30.0, 5.0, 1.5, -0.7, 2.0])
    tau = joint_torques_of(q, wrench)
    for damping in (0.02, 1e-4):
        F = external_wrench(J, tau, damping)
        assert np.isfinite(F).all()
        assert np.linalg.norm(F) <= np.linalg.norm(J @ tau) / damping ** 2
    # what the joints feel is explained as the damping goes to zero (τ is in Jᵀ's range)
    assert np.abs(J.T @ F - tau).max() <= 1e-3 * np.abs(tau).max()


def test_without_any_effort_there_is_no_estimate_and_no_alarm():
    """Joint states without efforts (many drivers): every joint UNKNOWN, never a number."""
    ctrl = controller(collision_reaction="hold")
    for k in range(5):
        cycle = ctrl.step(NAMES, Q0.tolist(), [0.0] * N, [], k * H, k * H)
    assert np.isnan(cycle.external.torque).all()
    assert list(cycle.external.levels) == [UNKNOWN] * N and ctrl.mode == GRAVITY



# -- the momentum terms -------------------------------------------------------------------------
def test_momentum_terms_equal_pinocchios_m_qd_and_coriolis_transpose_qd(solvers):
    """p = M q̇ and Cᵀ q̇ of both backends (the in-house one generated, O(n): Cᵀ q̇ = ∂T/∂q,
    algorithms/compiled/momentum_codegen.py) against Pinocchio's crba and computeCoriolisMatrix, on
    every test arm (mimic chains included)."""
    ours, reference = solvers
    for q, qd in zip(*random_states(ours.model, 8, seed=3)[:2]):
        M, C = reference.mass_matrix(q), reference.coriolis_matrix(q, qd)
        for solver in (ours, reference):
            p, coriolis_t = solver.momentum_terms(q, qd)
            np.testing.assert_allclose(p, M @ qd, rtol=0, atol=1e-9 * max(1.0, np.abs(M).max()))
            np.testing.assert_allclose(coriolis_t, C.T @ qd, rtol=0,
                                       atol=1e-9 * max(1.0, np.abs(C).max()))

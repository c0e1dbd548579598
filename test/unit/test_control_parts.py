"""The node's rclpy-free parts: settings from parameter values, the outputs of a state
besides its command, the model-change schedule and the identification's speed rule."""

import concurrent.futures
import time
import types

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.control import controller as core
from robo_dynamics.control.momentum_observer import External
from robo_dynamics.control.cycle_outputs import Rest
from robo_dynamics.identification.identification_session import (VELOCITY_SHARE,
                                                                 IdentificationSession)
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.model_changes import ModelChangeSchedule
from robo_dynamics.control.settings import controller_settings, friction_beyond_reach, working_pose
from robo_dynamics.control.trajectory import Trajectory
from conftest import load_arm

VALUES = {   # parameter values as the node reads them (None: unset)
    "kp": [100.0], "kd": [20.0], "torque_limit_scale": 0.5, "velocity_limit_scale": 1.0,
    "max_torque_rate": [1e9], "start_tolerance": [0.05], "max_tracking_error": [0.25],
    "hold_damping": None, "hold_decay_rate": 20.0, "stale_timeout": 0.1, "hold_timeout": 1.0,
    "friction_compensation": True, "viscous_friction": None, "coulomb_friction": None,
    "observer_gain": [50.0], "contact_thresholds": None, "collision_thresholds": None,
    "collision_reaction": "hold", "effort_source": "effort", "torque_constants": None,
    "hardware_compensates_gravity": False, "hold_push_force": 50.0}


def test_settings_take_the_urdf_friction_and_half_the_effort_limits():
    """xArm7's URDF gives <dynamics damping friction>: with friction compensation on and no
    friction parameters, those are used; torque_limit_scale 0.5 halves the URDF's limits."""
    model = load_arm("xarm7")
    settings = controller_settings(VALUES, model)
    np.testing.assert_array_equal(settings.viscous, [10, 10, 5, 5, 5, 2, 2])
    np.testing.assert_array_equal(settings.coulomb, np.ones(7))
    np.testing.assert_array_equal(settings.effort_bound, 0.5 * model.effort_limit)
    np.testing.assert_array_equal(settings.kp, np.full(7, 100.0))
    assert np.all(settings.contact_threshold < settings.collision_threshold)
    # without compensation the friction model stays: the observer subtracts it
    own = controller_settings({**VALUES, "viscous_friction": [1.0],
                               "friction_compensation": False}, model)
    assert not own.friction_compensation
    np.testing.assert_array_equal(own.viscous, np.ones(7))
    np.testing.assert_array_equal(own.coulomb, np.ones(7))


def _rest_at(model, q, tau_ext=None, **values):
    """The Rest of a controller's step at state q at rest (gravity compensation, the second
    of two states: the first command), with the external torques tau_ext (None: no
    observer)."""
    solver = rd.make_solver(model, "rnea")
    names = list(model.joint_names)
    settings = controller_settings({**VALUES, **values}, model)
    controller = core.Controller(solver, JointStateMerger(names, names), settings)
    zero = [0.0] * len(q)
    for t in (0.0, 0.001):
        cycle = controller.step(names, list(q), zero, [], t)
    assert cycle.command is not None and np.array_equal(cycle.rest.q, q)
    external = None if tau_ext is None else External(tau_ext, [0] * len(q))
    return Rest(solver, cycle.rest.q, cycle.rest.gravity, external, settings), settings


def test_a_states_lambda_and_wrench_against_pinocchio():
    """Λ equals (J M⁻¹ Jᵀ)⁻¹ from Pinocchio's J and M; a wrench F applied at the tip gives
    τ_ext = Jᵀ F (Pinocchio's J), from which the wrench is recovered."""
    model = load_arm("rd_ur5e")
    reference = rd.make_solver(model, "pinocchio")
    q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
    J, M = reference.jacobian(q), reference.mass_matrix(q)
    F = np.array([5.0, -3.0, 8.0, 0.4, -0.2, 0.1])
    rest, _ = _rest_at(model, q, J.T @ F)
    result, wrench = rest.tip(True, True, 0.0)
    np.testing.assert_allclose(result.Lambda, np.linalg.inv(J @ np.linalg.solve(M, J.T)),
                               rtol=1e-8)
    np.testing.assert_allclose(wrench, F, atol=1e-9)
    assert rest.tip(False, False, 0.0) == (None, None)
    rest.external = External(np.full(6, np.nan), [0] * 6)
    assert rest.tip(False, True, 0.0) == (None, None)


def test_gravity_is_clamped_like_a_command():
    model = load_arm("rd_ur5e")
    q = np.array([0.0, -1.0, 0.5, 0.0, 0.0, 0.0])
    rest, settings = _rest_at(model, q, torque_limit_scale=0.01)
    g = rd.make_solver(model, "pinocchio").gravity(q)
    bound = settings.effort_bound
    np.testing.assert_allclose(rest.clamped_gravity(), np.clip(g, -bound, bound),
                               rtol=0, atol=1e-9)
    assert np.any(np.abs(g) > bound)                      # the clamp is exercised


def test_model_changes_take_effect_in_order_at_their_times():
    committed = []
    schedule = ModelChangeSchedule(lambda change: committed.append(change) or f"did {change}")
    first, second = schedule.add(1.0), schedule.add(2.0)
    first.change.set_result("a")
    assert schedule.apply_due(0.5, wait=True, timeout=1.0) == [] and committed == []
    assert schedule.apply_due(1.5, wait=False, timeout=1.0) == [] and committed == ["a"]
    assert first.done.result(timeout=0) == "did a"
    assert schedule.apply_due(2.5, wait=False, timeout=1.0) == [] and committed == ["a"]
    seen_waiting = []
    with concurrent.futures.ThreadPoolExecutor(1) as pool:    # prepared while waited for
        def prepare():
            deadline = time.monotonic() + 10.0
            while schedule.waiting_for is None and time.monotonic() < deadline:
                time.sleep(0.001)                             # the waiter says what for
            seen_waiting.append(schedule.waiting_for)
            second.change.set_result("b")
        pool.submit(prepare)
        assert schedule.apply_due(2.5, wait=True, timeout=10.0) == []
    assert seen_waiting == [2.0] and schedule.waiting_for is None
    assert committed == ["a", "b"] and not schedule
    late = schedule.add(3.0)
    assert schedule.apply_due(3.0, wait=True, timeout=0.01) == [3.0]     # skipped
    assert late.done.result(timeout=0) is None and committed == ["a", "b"]
    dropped = schedule.add(4.0)
    schedule.drop()
    assert not schedule and dropped.change.result(timeout=0) is None


@pytest.mark.parametrize("share, refused", [(0.98, False), (1.02, True)])
def test_identification_moves_faster_than_half_the_bound_are_refused(share, refused):
    """A quintic move of Δq in T peaks at 15/8 Δq/T (at T/2): planned at `share` of
    VELOCITY_SHARE of the bound, it is refused exactly above it."""
    bound, T = np.array([3.0, 2.0]), 2.0
    dq = share * VELOCITY_SHARE * bound * T / (15.0 / 8.0)
    zeros = np.zeros((2, 2))
    move = Trajectory(0.0, [0.0, T], [np.zeros(2), dq], zeros, zeros)
    reason = IdentificationSession.too_fast(move, bound, ["a", "b"])
    assert (reason is not None) == refused
    if refused:
        assert reason.startswith("'a' would move at")


@pytest.mark.parametrize("arm, named", [
    ("xarm7", ["joint5", "joint6", "joint7"]),
    ("z1", ["joint4", "joint5", "joint6", "jointGripper"]),
    ("panda", []), ("kinova", []), ("rd_ur5e", [])])
def test_a_start_up_warning_names_the_joints_their_urdf_friction_holds_off_a_path(arm, named):
    """The joints that closed loops on MuJoCo plants with the friction their URDFs declare
    saw held off a path at the defaults (payload and arm identification: tracking error
    beyond 0.25 rad on the xArm7's and the Z1's light wrists, 1 N·m of Coulomb friction
    each) are the ones warned about; none on arms whose URDF gives no such friction; none
    once the friction is compensated."""
    model = load_arm(arm)
    values = {**VALUES, "torque_limit_scale": 1.0, "friction_compensation": False}
    M = rd.make_solver(model, "pinocchio").mass_matrix(working_pose(model))
    sentences = friction_beyond_reach(model, M, controller_settings(values, model))
    assert [s.split("'")[1] for s in sentences] == named, sentences
    compensated = controller_settings({**values, "friction_compensation": True}, model)
    assert friction_beyond_reach(model, M, compensated) == []

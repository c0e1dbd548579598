"""A closed linkage stays on the assembly branch it is built on (issue 58): a first state
anywhere in its limits, states asked in any order, a stream started from the crossed branch,
and a stream through a pose where two branches meet. The references are the linkages' own
geometry: the parallelogram (elbow = rear − shoulder), the four-bar's open branch and the
Delta's trilateration, with the holding torques of their potential energy (virtual work)."""

import itertools

import numpy as np
import pytest

from arm_matrix import node_defaults
from closed_chain_models import (FOUR_BAR_PARAMETERS, THETA2_0, four_bar_holding_torque,
                                 planar_four_bar_urdf, shipped_linkage)
from conftest import REPO
from robo_dynamics.backends.closed_chain_backend import ClosedChainSolver
from robo_dynamics.closed_chain import MotorSpace, load_closed_chain
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.settings import controller_settings
from robo_dynamics.errors import UnclosedState
from closed_chain_models import potential
from palletizer import holding_torque

PALLETIZER_MOTORS = ("base_joint", "shoulder_joint", "rear_joint", "wrist_joint")


@pytest.fixture(scope="module")
def palletizer():
    return shipped_linkage("rd_palletizer")


def parallelogram(chain, theta):
    """The palletizer's closed pose from its geometry: elbow = rear − shoulder, rod =
    shoulder − rear (the forearm parallel to the rear link, the rod to the upper arm)."""
    names = chain.tree.joint_names
    q = np.zeros(len(names))
    for name, value in zip(PALLETIZER_MOTORS, theta):
        q[names.index(name)] = value
    q[names.index("elbow_joint")] = theta[2] - theta[1]
    q[names.index("rod_joint")] = theta[1] - theta[2]
    return q


def motor_limits(chain):
    return (np.array([getattr(chain.tree, side)[i] for i in chain.actuated])
            for side in ("lower", "upper"))


def test_a_first_state_anywhere_in_the_palletizers_limits_closes_as_it_is_built(palletizer):
    """A fresh MotorSpace (a node's first joint state) at each corner, edge middle and the
    centre of the motors' limit box (81 parked poses): the parallelogram, and the holding
    torques of virtual work to 1e-9 relative."""
    low, high = motor_limits(palletizer)
    for theta in itertools.product(*zip(low, (low + high) / 2, high)):
        theta = np.array(theta)
        motors = MotorSpace(palletizer)
        np.testing.assert_allclose(motors.pose(theta), parallelogram(palletizer, theta),
                                   atol=1e-9)
        expected = holding_torque(theta[1], theta[2])
        np.testing.assert_allclose(motors.gravity(theta), expected, rtol=1e-9,
                                   atol=1e-9 * np.abs(expected).max())


def four_bar():
    return load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS)


def delta():
    return shipped_linkage("rd_delta")


def delta_holding_torque(theta, h=1e-6):
    """∂V/∂θ of the Delta's potential (its platform by trilateration), central differences."""
    return np.array([(potential(theta + h * e) - potential(theta - h * e)) / (2 * h)
                     for e in np.eye(3)])


# each linkage: its chain, the motor states to ask for, the holding torques of its geometry
CASES = {
    "palletizer": (lambda: shipped_linkage("rd_palletizer"),
                   lambda rng, chain: rng.uniform(*motor_limits(chain)),
                   lambda theta: holding_torque(theta[1], theta[2]), 1e-9),
    # a crank–rocker, not a parallelogram: the crank turns fully
    "four_bar": (four_bar, lambda rng, chain: rng.uniform(-np.pi, np.pi, 1),
                 lambda theta: [four_bar_holding_torque(THETA2_0 + theta[0])], 1e-9),
    # the Delta's workspace is far inside its motors' ±3 rad: ±0.3 rad about the drawing
    "delta": (delta, lambda rng, chain: rng.uniform(-0.3, 0.3, 3), delta_holding_torque, 1e-6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_answer_depends_on_the_states_asked_before(name):
    """One MotorSpace (as a node's services share one) asked for 100 random states in two
    random orders: the same holding torques both times (to 1e-9 relative), equal to those
    of the linkage's geometry (the Delta's to 1e-6: its reference differentiates
    numerically)."""
    make, sample, truth, tolerance = CASES[name]
    chain = make()
    rng = np.random.default_rng(58)
    states = [sample(rng, chain) for _ in range(100)]
    motors, answers = MotorSpace(chain), []
    for order in (rng.permutation(100), rng.permutation(100)):
        answers.append({k: motors.gravity(states[k]) for k in order})
    for k, theta in enumerate(states):
        np.testing.assert_allclose(answers[0][k], answers[1][k], rtol=1e-9, atol=1e-9)
        expected = np.asarray(truth(theta))
        np.testing.assert_allclose(answers[0][k], expected, rtol=tolerance,
                                   atol=tolerance * np.abs(expected).max())
        assert chain.on_branch(motors.pose(theta))


def test_a_closure_started_on_the_crossed_branch_ends_on_the_built_one(palletizer):
    """The crossed parallelogram at θ = (0, −0.8, 0.5, 0) (where Newton's method from the
    drawn pose's passive joints lands): off the branch, and closing from it gives the built
    one; a driver reporting the crossed passive joints disagrees with the closure by their
    whole difference (the node's passive_joint_tolerance refuses it)."""
    theta = np.array([0.0, -0.8, 0.5, 0.0])
    guess = np.zeros(palletizer.tree.dof)
    guess[list(palletizer.actuated)] = theta
    crossed = palletizer.newton(guess)
    built = parallelogram(palletizer, theta)
    assert crossed is not None and np.abs(crossed - built).max() > 0.3
    assert not palletizer.on_branch(crossed) and palletizer.on_branch(built)
    v = crossed[list(palletizer.partition.v)]
    np.testing.assert_allclose(palletizer.close_from(crossed, v), built, atol=1e-9)
    np.testing.assert_allclose(palletizer.close(crossed), built, atol=1e-9)
    names = palletizer.tree.joint_names
    passive = {name: crossed[names.index(name)] for name in ("elbow_joint", "rod_joint")}
    gap, _ = MotorSpace(palletizer).passive_disagreement(theta, passive)
    assert gap == pytest.approx(np.abs(crossed - built).max(), abs=1e-9)


def widened_palletizer():
    """The palletizer with the rear motor's range up to 1.2 rad: the parallelogram folds
    flat, where its branches meet, at rear − shoulder = π/2, now within the limits."""
    import yaml
    text = (REPO / "urdf" / "rd_palletizer.urdf").read_text()
    section = yaml.safe_load((REPO / "config" / "rd_palletizer.yaml").read_text())[
        "/**/dynamics_node"]["ros__parameters"]
    start = text.index('<joint name="rear_joint"')
    limit = text.index('upper="0.5"', start)
    text = text[:limit] + 'upper="1.2"' + text[limit + len('upper="0.5"'):]
    return load_closed_chain(text, section)


def test_past_where_branches_meet_states_are_refused_then_held():
    """A four-bar through its change point within its limits: the widened palletizer's
    rear motor from 0.5 to 1.1 rad at the shoulder's −0.8 (rear − shoulder through π/2).
    The library closes the parallelogram up to the change point and refuses every state
    past it, where the motors cannot tell how the linkage is assembled (a fresh closure
    too); states back before it close on the parallelogram again. The controller at the
    node's defaults rejects the refused states with that reason, then holds (the safe
    hold at the last pose that closed)."""
    chain = widened_palletizer()
    motors, change = MotorSpace(chain), np.pi / 2 - 0.8
    for rear in np.arange(0.5, 1.1, 0.002):
        theta = np.array([0.0, -0.8, rear, 0.0])
        if rear < change - 0.01:
            np.testing.assert_allclose(motors.pose(theta), parallelogram(chain, theta),
                                       atol=1e-9)
        elif rear > change + 0.01:
            with pytest.raises(UnclosedState, match="branch"):
                motors.pose(theta)
            with pytest.raises(UnclosedState, match="branches meet"):
                MotorSpace(chain).pose(theta)
    theta = np.array([0.0, -0.8, 0.6, 0.0])
    np.testing.assert_allclose(motors.pose(theta), parallelogram(chain, theta), atol=1e-9)

    solver = ClosedChainSolver(chain, "tool0")
    names = list(solver.model.joint_names)
    ctrl = Controller(solver, JointStateMerger(names, names),
                      controller_settings(node_defaults(), solver.model))
    unknown, t, dt, rear, rejected = [float("nan")] * 4, 0.0, 1e-3, 0.5, []
    rate = [0.0, 0.0, 0.5, 0.0]                           # rad/s of the rear motor
    while ctrl.mode != "hold" and t < 2.0:
        cycle = ctrl.step(names, [0.0, -0.8, rear, 0.0], rate, unknown, t, t)
        if cycle.rejected is not None:
            rejected.append((rear, cycle.rejected))
        t, rear = t + dt, rear + rate[2] * dt
    assert ctrl.mode == "hold" and rejected
    assert min(r for r, _ in rejected) > change - 0.01
    assert all("branch" in reason for _, reason in rejected), rejected[0]

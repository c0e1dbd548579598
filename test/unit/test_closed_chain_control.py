"""The controller core (dynamics_node's, at its defaults) on the shipped palletizer and Delta:
ClosedChainSolver gives it the linkage's motors, MuJoCo simulates the whole linkage with its
loop as an equality constraint (an independent plant), 1 kHz in lockstep. Beside it the
same motors commanded from the cut tree (the loop left open, the passive joints' torques
dropped: what a tree-only dynamics library gives). References are physical: MuJoCo's motion,
the desired motion, the loop's closure."""

import numpy as np
import pytest

from arm_matrix import node_defaults
from closed_chain_models import FOUR_BAR_PARAMETERS, planar_four_bar_urdf, shipped_linkage
from robo_dynamics.backends.closed_chain_backend import ClosedChainSolver
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import frame_pose, tree_kinematics, tree_rnea
from robo_dynamics.control.cartesian import CARTESIAN_IMPEDANCE, CartesianTarget
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.settings import controller_settings
from robo_dynamics.control.trajectory import Trajectory
from robo_dynamics.errors import ArgumentError
from robo_dynamics.spatial.rotations import rotation_vector

pytest.importorskip("mujoco")
from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain  # noqa: E402

DT = 1e-3                 # s: the control period
PLANT_STEP = 2e-4         # s: MuJoCo's (RK4), five per control period
LINKAGES = {"rd_palletizer": ("tool0", [0.5, 0.3, -0.3, 0.4]),
            "rd_delta": ("platform", [0.2, -0.1, 0.15])}


class Loop:
    """The controller at the node's defaults on MuJoCo's linkage, from the motors at theta0
    at rest. The motors are braked until the first command has ramped up (from the measured
    effort: the torque the brakes hold, MuJoCo's holding torque), then released; the
    torque sensors read the applied torque after."""

    def __init__(self, name):
        tip, theta0 = LINKAGES[name]
        self.chain = shipped_linkage(name)
        self.solver = ClosedChainSolver(self.chain, tip)
        model = self.solver.model
        self.names = list(model.joint_names)
        self.ctrl = Controller(self.solver, JointStateMerger(self.names, self.names),
                               controller_settings(node_defaults(), model))
        self.motors = list(self.chain.actuated)
        self.theta0 = np.array(theta0)
        self.q0 = self.solver.motors.pose(self.theta0)
        self.plant = MujocoClosedChain(self.chain, time_step=PLANT_STEP)
        self.plant.set_state(self.q0, np.zeros_like(self.q0))
        self.q, self.qd = self.q0.copy(), np.zeros_like(self.q0)
        self.held = self.plant.holding_torque(self.q0)
        self.tau, self.t, self.events = np.zeros(len(self.names)), 0.0, []

    def step(self, braked=False):
        sensed = self.held if braked else self.tau
        cycle = self.ctrl.step(self.names, self.q[self.motors].tolist(),
                               self.qd[self.motors].tolist(), sensed.tolist(), self.t, self.t)
        self.events += [event.kind for event in cycle.events]
        last, self.tau = self.tau, (self.tau if cycle.command is None
                                    else np.array(cycle.command))
        if not braked:
            self.q, self.qd = self.plant.run(DT, self.tau)
        self.t += DT
        return np.abs(self.tau - last).max()

    def release(self):
        """Command while braked until the command stops changing (the ramp is over)."""
        for _ in range(2000):
            if self.step(braked=True) == 0.0 and self.events:
                return
        raise AssertionError(f"the command kept changing: {self.events}")

    def run(self, seconds, each=None):
        for _ in range(int(round(seconds / DT))):
            if each is not None:
                each(self)
            self.step()


def cut_tree_drift(name, seconds):
    """The largest motor drift [rad] over `seconds` under the cut tree's gravity torques on
    the motors (the passive joints' dropped), from the same start at rest."""
    tip, theta0 = LINKAGES[name]
    chain = shipped_linkage(name)
    q = ClosedChainSolver(chain, tip).motors.pose(np.array(theta0))
    plant = MujocoClosedChain(chain, time_step=PLANT_STEP)
    plant.set_state(q, np.zeros_like(q))
    motors, drift, zero = list(chain.actuated), 0.0, np.zeros_like(q)
    for _ in range(int(round(seconds / DT))):
        q, _ = plant.run(DT, tree_rnea(chain.tree, q, zero, zero)[motors])
        drift = max(drift, np.abs(q[motors] - theta0).max())
    return drift


@pytest.mark.parametrize("name", sorted(LINKAGES))
def test_gravity_compensation_through_the_loop_holds_the_linkage(name):
    """0.3 s of gravity compensation after the brakes let go: the motors drift less than
    1e-4 rad (MuJoCo's soft loop settles by about that), at least 100 × less than under the
    cut tree's torques; MuJoCo's loop stays closed; the observer calls nothing a collision
    (its momentum terms are the linkage's)."""
    loop = Loop(name)
    loop.release()
    loop.run(0.3)
    drift = np.abs(loop.q[loop.motors] - loop.theta0).max()
    assert drift < 1e-4, drift
    assert 100.0 * drift < cut_tree_drift(name, 0.3)
    assert np.abs(loop.chain.constraint(loop.q)).max() < 1e-5
    assert loop.events == ["started"], loop.events


def test_computed_torque_tracks_a_move_of_every_motor():
    """The palletizer: each motor moves by ±0.2 rad in 0.8 s (a quintic, at rest at both
    ends: no step in the torque for the rate limit to ramp), computed torque at the node's
    default gains: the motors within 0.2 mrad of the desired motion all along and 0.2 s
    after (0.07 mrad measured), no torque clamped or rate-limited, no safe hold, and the
    observer, its momentum terms now moving, calls nothing a collision."""
    loop = Loop("rd_palletizer")
    loop.release()
    goal = loop.theta0 + 0.2 * (-1.0) ** np.arange(4)
    rest = np.zeros((2, 4))
    motion = Trajectory(loop.t, [0.0, 0.8], [loop.theta0, goal], velocities=rest,
                        accelerations=rest)
    assert loop.ctrl.desire(motion, loop.t).kind == "tracking"
    errors = []
    loop.run(1.0, each=lambda lp: errors.append(
        np.abs(motion.sample(lp.t)[0] - lp.q[lp.motors]).max()))
    assert max(errors) < 2e-4, max(errors)
    assert loop.ctrl.counts["clamped"] == 0 and loop.ctrl.counts["rate_limited"] == 0
    assert loop.events == ["started"], loop.events


def test_cartesian_impedance_takes_the_palletizers_tool_to_its_target():
    """The tool held by Cartesian impedance at the node's defaults, its target a pose the
    linkage can take (where its loop puts the tool with the motors 10–20 mrad on, 27 mm and
    42 mrad away: the palletizer moves its tool in 4 directions, position and orientation
    together): on MuJoCo's linkage the tool, where MuJoCo's joints put it, settles on the
    target within 0.1 mm and 1 mrad in 2 s (9 µm, 0.01 mrad measured), and nothing starts
    the hold. (A pose it cannot take settles
    where the stiffness's wrench does no work along any motion it can make, Jᵀ K e = 0.)"""
    loop = Loop("rd_palletizer")
    loop.release()
    tree = loop.chain.tree
    _, R_d, p_d = frame_pose(tree, tree_kinematics(tree, loop.solver.motors.pose(
        loop.theta0 + np.array([0.02, -0.01, 0.015, 0.02]))), "tool0")
    K = np.diag([1500.0] * 3 + [10.0] * 3)
    target = CartesianTarget(CARTESIAN_IMPEDANCE, R_d, p_d, K, 0.7, np.zeros(6), None,
                             np.zeros(4), np.full(4, 10.0), 0.1, 0.5)
    event = loop.ctrl.desire(target, loop.t)
    assert event.kind == "tracking", event.message
    loop.run(2.0)
    _, R, p = frame_pose(tree, tree_kinematics(tree, loop.q), "tool0")
    assert np.abs(p - p_d).max() < 1e-4, p - p_d
    assert np.linalg.norm(rotation_vector(R_d @ R.T)) < 1e-3
    assert loop.events == ["started"], loop.events


def test_states_the_loops_cannot_close_are_rejected_then_held_at_the_last_closed_pose():
    """A planar four-bar driven by its follower (a rocker: it cannot reach every angle), its
    motor read at 2.5 rad while turning at 0.1 rad/s: for stale_timeout each such state is
    rejected with the reason and nothing is commanded; then the safe hold says why, and its
    torque is the hold's law at the last pose that closed (0.3 rad) with the velocity
    measured: the linkage's inverse dynamics there at θ̈ = −hold_decay_rate θ̇ (to 1e-9 once
    the ramp is over). A state that closes again is commanded from at once, in the hold."""
    chain = load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS,
                              actuated_joints=["follower_joint"])
    solver = ClosedChainSolver(chain, "coupler")
    names = list(solver.model.joint_names)
    ctrl = Controller(solver, JointStateMerger(names, names),
                      controller_settings(node_defaults(), solver.model))
    s, unknown, t, command = ctrl.settings, [float("nan")], 0.0, None
    for _ in range(20):
        command = ctrl.step(names, [0.3], [0.0], unknown, t, t).command
        t += DT
    assert command is not None and ctrl.mode == "gravity"
    with pytest.raises(ArgumentError, match="do not close"):
        ClosedChainSolver(chain, "coupler").gravity([2.5])
    rejected, events, rate = 0, [], [0.1]
    for _ in range(500):
        cycle = ctrl.step(names, [2.5], rate, unknown, t, t)
        t += DT
        if cycle.rejected is None:
            events = list(cycle.events)
            break
        assert "do not close" in cycle.rejected and cycle.command is None
        rejected += 1
    assert abs(rejected - s.stale_timeout / DT) <= 1 and rejected == ctrl.rejected, rejected
    assert ctrl.mode == "hold" and "do not close" in ctrl.hold_reason
    assert [e.kind for e in events] == ["resumed", "safe_hold"], events
    for _ in range(100):
        command = ctrl.step(names, [2.5], rate, unknown, t, t).command
        t += DT
    expected = solver.inverse_dynamics([0.3], rate, [-s.hold_decay_rate * rate[0]])
    np.testing.assert_allclose(command, expected, rtol=0, atol=1e-9)
    cycle = ctrl.step(names, [0.31], rate, unknown, t, t)
    assert cycle.rejected is None and cycle.command is not None and ctrl.mode == "hold"


@pytest.mark.parametrize("name", sorted(LINKAGES))
def test_the_loops_forces_at_rest_are_mujocos(name):
    """Each closure's force at rest (ClosedChainSolver.closure_wrenches, what ~/inverse_
    dynamics reports) against the force MuJoCo's equality constraint carries with the
    linkage held still at the same pose by its own holding torques: within 1 % (its loop a
    stiff spring; 0.3 % and 0.03 % measured)."""
    import mujoco
    loop = Loop(name)
    zero = np.zeros(len(loop.names))
    found = loop.solver.closure_wrenches(loop.theta0, zero, zero)
    plant = loop.plant
    plant.data.qfrc_applied[plant.actuated] = loop.held
    mujoco.mj_forward(plant.mj, plant.data)
    data = plant.data
    equality = np.flatnonzero(data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    assert len(found) == len(loop.chain.closures) == len(equality) // 3
    for k, wrench in enumerate(found):
        expected = data.efc_force[equality[data.efc_id[equality] == k]]   # on body 1, link_a
        assert np.linalg.norm(wrench.force - expected) <= 0.01 * np.linalg.norm(expected), (
            wrench.name, wrench.force, expected)

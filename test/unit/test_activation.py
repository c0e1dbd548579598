"""A managed node's activation (control/activation.py), without ROS: the controller at the
node's defaults closing the loop on MuJoCo's rd_ur5e (braked while no command comes, as
sim_arm's drives). References: the measured effort (the ramp's start), the rate limit (no
jump), the hold's documented decay, FollowJointTrajectory's result codes."""

import numpy as np

import robo_dynamics as rd
from arm_matrix import DT, Loop
from conftest import load_arm
from robo_dynamics.control import follow_trajectory as ft
from robo_dynamics.control.activation import ACTIVE, INACTIVE, STOP_TIME_CONSTANTS, Activation
from robo_dynamics.control.trajectory import SetPoint

ROBOT = load_arm("rd_ur5e")
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])


class Managed(Loop):
    """Loop whose states go through an Activation (inactive at first), recording every
    command sent."""

    def __init__(self):
        super().__init__(ROBOT, Q0)
        self.activation = Activation(self.ctrl, False, "the node is not active")
        self.commands = []            # (t, command or None)

    def cycle(self, *state):
        cycle = self.activation.step(*state)
        self.commands.append((self.t, cycle.command))
        return cycle


def sent(loop):
    return [c for _, c in loop.commands if c is not None]


def test_inactive_takes_states_refuses_motions_and_commands_nothing():
    loop = Managed()
    loop.run(0.2)
    assert sent(loop) == [] and loop.arm.braked
    np.testing.assert_allclose(loop.ctrl.measured_state()[0], Q0, atol=1e-12)
    event = loop.ctrl.desire(SetPoint(Q0, np.zeros(6)), loop.t)
    assert event.kind == "refused" and "the node is not active" in event.message


def test_activation_starts_the_stream_as_a_ramp_from_the_measured_effort_and_admits_motions():
    """The brakes hold g(q); the first command is within one period's rate limit of the
    effort the drives measured (the holding torque), and each later one of the one before."""
    loop = Managed()
    loop.run(0.1)
    held = loop.arm.measured_effort().copy()
    np.testing.assert_allclose(held, rd.make_solver(ROBOT, "pinocchio").gravity(Q0),
                               rtol=1e-6, atol=1e-9)
    loop.activation.activate()
    assert loop.ctrl.desire(SetPoint(Q0, np.zeros(6)), loop.t).kind == "tracking"
    loop.run(0.2)
    commands = np.array(sent(loop))
    step = loop.settings.max_torque_rate * DT
    assert np.all(np.abs(commands[0] - held) <= step + 1e-9)
    assert np.all(np.abs(np.diff(commands, axis=0)) <= step + 1e-9)
    assert loop.activation.state == ACTIVE and not loop.arm.braked
    assert np.max(np.abs(loop.arm.q - Q0)) < 1e-3


def test_deactivation_during_a_goal_ends_it_holds_the_arm_to_rest_then_stops():
    """Mid-way through a FollowJointTrajectory goal: the goal ends with
    PATH_TOLERANCE_VIOLATED and says it was deactivated; the hold brings the arm to rest
    (its velocity falls by e^-STOP_TIME_CONSTANTS), the commands never jump, and after
    STOP_TIME_CONSTANTS / λ they stop; motions are refused from then on."""
    loop = Managed()
    loop.activation.activate()
    loop.run(0.05)
    names, n = list(ROBOT.joint_names), ROBOT.dof
    goal = Q0 + 0.4 * (-1.0) ** np.arange(n)
    tolerances = ft.tolerances(names, np.full(n, 0.2), np.full(n, 0.02), 0.5)
    trajectory, efforts, first = ft.plan(names, names, [(0.0, Q0, np.zeros(n), (), ()),
                                                        (2.0, goal, np.zeros(n), (), ())],
                                         0.0, loop.t, loop.ctrl.desired_state(loop.t))
    motion = ft.TrajectoryGoal(trajectory, efforts, first, tolerances, names)
    assert loop.ctrl.desire(motion, loop.t).kind == "tracking"
    loop.run(1.0)                                    # mid-way: the arm moving fast
    speed = np.abs(loop.arm.v).max()
    assert speed > 0.2
    events = loop.activation.deactivate()
    assert [e.kind for e in events] == ["deactivated", "safe_hold"]
    assert motion.outcome.code == ft.PATH_TOLERANCE_VIOLATED
    assert "deactivated" in motion.outcome.message
    deactivated_at, count = loop.t, len(sent(loop))
    loop.run(0.5)
    rate = loop.settings.hold_decay_rate
    stopped = [t for t, c in loop.commands if t >= deactivated_at and c is None]
    assert loop.activation.state == INACTIVE and stopped
    held_for = stopped[0] - deactivated_at
    assert STOP_TIME_CONSTANTS / rate <= held_for <= STOP_TIME_CONSTANTS / rate + 3 * DT
    commands = np.array(sent(loop)[count - 1:])
    assert np.all(np.abs(np.diff(commands, axis=0))
                  <= loop.settings.max_torque_rate * DT + 1e-9)
    assert "stopped" in loop.kinds()
    assert np.abs(loop.arm.v).max() < 0.02 * speed        # braked at rest after the stop
    assert loop.ctrl.desire(SetPoint(loop.arm.q, np.zeros(n)), loop.t).kind == "refused"

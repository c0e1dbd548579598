"""Every mode on every arm: the real arms of example-robot-data, each simulated by MuJoCo (an
independent engine) in lockstep with the controller core at dynamics_node's defaults (its
parameter table, read as the node reads it, through control/settings.controller_settings).

Each cell returns its figures (a dict); test_arm_matrix.py asserts them, and
`make matrix` (python test/support/arm_matrix.py) prints the whole table (docs/testing.md).
Poses are drawn once per arm from a fixed seed, inside the joint limits and away from
singularities (condition number of J below 30), so every arm is tried where it works.
"""

import dataclasses
import sys

import numpy as np

import robo_dynamics as rd
from robo_dynamics.control import follow_trajectory as ft
from robo_dynamics.control.cartesian import CARTESIAN_IMPEDANCE, CartesianTarget
from robo_dynamics.control.controller import HOLD, Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.settings import controller_settings
from robo_dynamics.control.trajectory import SetPoint, Trajectory
from robo_dynamics.ros.parameter_tables import DYNAMICS_NODE, JOINT_CONSTRAINTS
from robo_dynamics.simulation.mujoco_plant import MujocoPlant
from robo_dynamics.simulation.simulated_arm import SimulatedArm
from conftest import EXAMPLE_ROBOTS

DT = 1e-3          # s: the control period and MuJoCo's step (1 kHz, RK4)
ROBOTS = EXAMPLE_ROBOTS
# name → (URDF, tip_link or None for the only leaf): 6 and 7 joints, 0.6 to 28 kg
MATRIX_ARMS = {} if ROBOTS is None else {      # Loop and the cells work without them
    "ur3": (ROBOTS / "ur_description/urdf/ur3_robot.urdf", "tool0"),
    "ur10": (ROBOTS / "ur_description/urdf/ur10_robot.urdf", "tool0"),
    "panda": (ROBOTS / "panda_description/urdf/panda.urdf", "panda_hand_tcp"),
    "kinova": (ROBOTS / "kinova_description/robots/kinova.urdf", "j2s6s200_end_effector"),
    "z1": (ROBOTS / "z1_description/urdf/z1.urdf", None),
    "xarm7": (ROBOTS / "xarm_description/urdf/xarm7.urdf", None),
}


def load(name):
    path, tip = MATRIX_ARMS[name]
    return rd.load_robot(path, tip_link=tip)


def node_defaults(**changes):
    """dynamics_node's parameter values at their defaults (None: unset), with `changes`."""
    values = {name: spec.default for name, spec in DYNAMICS_NODE.items()}
    values.update(changes)
    return values


def working_poses(robot, count=3, seed=7):
    """`count` poses inside the joint limits (at most ±2.5 rad) where J's condition number
    is below 30: seeded, the same on every run."""
    solver = rd.make_solver(robot, "pinocchio")
    rng = np.random.default_rng(seed)
    lower = np.maximum(robot.lower, -2.5)
    upper = np.minimum(robot.upper, 2.5)
    unlimited = robot.upper - robot.lower < 1e-6
    lower, upper = np.where(unlimited, -2.5, lower), np.where(unlimited, 2.5, upper)
    poses = []
    while len(poses) < count:
        q = lower + (upper - lower) * rng.uniform(0.15, 0.85, robot.dof)
        if np.linalg.cond(solver.jacobian(q)) < 30.0:
            poses.append(q)
    return poses


class Loop:
    """The controller at dynamics_node's defaults (with `changes`) closing the loop on
    MuJoCo's model of `robot` from q0, braked until the first command, torque sensors
    exact (JointState.effort = the applied torque)."""

    def __init__(self, robot, q0, **changes):
        names = list(robot.joint_names)
        self.robot, self.names = robot, names
        self.ref = rd.make_solver(robot, "pinocchio")
        self.settings = controller_settings(node_defaults(**changes), robot)
        self.ctrl = Controller(rd.make_solver(robot, "pinocchio"),
                               JointStateMerger(names, names), self.settings)
        self.arm = SimulatedArm(MujocoPlant(robot, "rk4", DT), q0, command_timeout=0.05,
                                brakes=True)
        self.t, self.events, self.peak = 0.0, [], np.zeros(robot.dof)

    def run(self, seconds, each=None):
        """Advance `seconds` of simulated time; `each(loop)` before every state."""
        for _ in range(int(round(seconds / DT))):
            if each is not None:
                each(self)
            arm = self.arm
            cycle = self.cycle(self.names, arm.q.tolist(), arm.v.tolist(),
                               arm.measured_effort().tolist(), self.t, self.t)
            self.events += cycle.events
            if cycle.command is not None:
                arm.set_command(cycle.command)
            arm.step()
            self.peak = np.maximum(self.peak, np.abs(arm.v))
            self.t += DT

    def cycle(self, *state):
        """The controller's Cycle for one state (Controller.step's arguments)."""
        return self.ctrl.step(*state)

    def kinds(self):
        return [event.kind for event in self.events]

    def energy_norm(self):
        """√(q̇ᵀ M q̇) [√(kg)·m/s]: the velocity's size, weighted as its kinetic energy."""
        q, v = self.arm.q, self.arm.v
        return float(np.sqrt(v @ self.ref.mass_matrix(q) @ v))


def gravity_drift(robot, q0):
    """Gravity compensation for 1 s from the brakes: the largest |q − q0| [rad]."""
    loop = Loop(robot, q0)
    loop.run(1.0)
    return {"drift": float(np.max(np.abs(loop.arm.q - q0))), "events": loop.kinds()}


def tracking(robot, q0):
    """Computed torque along a 1.5 s cubic move of every joint by ±0.3 rad (alternating
    signs, inside the limits): the largest |q_d − q| [rad] over the move and 0.5 s after."""
    loop = Loop(robot, q0)
    loop.run(0.02)
    n = robot.dof
    goal = np.clip(q0 + 0.3 * (-1.0) ** np.arange(n), robot.lower, robot.upper)
    motion = Trajectory(loop.t, [0.0, 1.5], [q0, goal], velocities=np.zeros((2, n)))
    event = loop.ctrl.desire(motion, loop.t)
    assert event.kind == "tracking", event.message
    errors = []
    loop.run(2.0, each=lambda lp: errors.append(np.max(np.abs(motion.sample(lp.t)[0]
                                                              - lp.arm.q))))
    return {"error": float(np.max(errors)), "events": loop.kinds()}


def follow_goal(robot, q0):
    """A FollowJointTrajectory goal as MoveIt sends one (three points with velocities, joint
    names reversed, every joint ±0.3 rad in 2 s), admitted and judged as the node's action
    does (follow_trajectory.py) with the node's default tolerances. Figures: the goal's
    result code and sentence, the largest |q_d − q| on the way [rad], the end's largest
    |q − q_end| [rad]."""
    loop = Loop(robot, q0)
    loop.run(0.02)
    n, names = robot.dof, list(robot.joint_names)
    goal = np.clip(q0 + 0.3 * (-1.0) ** np.arange(n), robot.lower, robot.upper)
    middle = 0.5 * (q0 + goal)
    speed = 1.5 * (goal - q0) / 2.0                 # a cubic's speed at its middle
    order = names[::-1]
    index = [names.index(name) for name in order]
    points = [(0.0, q0[index], np.zeros(n), (), ()), (1.0, middle[index], speed[index], (), ()),
              (2.0, goal[index], np.zeros(n), (), ())]
    defaults = node_defaults()
    tolerances = ft.tolerances(names, np.full(n, JOINT_CONSTRAINTS["trajectory"][0]),
                               np.full(n, JOINT_CONSTRAINTS["goal"][0]),
                               defaults["constraints.goal_time"],
                               stopped_velocity_tolerance=defaults[
                                   "constraints.stopped_velocity_tolerance"])
    state = loop.ctrl.desired_state(loop.t)
    trajectory, efforts, first = ft.plan(names, order, points, 0.0, loop.t, state)
    motion = ft.TrajectoryGoal(trajectory, efforts, first, tolerances, names)
    event = loop.ctrl.desire(motion, loop.t)
    assert event.kind == "tracking", event.message
    errors = []
    loop.run(3.5, each=lambda lp: errors.append(np.max(np.abs(motion.sample(lp.t)[0]
                                                              - lp.arm.q))))
    outcome = motion.outcome
    return {"code": None if outcome is None else outcome.code,
            "message": None if outcome is None else outcome.message,
            "error": float(np.max(errors)), "end": float(np.max(np.abs(loop.arm.q - goal))),
            "events": loop.kinds()}


def push_for_collision(loop, link, direction):
    """[N] the smallest force on `link` (its origin, along `direction` in its axes) whose
    joint torques cross a collision threshold at the pose now."""
    tau = loop.arm.plant.external_joint_torque(loop.arm.q, link, direction, np.zeros(3))
    return 1.0 / np.max(np.abs(tau) / loop.settings.collision_threshold)


def hold_after_knock(robot, q0, direction=(0.0, 0.0, 1.0), scale=1.5, duration=0.1):
    """A knock on the middle link: `scale` × the smallest force that is a collision, for
    `duration` s, at the node's defaults (collision_reaction hold) but hold_push_force 0
    (hold_decay_rate's law alone: its time constant; the rates a push asks for are
    test_held_arm.py's). Figures: the time constant [s] of the velocity's decay once the
    knock is over (√(q̇ᵀ M q̇) falling to 1/e), the largest |q̇| / velocity bound over every
    joint, the events."""
    loop = Loop(robot, q0, hold_push_force=0.0)
    loop.run(0.3)
    link = robot.body_links[robot.dof // 2]
    direction = np.asarray(direction, dtype=float)
    force = scale * push_for_collision(loop, link, direction) * direction
    loop.arm.set_external_wrench(link, force, np.zeros(3))
    loop.run(duration)
    loop.arm.set_external_wrench(link, np.zeros(3), np.zeros(3))
    tripped = loop.ctrl.mode == HOLD
    start, norms = loop.energy_norm(), []
    loop.run(0.4, each=lambda lp: norms.append(lp.energy_norm()))
    return {"force": float(np.linalg.norm(force)), "link": link, "tripped": tripped,
            "time_constant": decay_time(norms, start),
            "peak_ratio": float(np.max(loop.peak / loop.settings.velocity_bound)),
            "halted": loop.ctrl.halted, "events": loop.kinds()}


def decay_time(norms, start):
    """[s] until a sequence sampled every DT first falls below start / e (inf: never)."""
    below = np.flatnonzero(np.array(norms) < start / np.e)
    return float(below[0] * DT) if below.size else np.inf


def withstood_push(loop, link, direction):
    """The force [N] on `link` (origin, `direction` in its axes) that the docs say the hold
    withstands (docs/node.md, safe hold): the held arm then moves at q̇ = M⁻¹ τ_p / λ, at
    most half the velocity bound on every joint."""
    q, s = loop.arm.q, loop.settings
    tau = loop.arm.plant.external_joint_torque(q, link, direction, np.zeros(3))
    speed = np.abs(np.linalg.solve(loop.ref.mass_matrix(q), tau)) / s.hold_decay_rate
    return 0.5 / np.max(speed / s.velocity_bound)


def push_in_hold(robot, q0, direction=(0.0, 1.0, 1.0), duration=0.2, scale=1.0):
    """The arm in the safe hold; `scale` × the push the docs say it withstands on the middle
    link for `duration` s, then let go (hold_push_force 0, as hold_after_knock). Figures: the
    largest |q̇| / velocity bound, the decay's time constant after the push, the events."""
    loop = Loop(robot, q0, hold_push_force=0.0)
    loop.run(0.05)
    # a set-point 5 mrad away with a tracking bound of 1 mrad: the next state trips the
    # tracking watchdog, and the arm is in the hold
    loop.ctrl.configure(dataclasses.replace(loop.settings,
                                            max_tracking_error=np.full(robot.dof, 1e-3)))
    event = loop.ctrl.desire(SetPoint(loop.arm.q + 0.005, np.zeros(robot.dof)), loop.t)
    assert event.kind == "tracking", event.message
    loop.run(0.002)
    loop.ctrl.configure(loop.settings)
    assert loop.ctrl.mode == HOLD, loop.events
    link = robot.body_links[robot.dof // 2]
    direction = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    force = scale * withstood_push(loop, link, direction) * direction
    loop.arm.set_external_wrench(link, force, np.zeros(3))
    loop.run(duration)
    loop.arm.set_external_wrench(link, np.zeros(3), np.zeros(3))
    start, norms = loop.energy_norm(), []
    loop.run(0.3, each=lambda lp: norms.append(lp.energy_norm()))
    return {"force": float(np.linalg.norm(force)), "link": link,
            "time_constant": decay_time(norms, start),
            "peak_ratio": float(np.max(loop.peak / loop.settings.velocity_bound)),
            "halted": loop.ctrl.halted, "events": loop.events}


def impedance_push(robot, q0, deflection=0.02):
    """Cartesian impedance at the default stiffness holding the tip where it is; a force at
    the tip along base x + y − z rising over 0.2 s, sized for a `deflection` [m] of K⁻¹F,
    held 2.5 s. Figures: the tip's displacement against K⁻¹F (relative error of the
    displacement vector), whether the push was taken for a collision, the events."""
    loop = Loop(robot, q0)
    loop.run(0.05)
    R0, p0 = loop.ref.tip_pose(loop.arm.q)
    defaults = node_defaults()
    K = np.diag(defaults["cartesian.stiffness"])
    n = robot.dof
    target = CartesianTarget(CARTESIAN_IMPEDANCE, R0, p0, K, defaults["cartesian.damping_ratio"],
                             np.zeros(6), None, np.full(n, 10.0), np.full(n, 5.0),
                             defaults["cartesian.max_position_error"],
                             defaults["cartesian.max_orientation_error"])
    event = loop.ctrl.desire(target, loop.t)
    if event.kind != "tracking":
        return {"refused": event.message, "events": loop.kinds()}
    direction = np.array([1.0, 1.0, -1.0]) / np.sqrt(3.0)
    F = deflection * K[0, 0] * direction
    started = loop.t

    def push(lp):
        R, _ = lp.ref.tip_pose(lp.arm.q)
        ramp = min(1.0, (lp.t - started) / 0.2)
        lp.arm.set_external_wrench(robot.tip_link, R.T @ (ramp * F), np.zeros(3))
    loop.run(2.5, each=push)
    _, p = loop.ref.tip_pose(loop.arm.q)
    expected = np.linalg.solve(K[:3, :3], F)
    return {"displacement_error": float(np.linalg.norm(p - p0 - expected)
                                        / np.linalg.norm(expected)),
            "collision": "collision" in loop.kinds() or loop.ctrl.mode == HOLD,
            "mode": loop.ctrl.mode, "events": loop.kinds()}


TITLES = {"ur3": "UR3", "ur10": "UR10", "panda": "Panda + hand", "kinova": "Kinova j2s6s200",
          "z1": "Unitree Z1", "xarm7": "xArm7"}


def span(values, fmt):
    """'a–b' of the smallest and largest value, or one figure where they print alike."""
    low, high = fmt.format(min(values)), fmt.format(max(values))
    return low if low == high else f"{low}–{high}"


def table(names=tuple(MATRIX_ARMS)):
    """Every cell's figures for `names`, as docs/testing.md's two tables (make matrix writes
    them there): the modes, then the identifications."""
    from arm_matrix_fits import arm_identification, payload_identification
    print("| arm (joints, mass) | gravity drift 1 s | tracking ±0.3 rad in 1.5 s | knock → "
          "hold: time constant, peak \\|q̇\\|/bound | held and pushed: peak \\|q̇\\|/bound, "
          "time constant | impedance: tip vs K⁻¹F | FollowJointTrajectory: code, largest "
          "error, at the end |")
    print("|---|---|---|---|---|---|---|")
    fits = []
    for name in names:
        robot = load(name)
        poses = working_poses(robot)
        knocks = [hold_after_knock(robot, q0) for q0 in poses]
        pushes = [push_in_hold(robot, q0) for q0 in poses]
        goal, cart = follow_goal(robot, poses[0]), impedance_push(robot, poses[0])
        impedance = cart.get("refused") or (
            f"{100 * cart['displacement_error']:.2g} %"
            + (", a collision" if cart.get("collision") else ", contact"))
        print(f"| {TITLES.get(name, name)} ({robot.dof}, {np.sum(robot.mass):.1f} kg) "
              f"| {gravity_drift(robot, poses[0])['drift']:.0e} rad "
              f"| {1e3 * tracking(robot, poses[0])['error']:.2f} mrad "
              f"| {span([1e3 * k['time_constant'] for k in knocks], '{:.0f}')} ms, "
              f"{span([k['peak_ratio'] for k in knocks], '{:.2f}')} "
              f"| {span([p['peak_ratio'] for p in pushes], '{:.2f}')}, "
              f"{span([1e3 * p['time_constant'] for p in pushes], '{:.0f}')} ms "
              f"| {impedance} "
              f"| {goal['code']}, {1e3 * goal['error']:.2f} mrad, {goal['end']:.0e} rad |",
              flush=True)
        fits.append((name, payload_identification(robot, poses[0], name),
                     arm_identification(robot, poses[0], name)))
    print("\n| arm | payload (5 % of the arm's mass, declared 30 % light): mass, centre of "
          "mass, tracking | `~/identify_arm` (links ±5 % off): held out, the URDF's, "
          "tracking |")
    print("|---|---|---|")
    for name, payload, arm in fits:
        print(f"| {TITLES.get(name, name)} | " + (
            payload.get("interrupted") or f"{100 * payload['mass_error']:.1g} %, "
            f"{1e3 * payload['com_error']:.2g} mm, {payload['tracking_error']:.3f} rad") + " | "
            + (arm.get("interrupted") or f"{100 * arm['identified_error']:.2f} %, "
               f"{100 * arm['urdf_error']:.2f} %, {arm['tracking_error']:.3f} rad") + " |")


if __name__ == "__main__":
    table(sys.argv[1:] or tuple(MATRIX_ARMS))

"""The demo's next-to-a-person phase (scenario.py, 13.): a hand resting on a table in the
tool's way (sim_arm's hand_stand_in, clamped: ISO/TS 15066's hand, 75 N/mm, which cannot
move away), two runs with fresh processes, each the same fast move through it:

    limited   dynamics_node at its defaults, told that a contact may clamp
              (contact_type: clamped), the drives' armature (which the mass it limits
              includes) and the plant's friction (compensated);
    off       the same with power_force_limiting false.

The hand's face is where the move, as planned, carries the tool fastest, facing its motion
there. Each run sends the move (a quintic of PERSON_MOVE_SECONDS, every joint at up to
PERSON_SPEED of its velocity bound); the node's observer calls the touch a collision and
holds the arm. Figures: the hand's largest force [N] (sim_arm's ~/hand_force), the tool's
speed along the hand's axis in the period before the touch [m/s] (from the recorded
positions: MuJoCo's), and the speed the node allows there (the library's model)."""

import time

import numpy as np

from ..control.contact_safety import REGIONS, ContactLimit
from ..control.trajectory import Trajectory
from ..ros.processes import stop_processes
from .scenario import (ARMATURE, PERSON_MOVE_SECONDS, PERSON_SPEED, PERSON_WINDOW, Q0,
                       START)
from .supervisor import Supervisor, move_to, start_processes

HAND = REGIONS["hand"]
RUNS = (("limited", []), ("off", ["-p", "power_force_limiting:=false"]))


def hand_in_the_way(robot, solver):
    """(goal (n,), the hand's face (3,) [m], its axis (3,), base frame): the move from Q0
    and where its tool is fastest, moving along the axis there."""
    bound = np.asarray(robot.velocity_limit, dtype=float)
    step = PERSON_SPEED * bound * PERSON_MOVE_SECONDS / 1.875 * (-1.0) ** np.arange(robot.dof)
    goal = np.clip(Q0 + step, robot.lower + 0.05, robot.upper - 0.05)
    rest = np.zeros((2, robot.dof))
    path = Trajectory(0.0, [0.0, PERSON_MOVE_SECONDS], [Q0, goal], rest, rest)
    q, qd, _ = path.sample_many(np.linspace(0.0, PERSON_MOVE_SECONDS, 401))
    v = np.einsum("kij,kj->ki", solver.jacobian_batch(q)[:, :3], qd)
    fastest = int(np.argmax(np.linalg.norm(v, axis=1)))
    axis = v[fastest] / np.linalg.norm(v[fastest])
    return goal, solver.tip_pose(q[fastest])[1], axis


def run_person(phase, urdf, rate, engine, lockstep, progress):
    """{"limited": figures, "off": figures, "simulated" [s], "wall" [s]}, figures =
    {"peak" [N], "speed" [m/s] along the axis before the touch, "allowed" [m/s] there,
    "mass" [kg] the tool carries along the axis there, "events": the node's}."""
    from .. import load_robot, make_solver
    robot = load_robot(urdf)
    solver = make_solver(robot, "pinocchio")
    goal, face, axis = hand_in_the_way(robot, solver)
    hand = ["-p", f"hand_stand_in:={[*face.tolist(), *axis.tolist()]}",
            "-p", "hand_stand_in_clamped:=true", "-p", "time_step:=0.0002"]
    observed = {"simulated": 0.0, "wall": 0.0}
    for run, switch in RUNS:
        sup = Supervisor(phase, robot, rate, lockstep, [])
        forces = _hand_forces(sup)
        try:
            sup.processes[:] = start_processes(
                urdf, phase, rate, engine, lockstep, hold_expected=True, sim_extra=hand,
                node_extra=["-p", "contact_type:=clamped", "-p", f"armature:={ARMATURE}",
                            *switch])
            if lockstep:
                sup.found()
            sup.flowing(sup.run_to(START))
            began, now = time.monotonic(), sup.now()
            event = sup.desire(sup.trajectory_pub, move_to(sup.names, sup.measured(), goal,
                                                           now, PERSON_MOVE_SECONDS), "move")
            if event.kind != "tracking":
                raise RuntimeError(f"phase '{phase.name}': {event.message}")
            end = now + PERSON_WINDOW
            while sup.now() < end - 1e-9:    # until PERSON_WINDOW, or 0.5 s after the touch
                sup.run_to(min(end, sup.now() + 0.1),
                           lambda t, run=run: progress(
                               f"  {run}: {t - now:4.1f}/{PERSON_WINDOW:.0f} s"))
                touched = [t for t, f in forces if f > 0.0]
                if touched:
                    end = min(end, touched[0] + 0.5)
            observed["simulated"] += sup.now() - now
            observed["wall"] += time.monotonic() - began
            observed[run] = _figures(sup, solver, forces, axis)
        finally:
            stop_processes(sup.processes)
            sup.close()
    progress(" " * 60)
    return observed


def _hand_forces(sup):
    """[(stamp [s], the hand's force [N])], filled from sim_arm's ~/hand_force."""
    from geometry_msgs.msg import WrenchStamped
    forces = []

    def on_force(msg):
        f = msg.wrench.force
        forces.append((msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec,
                       float(np.linalg.norm([f.x, f.y, f.z]))))
    sup.node.create_subscription(WrenchStamped, "/sim_arm/hand_force", on_force, 100)
    return forces


def _figures(sup, solver, forces, axis):
    """A run's figures (run_person) from its recording; None figures where the tool never
    touched the hand."""
    touch = next((t for t, f in forces if f > 0.0), None)
    figures = {"peak": max((f for _, f in forces), default=0.0), "speed": None,
               "allowed": None, "mass": None, "events": [e for _, e in sup.events]}
    states = [(t, q) for t, q, _ in sup.log if touch is not None and t < touch - 1e-9]
    if len(states) < 2:
        return figures
    (t0, q0), (t1, q1) = states[-2:]
    p0, p1 = solver.tip_pose(q0)[1], solver.tip_pose(q1)[1]
    J_v = solver.jacobian(q1)[:3]
    w = J_v.T @ axis
    mass = 1.0 / float(w @ solver.mass_matrix_inverse(q1) @ w)
    figures.update(speed=float((p1 - p0) @ axis) / (t1 - t0), mass=mass,
                   allowed=float(ContactLimit(clamped=True).speed_limit(mass)))
    return figures


def person_verdict(observed):
    """(ok, sentence): limited, the hand pressed within its quasi-static force (clamped:
    ISO/TS 15066 Table A.2, 140 N); off, beyond it (the limit is what made the
    difference); both runs touched it."""
    limited, off = observed["limited"], observed["off"]
    if limited["speed"] is None or off["speed"] is None:
        return False, "the tool never touched the hand: nothing shown"
    ok = limited["peak"] <= HAND.force < off["peak"]
    return ok, (
        f"a hand on a table in the tool's way (75 N/mm, clamped): limited, the tool met it "
        f"at {limited['speed']:.3f} m/s (the node allows {limited['allowed']:.3f} m/s for "
        f"the {limited['mass']:.2f} kg it carries along it) and pressed it with at most "
        f"{limited['peak']:.0f} N (the hand's quasi-static limit: {HAND.force:.0f} N); with "
        f"power_force_limiting off, {off['speed']:.2f} m/s and {off['peak']:.0f} N"
        + (", as expected" if ok else ": NOT as expected"))

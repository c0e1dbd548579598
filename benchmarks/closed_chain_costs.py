"""What a state of the shipped closed linkages costs (urdf/rd_palletizer.urdf, urdf/rd_delta.urdf
with their params files), beside the shipped serial UR5e's calls in the same run: closing a
state from the last one (the motors moved 1 mrad), inverse dynamics with the multipliers,
forward dynamics (KKT) and Λ at the tool; and a step of the controller core at the node's
defaults in gravity compensation (observer on) on the palletizer's motors (ClosedChainSolver)
and on the UR5e (Pinocchio). Median and 99th percentile [µs] over a sweep of the motors, a
new state per call (no result reused from the call before).

    python -m benchmarks.closed_chain_costs [--calls 2000]
"""

import argparse
import pathlib
import time

import numpy as np
import yaml

import robo_dynamics as rd
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.backends.closed_chain_backend import ClosedChainSolver
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.settings import controller_settings
from robo_dynamics.ros.parameter_tables import DYNAMICS_NODE

REPO = pathlib.Path(__file__).resolve().parents[1]


def linkage(name):
    section = yaml.safe_load((REPO / "config" / f"{name}.yaml").read_text())
    return load_closed_chain(REPO / "urdf" / f"{name}.urdf",
                             section["/**/dynamics_node"]["ros__parameters"])


def timed(calls, each):
    """(median, 99th percentile) [µs] of each(k) for k in range(calls)."""
    spent = np.empty(calls)
    for k in range(calls):
        began = time.perf_counter()
        each(k)
        spent[k] = time.perf_counter() - began
    return 1e6 * np.median(spent), 1e6 * np.percentile(spent, 99)


def linkage_rows(name, tip, calls):
    chain = linkage(name)
    motors = list(chain.actuated)
    k_motors = len(motors)
    # the motors swept ±0.3 rad about the drawn pose (about 1 mrad from one state to the
    # next), each state closed from the last
    t = np.arange(calls) / calls
    offsets = 0.3 * np.sin(2.0 * np.pi * np.outer(t, np.linspace(1.0, 1.7, k_motors)))
    poses, q = [], chain.reference.copy()
    for offset in offsets:
        goal = q.copy()
        goal[motors] = chain.reference[motors] + offset
        q = chain.close(goal, q)
        poses.append(q)
    rng = np.random.default_rng(0)
    rates = [chain.velocities(x, rng.uniform(-1.0, 1.0, k_motors)) for x in poses]
    accelerations = [chain.accelerations(x, xd, rng.uniform(-2.0, 2.0, k_motors))
                     for x, xd in zip(poses, rates)]
    torques = rng.uniform(-10.0, 10.0, (calls, k_motors))

    def close(k):
        goal = poses[k - 1].copy() if k else chain.reference.copy()
        goal[motors] = poses[k][motors]
        chain.newton(goal)
    return [(name, "close from the last state (Newton)", timed(calls, close)),
            (name, "inverse dynamics with λ", timed(
                calls, lambda k: chain.inverse_dynamics(poses[k], rates[k], accelerations[k]))),
            (name, "forward dynamics (KKT)", timed(
                calls, lambda k: chain.forward_dynamics(poses[k], rates[k], torques[k]))),
            (name, f"Λ at {tip}", timed(
                calls, lambda k: chain.operational_space_inertia(poses[k], tip)))]


def serial_rows(calls):
    robot = rd.load_robot(REPO / "urdf" / "rd_ur5e.urdf")
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (calls, 6)) for _ in range(3))
    rows = []
    for backend in ("pinocchio", "rnea"):
        solver = rd.make_solver(robot, backend).unchecked
        rows += [("rd_ur5e", f"inverse dynamics ({backend})",
                  timed(calls, lambda k: solver.inverse_dynamics(q[k], qd[k], qdd[k]))),
                 ("rd_ur5e", f"Λ at tool0 ({backend})",
                  timed(calls, lambda k: solver.operational_space_inertia(q[k])))]
    return rows


def controller_rows(calls):
    """A controller step at the node's defaults (gravity compensation, the observer on), on
    the palletizer and the UR5e, the motors swept at 0.5 Hz (as benchmarks/linkage_node.py)
    with the torques that make the motion (a model-exact arm: the observer sees no contact,
    so every step computes a command)."""
    defaults = {name: spec.default for name, spec in DYNAMICS_NODE.items()}
    rows = []
    for arm, solver, start in (
            ("rd_palletizer", ClosedChainSolver(linkage("rd_palletizer"), "tool0"),
             np.array([0.5, 0.3, -0.3, 0.4])),
            ("rd_ur5e", rd.make_solver(rd.load_robot(REPO / "urdf" / "rd_ur5e.urdf"),
                                       "pinocchio"),
             np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4]))):
        names = list(solver.model.joint_names)
        controller = Controller(solver, JointStateMerger(names, names),
                                controller_settings(defaults, solver.model))
        t = np.arange(calls) * 1e-3
        omega = 2.0 * np.pi * 0.5
        amplitude = 0.1 * np.linspace(1.0, 1.7, len(names))
        q = start + np.outer(np.sin(omega * t), amplitude)
        qd = omega * np.outer(np.cos(omega * t), amplitude)
        qdd = -omega ** 2 * np.outer(np.sin(omega * t), amplitude)
        effort = [solver.inverse_dynamics(*state).tolist() for state in zip(q, qd, qdd)]
        commands = []

        def step(k):
            cycle = controller.step(names, q[k].tolist(), qd[k].tolist(), effort[k], t[k], t[k])
            commands.append(cycle.command is not None)
        figures = timed(calls, step)
        if sum(commands) < calls - 1:          # the first state only starts the stream
            raise SystemExit(f"{arm}: {calls - sum(commands)} of {calls} steps gave no "
                             "command: the figure would not be a step's cost")
        rows.append((arm, "controller step (gravity, observer on)", figures))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args(argv)
    rows = (linkage_rows("rd_palletizer", "tool0", args.calls)
            + linkage_rows("rd_delta", "platform", args.calls) + serial_rows(args.calls)
            + controller_rows(args.calls))
    print("| arm | call | median [µs] | p99 [µs] |\n| --- | --- | --- | --- |")
    for arm, call, (median, p99) in rows:
        print(f"| {arm} | {call} | {median:.0f} | {p99:.0f} |")


if __name__ == "__main__":
    main()

"""dynamics_node's joint-state callback at 1 kHz on the shipped palletizer and Delta (their
loops closed on every state) and on the shipped UR5e, in the same run (issues 47 and 64:
BENCHMARKS.md 3e).

    python -m benchmarks.linkage_node [--seconds S] [--rounds N] [--arms NAME ...]

A driver publishes the motors' states at 1 kHz, each motor swept 0.1 to 0.17 rad at 0.5 Hz
(a new closure on every state), with the efforts that make the motion; the node computes gravity
compensation with the observer on (its defaults, normal scheduler). Callback time: the
node's own, from /diagnostics (the median of its reports' p50 and p99)."""

import argparse
import sys

import numpy as np
import yaml

from .closed_chain_costs import linkage
from .measure import REPO
from .node import callback_percentiles, drive

SWEEP_HZ = 0.5          # each motor swept at this frequency, 0.1 to 0.17 rad about its start
ARMS = {"rd_palletizer": np.array([0.5, 0.3, -0.3, 0.4]),
        "rd_delta": np.array([0.2, -0.1, 0.15]),
        "rd_ur5e": np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])}


def run(name, start, seconds, rate):
    """The drive() result for the node on urdf/<name>.urdf with config/<name>.yaml."""
    import robo_dynamics as rd
    from robo_dynamics.backends.closed_chain_backend import ClosedChainSolver
    urdf, params = REPO / "urdf" / f"{name}.urdf", REPO / "config" / f"{name}.yaml"
    section = yaml.safe_load(params.read_text())["/**/dynamics_node"]["ros__parameters"]
    if "loop_closures" in section:
        solver = ClosedChainSolver(linkage(name), section["tip_link"])
    else:
        solver = rd.make_solver(rd.load_robot(urdf), "pinocchio")
    names = list(solver.model.joint_names)
    # one period of the sweep, with the torques that make it (a model-exact arm: the
    # observer sees no contact), at well under each joint's velocity bound
    amplitude = 0.1 * np.linspace(1.0, 1.7, len(names))
    phase = 2.0 * np.pi * SWEEP_HZ * np.arange(int(rate / SWEEP_HZ))[:, None] / rate
    q = start + amplitude * np.sin(phase)
    qd = 2.0 * np.pi * SWEEP_HZ * amplitude * np.cos(phase)
    qdd = -(2.0 * np.pi * SWEEP_HZ) ** 2 * amplitude * np.sin(phase)
    states = [(a.tolist(), b.tolist(), solver.inverse_dynamics(a, b, c).tolist())
              for a, b, c in zip(q, qd, qdd)]

    def motion(k):
        return states[k % len(states)]
    command = [sys.executable, "-m", "robo_dynamics.ros.dynamics_node.node", "--ros-args",
               "--log-level", "warn", "--params-file", str(params),
               "-p", f"robot_description_file:={urdf}", "-p", "marker_rate:=0.0",
               "-p", "diagnostics_rate:=2.0"]
    return drive(command, "/dynamics_node/commanded_torques", seconds, rate, names, start,
                 effort=solver.gravity(start), motion=motion)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per arm and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--arms", nargs="+", choices=list(ARMS), default=list(ARMS))
    args = parser.parse_args(argv)
    import rclpy
    from robo_dynamics.ros.isolation import isolate
    isolate()
    rclpy.init()
    medians = {name: [] for name in args.arms}
    try:
        print("| round | arm | sent | answered | callback p50 / p99 [µs] | node CPU [%] |")
        print("| --- | --- | --- | --- | --- | --- |")
        for round_ in range(1, args.rounds + 1):       # the arms in turn: the VM drifts
            for name in args.arms:
                result = run(name, ARMS[name], args.seconds, args.rate)
                p50, p99, _, _ = callback_percentiles(result)
                medians[name].append(p50)
                print(f"| {round_} | {name} | {result['sent']} | {result['received']} | "
                      f"{p50:.0f} / {p99:.0f} | {result['cpu_percent']:.0f} |", flush=True)
    finally:
        rclpy.try_shutdown()
    serial = np.array(medians.get("rd_ur5e", []))
    for name in args.arms:
        if name == "rd_ur5e" or not len(serial):
            continue
        ratio = np.array(medians[name]) / serial
        print(f"\ncallback p50, median of the rounds: {name} "
              f"{np.median(medians[name]):.0f} µs, rd_ur5e {np.median(serial):.0f} µs; ratio "
              f"per round {', '.join(f'{x:.2f}' for x in ratio)} (median {np.median(ratio):.2f})")


if __name__ == "__main__":
    main()

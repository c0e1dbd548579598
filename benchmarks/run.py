"""Benchmarks: in-house vs Pinocchio, and dynamics_node at 1 kHz. Not part of the tests.

    make bench            (= .venv/bin/python -m benchmarks.run)
    python -m benchmarks.run [--node-seconds 30] [--skip-node] [--output BENCHMARKS.md]

Prints each table and writes them all to BENCHMARKS.md. Every process that starts ROS here
runs on the loopback only, in a ROS domain of this run's own.
"""


import argparse
import os
import pathlib
import platform
import sys
import time

from robo_dynamics.algorithms.compiled.chain_codegen import BATCH_CHUNK
from robo_dynamics.ros.isolation import isolate

from .library import (BAG_MESSAGES, MAX_ROUNDS, OVERHEAD_ERROR, bag_check_cost, batched,
                      observer_cost, single_calls, trajectory_check_cost)
from .measure import REPO, markdown_table, verdicts
from .modes import MODES, mode_cost
from .node import (OBSERVER_TARGET_US, PRIORITY, check_load_benchmark, node_benchmark,
                   node_section)

KEPT = "## Design measurements"    # this section of BENCHMARKS.md is written by hand and kept
SINGLE_TARGETS = {"rnea": 20.0, "mass matrix": 20.0, "J": 10.0, "Λ": 2.0,
                  "∂τ/∂q, ∂τ/∂q̇": 30.0}       # rnea backend's public call / Pinocchio's, Panda
OVERHEAD_TARGET_US = 2.0    # a public call minus the computation it wraps
BATCH_TARGETS = {"rnea": 1.0 / 3.0, "mass matrix": 1.0, "Λ": 1.0,
                 "∂τ/∂q, ∂τ/∂q̇": 1.0}         # per state, in-house / Pinocchio loop
CHECK_TARGET_MS = 20.0      # check_trajectory, 10 000 samples of a 7-DoF trajectory
BAG_TARGET_S = 60.0         # dynamics_check on a 10-minute bag of 1 kHz joint states


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--node-seconds", type=float, default=30.0)
    parser.add_argument("--skip-node", action="store_true")
    parser.add_argument("--output", default=str(REPO / "BENCHMARKS.md"))
    args = parser.parse_args(argv)
    isolate()
    sections = [f"# Benchmarks\n\nMeasured by `make bench` (`python -m benchmarks.run`) on "
                f"{platform.machine()}, {os.cpu_count()} cores, Python "
                f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}. In-house and "
                "Pinocchio side by side in one process, same states; medians after warm-up."]

    print("1. single calls ...", flush=True)
    rows, overhead = single_calls()
    table = markdown_table(("arm", "quantity", "Pinocchio [µs]", "pinocchio backend [µs]",
                            "rnea backend [µs]", "rnea / Pinocchio"), rows)
    sections.append("## 1. Single call\n\nThe call a user makes, one state: each backend's "
                    "public method (`solver.inverse_dynamics(q, qd, qdd)`, `gravity(q)`, "
                    "`mass_matrix(q)`, `jacobian(q)`, `operational_space_inertia(q)`, "
                    "`inverse_dynamics_derivatives(q, qd, qdd)`; float64 arrays, checked on the way in) "
                    "against Pinocchio's own Python call on the same arrays (Λ: "
                    "computeMinverse + computeFrameJacobian + `np.linalg.inv(J M⁻¹ Jᵀ)`; ours "
                    "also bounds Λ near singularities, see algorithms/operational_space.py). "
                    "The rnea backend runs the code generated for the arm; the last row of "
                    "each arm is the vectorised NumPy RNEA it is generated from.\n\n" + table
                    + "\n\n" + verdicts(rows, SINGLE_TARGETS, 5, "Panda",
                                         "rnea backend × Pinocchio on the Panda"))
    print(sections[-1], flush=True)
    worst = max(float(cell.split(" ± ")[0]) for row in overhead for cell in row[2:4])
    sections.append(
        "## 1a. What the public call adds\n\nPublic call minus the same backend's "
        "computation without argument checks (`solver.unchecked`, the fast path the node uses on "
        "states it has checked once), per call, µs: the checks (type, shape, finiteness of "
        "each argument) and the call itself. Timed in turn with the calls of section 1, "
        "round after round; the median of the rounds' differences ± its standard error "
        f"(rounds added, up to {MAX_ROUNDS}, until it is ≤ {OVERHEAD_ERROR * 1e6:.2f} µs: a "
        "130 µs call drifts by more than the checks cost within a round).\n\n"
        + markdown_table(("arm", "quantity", "rnea backend [µs]", "pinocchio backend [µs]",
                          "rounds"), overhead)
        + f"\n\nTarget: ≤ {OVERHEAD_TARGET_US:.0f} µs per call — worst {worst:.2f} µs "
        + ("(met)." if worst <= OVERHEAD_TARGET_US else "(**not met**)."))
    print(sections[-1], flush=True)

    print("1b. the external-torque observer ...", flush=True)
    rows = observer_cost()
    sections.append(
        "## 1b. The external-torque observer\n\nThe controller core's step for one joint "
        "state of the Panda (gravity compensation, efforts given), without and with the "
        "momentum observer (p = M q̇, β = g − Cᵀ q̇, the residual and the contact levels): "
        "what the observer adds to dynamics_node's joint-state callback (a warm loop: its "
        "time inside the running node is in section 3).\n\n"
        + markdown_table(("backend", "step, observer off [µs]", "step, observer on [µs]",
                          "observer [µs]"), rows)
        + f"\n\nTarget: observer ≤ {OBSERVER_TARGET_US:.0f} µs per joint state — "
        + "; ".join(f"{row[0]} {row[3]} µs ("
                    + ("met" if float(row[3]) <= OBSERVER_TARGET_US else "**not met**") + ")"
                    for row in rows) + ".")
    print(sections[-1], flush=True)

    print("1c. the controller's step per mode ...", flush=True)
    rows = mode_cost()
    sections.append(
        "## 1c. The controller's step per mode\n\nThe controller core's step for one joint "
        "state of the Panda moving (q̇ ≠ 0, observer off), per control mode, without and "
        "with power_force_limiting (the tool kept to a contact's speed: the brake's J and "
        "M⁻¹, the trajectory's speed scaling, the way's timing): gravity "
        "compensation; tracking (computed torque, one RNEA, along a fast move); Cartesian impedance (J, M⁻¹, Λ, "
        "the tip's pose and the damping by double diagonalisation: a Cholesky factor and a "
        "6 × 6 eigen-decomposition per state); the same with the nullspace posture pull; "
        "operational space (J̇q̇ instead of the eigen-decomposition). A warm loop, the modes "
        "in turn, median of 5 rounds, µs. What it costs the joint-state callback at 1 kHz "
        f"(1000 µs a period): section 3 for the node's whole callback.\n\n"
        + markdown_table(("backend", *MODES), rows))
    print(sections[-1], flush=True)

    print("2. batched ...", flush=True)
    rows = batched()
    table = markdown_table(("arm", "quantity", "N", "in-house per state [µs]",
                            "Pinocchio loop per state [µs]", "ratio"), rows)
    sections.append("## 2. Batched\n\nIn-house: the rnea backend's batched methods "
                    "(inverse_dynamics_batch, gravity_batch, mass_matrix_batch, "
                    "operational_space_inertia_batch, inverse_dynamics_derivatives_batch: the generated "
                    f"code run on NumPy arrays of states, in chunks of {BATCH_CHUNK}; Λ by "
                    "batched NumPy linear algebra) vs Pinocchio called in a Python loop. Best "
                    "of 3–5 runs each.\n\n" + table + "\n\n"
                    + verdicts(rows, BATCH_TARGETS, 5, "", "× the Pinocchio loop per state, "
                               "worst arm"))
    print(sections[-1], flush=True)

    print("2b. trajectory check ...", flush=True)
    rows = trajectory_check_cost()
    best = max(float(row[1]) for row in rows if "backend rnea" in row[0])   # its worst case
    sections.append(
        "## 2b. Trajectory check\n\n`check_trajectory` (control/trajectory_check.py) on "
        "10 001 samples of a 7-DoF Panda trajectory (10 s at 1 ms; and the same path twenty "
        "times faster, 0.5 s at 0.05 ms, beyond the limits): sampling the spline, batched "
        "inverse dynamics, limits, first violation, and when beyond them g(q) and the time "
        "scale. Against Pinocchio called per sample for the torques and gravity. Best of "
        "3–5 runs.\n\n"
        + markdown_table(("what", "time [ms]", "× the loop"), rows)
        + f"\n\nTarget: ≤ {CHECK_TARGET_MS:.0f} ms — {best:.1f} ms (rnea, the slower case) "
        + ("(met)." if best <= CHECK_TARGET_MS else "(**not met**)."))
    print(sections[-1], flush=True)

    print("2c. bag analysis ...", flush=True)
    rows, size = bag_check_cost()
    total = float(rows[0][1])
    sections.append(
        f"## 2c. Bag analysis\n\n`dynamics_check` on a bag of {BAG_MESSAGES} joint states (10 "
        f"minutes at 1 kHz; Panda, 9 joints with positions, velocities and efforts; MCAP "
        f"with zstd chunks, {size:.0f} MB, written by rclpy's serializer): read, "
        "accelerations, effort check of every state, per-joint table with the residual, PNG. "
        "One run.\n\n" + markdown_table(("what", "time [s]"), rows)
        + f"\n\nTarget: ≤ {BAG_TARGET_S:.0f} s — {total:.1f} s "
        + ("(met)." if total <= BAG_TARGET_S else "(**not met**)."))
    print(sections[-1], flush=True)

    if not args.skip_node:
        print(f"3. node at 1 kHz, {args.node_seconds:.0f} s per run (dynamics_node with "
              f"each backend and cross-check rate, echo; SCHED_FIFO {PRIORITY} and normal "
              "scheduler) ...", flush=True)
        runs = node_benchmark(args.node_seconds)
        sections.append(node_section(runs, args.node_seconds, PRIORITY))
        print(sections[-1], flush=True)

        print("3b. node at 1 kHz while trajectories are checked ...", flush=True)
        rows, level = check_load_benchmark(args.node_seconds)
        sections.append(
            "## 3b. Commands while trajectories are checked\n\ndynamics_node on the Panda at "
            f"1 kHz for {args.node_seconds:.0f} s (Pinocchio, cross-check 1 Hz, observer on, "
            + (f"joint-state thread SCHED_FIFO {level}" if level else "normal scheduler")
            + "), alone and while `benchmarks/check_client.py`, another process, calls "
            "`~/check_trajectory` every 0.5 s with a 10 s trajectory (10 001 samples; the "
            "node checks on its background thread at nice +10). Latency: joint state "
            "published → commanded torques received, µs; callback max: the largest "
            "joint-state callback time the node reported on /diagnostics, µs.\n\n"
            + markdown_table(("run", "drops", "latency p50", "latency p99", "callback max",
                              "checks × median round trip"), rows))
        print(sections[-1], flush=True)

    output = pathlib.Path(args.output)
    kept = output.read_text().partition(KEPT)[2] if output.is_file() else ""
    sections.append(KEPT + kept.rstrip("\n") if kept else "")
    output.write_text("\n\n".join(s for s in sections if s) + "\n")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

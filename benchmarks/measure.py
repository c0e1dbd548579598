"""What the benchmarks share: timing a call, paired rounds and their error, the arms
benchmarked, Pinocchio's Λ as a user writes it, a process's CPU and memory, tables."""

import os
import pathlib
import time

import numpy as np

from robo_dynamics.paths import example_robots

REPO = pathlib.Path(__file__).resolve().parent.parent
EXAMPLE_ROBOTS = example_robots()
ARMS = {"rd_ur5e (6-DoF)": (REPO / "urdf" / "rd_ur5e.urdf", None),
        "Panda (7-DoF)": (EXAMPLE_ROBOTS / "panda_description/urdf/panda.urdf", "panda_hand_tcp")}


def per_call(function, budget=0.25, repeats=15):
    """Median seconds per call: `repeats` batches sized to ~budget/repeats each, after a
    warm-up."""
    for _ in range(50):
        function()
    start = time.perf_counter()
    count = 0
    while time.perf_counter() - start < 0.02:
        function()
        count += 1
    batch = max(1, int(count * (budget / repeats) / 0.02))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(batch):
            function()
        samples.append((time.perf_counter() - t0) / batch)
    return float(np.median(samples))


def interleaved(calls, rounds=15, budget=0.04):
    """Seconds per call, (rounds, len(calls)): the calls timed in turn in each round, so a
    difference between two columns of one row is a paired measurement (the host's speed
    drifts between rounds, not within one)."""
    return np.array([[per_call(call, budget=budget, repeats=3) for call in calls]
                     for _ in range(rounds)])


def median_error(differences):
    """Standard error of the median of each column (1.25 σ / √N, σ from the median absolute
    deviation): how well a paired difference is known."""
    deviation = np.median(np.abs(differences - np.median(differences, axis=0)), axis=0)
    return 1.2533 * 1.4826 * deviation / np.sqrt(len(differences))


def timed(function):
    t0 = time.perf_counter()
    function()
    return time.perf_counter() - t0


def arms():
    """(arm label, model, rnea solver, Pinocchio model, a fresh Pinocchio data, tip frame id)
    for each benchmarked arm. Their Pinocchio configuration is ours (no continuous joints;
    the Panda's fingers locked, as the Pinocchio backend does), so Pinocchio is called with
    the same arrays."""
    import pinocchio as pin

    import robo_dynamics as rd
    for arm, (path, tip) in ARMS.items():
        model = rd.load_robot(path, tip_link=tip)
        pm = rd.make_solver(model, "pinocchio").pin_model    # joints off the chain locked
        assert pm.nq == pm.nv == model.dof, f"{arm}: Pinocchio's q is not ours"
        frame = pm.getFrameId(model.tip_link, pin.BODY)
        yield arm, model, rd.make_solver(model, "rnea"), pm, pm.createData(), frame


def pin_lambda(pm, data, frame):
    """Pinocchio's Λ for one state as a user writes it: computeMinverse (both triangles
    filled), the frame Jacobian, a NumPy inverse."""
    import pinocchio as pin

    def call(q):
        M_inv = pin.computeMinverse(pm, data, q)
        J = pin.computeFrameJacobian(pm, data, q, frame, pin.LOCAL_WORLD_ALIGNED)
        return np.linalg.inv(J @ M_inv @ J.T)
    return call


def process_stats(pid):
    """(CPU seconds used, resident memory in MiB) of a process, from /proc."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    rss = 0.0
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024.0
    return cpu, rss


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def verdicts(rows, targets, column, arm, what):
    """'Targets (…): quantity ≤ x — measured y (met)' for each target, from table rows
    (ratio in `column`; the worst over arms whose label starts with `arm`)."""
    parts = []
    for quantity, target in targets.items():
        ratios = [float(str(r[column]).rstrip("×")) for r in rows
                  if r[1] == quantity and r[0].startswith(arm)]
        worst = max(ratios)
        parts.append(f"{quantity} ≤ {target:.2g} — {worst:.2f} "
                     + ("(met)" if worst <= target else "(**not met**)"))
    return f"Targets ({what}): " + "; ".join(parts) + "."

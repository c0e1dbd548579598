"""The paper's spatial four-bar (Lee, Sohn, Kim and Yoo, §5.2) falling freely for its 2 s,
integrated three ways — Dormand–Prince and BDF on the reduced equations, BDF with the system
Jacobian on eq. 27 — and by MuJoCo (loop as an equality constraint, 20 µs steps): how far
each is from Dormand–Prince at a tolerance ten times tighter, every 0.25 s, and what each
costs. test/unit/test_closed_chain_motion.py asserts the first 0.5 s; this is the 2 s (minutes).

    python -m benchmarks.closed_chain_fall [--tolerance 1e-10] [--seconds 2]
"""

import argparse
import pathlib
import sys
import time

import numpy as np

from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.simulation.constrained.dae import BDF
from robo_dynamics.simulation.constrained.integrators import ReducedBDF, dormand_prince
from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "test"))
from closed_chain_models import (SPATIAL_FOUR_BAR_PARAMETERS,  # noqa: E402 (the tests' model)
                                 spatial_four_bar_urdf)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tolerance", type=float, default=1e-10)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args(argv)
    chain = load_closed_chain(spatial_four_bar_urdf(), SPATIAL_FOUR_BAR_PARAMETERS,
                              actuated_joints=["crank_joint"])
    q0, qd0 = chain.close(np.array([0.3, 0.0, 0.0, 0.0]), chain.reference), np.zeros(4)
    times = np.arange(0.25, args.seconds + 1e-9, 0.25)

    def explicit(tolerance):
        def run():
            q, qd, t, out = q0, qd0, 0.0, []
            for t_next in times:
                q, qd, _ = dormand_prince(chain, q, qd, t_next - t, tolerance)
                t = t_next
                out.append(q)
            return out
        return run

    def stepper(make):
        def run():
            integrator = make()
            return [integrator.advance(t)[0] for t in times]
        return run

    def mujoco():
        plant, t, out = MujocoClosedChain(chain, time_step=2e-5), 0.0, []
        plant.set_state(q0, qd0)
        for t_next in times:
            out.append(plant.run(t_next - t)[0])
            t = t_next
        return out

    runs = {"Dormand–Prince, tighter (reference)": explicit(args.tolerance / 10),
            "Dormand–Prince": explicit(args.tolerance),
            "BDF, reduced equations": stepper(lambda: ReducedBDF(chain, q0, qd0,
                                                                 tolerance=args.tolerance)),
            "BDF, eq. 27 with its system Jacobian": stepper(
                lambda: BDF(chain, q0, qd0, tolerance=args.tolerance)),
            "MuJoCo, 20 µs": mujoco}
    reference = None
    print(f"spatial four-bar, {args.seconds:g} s, tolerance {args.tolerance:g}: largest "
          f"|q − reference| [rad] at " + ", ".join(f"{t:g}" for t in times) + " s")
    for name, run in runs.items():
        started = time.process_time()
        states = np.array(run())
        cpu = time.process_time() - started
        if reference is None:
            reference = states
        errors = np.abs(states - reference).max(axis=1)
        print(f"  {name}: {cpu:.1f} s of CPU; " + " ".join(f"{e:.1e}" for e in errors))


if __name__ == "__main__":
    main()

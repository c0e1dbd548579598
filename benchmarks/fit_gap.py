"""Do the fits starve the command stream? The largest gap between two commands of a 1 kHz
command thread (sleep to the next millisecond, one gravity torque of the arm: what the
joint-state thread does per state) while a UR10-sized arm identification is fitted (a 30 s
recording at 1 kHz: the estimate, the semidefinite program, the corrected URDF), with the
fit in a thread of this process (as before) and in a process of its own (identification/fit_process.py,
what ~/identify_arm does), beside the machine's own jitter (nothing running).

    python -m benchmarks.fit_gap [--seconds-of-data 30]
"""

import argparse
import sys
import threading
import time

import numpy as np

import robo_dynamics as rd
from robo_dynamics.blas_threads import single_threaded_blas
from robo_dynamics.identification.arm_fit import fit_recording
from robo_dynamics.identification.fit_process import run_in_process
from robo_dynamics.paths import example_robots

PERIOD = 1e-3      # s: the command thread's


def recording(robot, seconds, rate=1000.0, seed=0):
    """(t, q, q̇, τ) of a smooth random motion with 0.5 N·m of torque noise."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    w = 2.0 * np.pi * 0.1 * np.arange(1, 6)
    a, b = rng.uniform(-0.2, 0.2, (2, 5, robot.dof))
    q = np.sin(np.outer(t, w)) @ a + np.cos(np.outer(t, w)) @ b
    qd = (np.cos(np.outer(t, w)) * w) @ a - (np.sin(np.outer(t, w)) * w) @ b
    qdd = -(np.sin(np.outer(t, w)) * w ** 2) @ a - (np.cos(np.outer(t, w)) * w ** 2) @ b
    tau = rd.make_solver(robot, "pinocchio").inverse_dynamics_batch(q, qd, qdd)
    return t, q, qd, tau + rng.normal(0.0, 0.5, tau.shape)


def command_gaps(fit):
    """The gaps between consecutive commands [s] while fit() runs (after the first 100)."""
    robot = rd.load_robot(example_robots() / "ur_description/urdf/ur10_robot.urdf",
                          tip_link="tool0")
    solver, q = rd.make_solver(robot, "pinocchio"), np.zeros(robot.dof)
    gaps, done = [], threading.Event()

    def commands():
        last = next_tick = time.perf_counter()
        while not done.is_set():
            next_tick += PERIOD
            time.sleep(max(next_tick - time.perf_counter(), 0.0))
            solver.unchecked.gravity(q)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
    thread = threading.Thread(target=commands, daemon=True)
    thread.start()
    time.sleep(0.2)
    fit()
    done.set()
    thread.join()
    return np.array(gaps[100:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds-of-data", type=float, default=30.0)
    args = parser.parse_args(argv)
    single_threaded_blas()
    sys.setswitchinterval(2e-4)            # as the node's joint-state thread sets it
    robot = rd.load_robot(example_robots() / "ur_description/urdf/ur10_robot.urdf",
                          tip_link="tool0")
    data = recording(robot, args.seconds_of_data)
    held_from = data[0][-1] - 10.0
    for where, fit in (("nothing (1.5 s asleep: the machine's own jitter)",
                        lambda: time.sleep(1.5)),
                       ("the fit in a thread of this process", lambda: fit_recording(robot, *data,
                                                                           held_from)),
                       ("the fit in a process of its own", lambda: run_in_process(
                           fit_recording, robot, *data, held_from))):
        started = time.perf_counter()
        gaps = command_gaps(fit)
        print(f"{where}: {time.perf_counter() - started:.2f} s, gaps between two 1 kHz "
              f"commands: largest {1e3 * gaps.max():.2f} ms, p99.9 "
              f"{1e3 * np.quantile(gaps, 0.999):.2f} ms, above 2 ms "
              f"{np.count_nonzero(gaps > 2 * PERIOD)} of {len(gaps)}")


if __name__ == "__main__":
    main()

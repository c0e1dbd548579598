"""How often payload identification claims what it did not find.

    python -m benchmarks.identification_claims [--recordings N] [--seed S]

Recordings as the node makes them (rd_ur5e, a payload at wrist_3_link, 500 Hz, torques from
Pinocchio with the payload plus 0.5 N·m of Gaussian noise, the fit on the arm without it):
- static poses: the 8 poses the node chooses around a pose, 2 s held at each (the fit on the
  pose means, as ~/identify_payload does);
- wrist motion: 10 s of the two wrist joints swinging (sines, random frequencies and
  phases), q̈ from the recorded velocities (as a goal with a duration);
- whole-arm motion: 20 s of every joint swinging the same way, the wrist by up to 1.5 rad.
Two payloads: compact (a 1 kg steel cylinder, principal moments 2–3·10⁻⁴ kg·m²: no motion
here shows them) and extended (1 kg, 3–5·10⁻³ kg·m²). For each: how often the mass, the
centre of mass and the inertia are reported, and how often a reported value is wrong (mass
or a principal moment more than 30 % off; centre of mass more than 5 mm off, or a component
beyond 3 of its own standard deviations). Prints a table; the README quotes it.
"""

import argparse
import time

import numpy as np

import robo_dynamics as rd
from robo_dynamics.identification.payload_identification import (identify_payload,
                                                                 principal_moments,
                                                                 static_poses)
from robo_dynamics.io.state_derivatives import velocities_and_accelerations
from robo_dynamics.algorithms.regressor import inertial_parameters
from robo_dynamics.paths import urdf_path

LINK = "wrist_3_link"
RATE = 500.0
NOISE = 0.5
CENTER = np.array([0.0, -1.2, 1.3, -1.6, -1.57, 0.0])
PAYLOADS = {"compact": (1.0, np.array([0.0, 0.0, 0.05]), np.diag([3e-4, 3e-4, 2e-4])),
            "extended": (1.0, np.array([0.0, 0.02, 0.05]), np.diag([0.004, 0.005, 0.003]))}
WRONG = 0.3             # relative error of a mass or principal moment that makes a claim false
COM_WRONG = 0.005       # m


def recording(scenario, truth, fit, rng):
    """(q, q̇, q̈, τ measured, pose or None, estimate_inertia) of one recording."""
    n = truth.model.dof
    if scenario == "static poses":
        spread = np.array([0.2, 0.2, 0.2, 0.6, 0.6, 0.0])
        centre = CENTER + rng.uniform(-0.1, 0.1, n)
        poses = static_poses(fit, LINK, centre, spread, 8, seed=int(rng.integers(1 << 30)))
        samples = int(2.0 * RATE)
        q = np.repeat(poses, samples, axis=0)
        zero = np.zeros_like(q)
        tau = truth.inverse_dynamics_batch(q, zero, zero) + rng.normal(0.0, NOISE, q.shape)
        return q, zero, zero, tau, np.repeat(np.arange(len(poses)), samples), False
    seconds, moving = ((10.0, np.array([0, 0, 0, 1, 1, 0])) if scenario == "wrist motion"
                       else (20.0, np.ones(n)))
    t = np.arange(0.0, seconds, 1.0 / RATE)[:, None]
    w = 2 * np.pi * rng.uniform(0.2, 0.7, n)
    a = moving * (np.where(np.arange(n) < 3, 0.3, 0.5) if scenario == "wrist motion"
                  else np.array([0.3, 0.3, 0.3, 1.2, 1.2, 1.5]))
    phase = rng.uniform(0.0, 2 * np.pi, n)
    q = CENTER + a * (np.sin(w * t + phase) - np.sin(phase))
    qd = a * w * np.cos(w * t + phase)
    qdd = -a * w * w * np.sin(w * t + phase)
    tau = truth.inverse_dynamics_batch(q, qd, qdd) + rng.normal(0.0, NOISE, q.shape)
    qd_rec, qdd_rec = velocities_and_accelerations(t[:, 0], q, qd)   # as the node does
    return q, qd_rec, qdd_rec, tau, None, True


def run(recordings, seed):
    robot = rd.load_robot(urdf_path())
    fit = rd.make_solver(robot, "rnea")
    rows = []
    for name, (mass, com, inertia) in PAYLOADS.items():
        truth = rd.make_solver(robot.with_payload(LINK, mass, com, inertia), "pinocchio")
        moments = principal_moments(inertial_parameters(mass, com, inertia))
        for scenario in ("static poses", "wrist motion", "whole-arm motion"):
            rng = np.random.default_rng([seed, len(rows)])
            counts = dict.fromkeys(("mass", "mass_wrong", "com_wrong", "com_beyond_3s",
                                    "inertia", "inertia_wrong", "refused"), 0)
            started = time.perf_counter()
            for _ in range(recordings):
                q, qd, qdd, tau, pose, inertia_wanted = recording(scenario, truth, fit, rng)
                try:
                    e = identify_payload(fit, LINK, q, qd, qdd, tau, None, inertia_wanted,
                                         pose)
                except ValueError:
                    counts["refused"] += 1
                    continue
                counts["mass"] += 1
                counts["mass_wrong"] += abs(e.mass - mass) > WRONG * mass
                counts["com_wrong"] += np.linalg.norm(e.com - com) > COM_WRONG
                counts["com_beyond_3s"] += bool(np.any(np.abs(e.com - com) > 3 * e.com_std))
                if e.inertia_identified:
                    counts["inertia"] += 1
                    found = np.linalg.eigvalsh(e.inertia)
                    counts["inertia_wrong"] += bool(np.any(np.abs(found - moments)
                                                           > WRONG * moments))
            rows.append((name, scenario, counts, time.perf_counter() - started))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = run(args.recordings, args.seed)
    print(f"{args.recordings} recordings per row; noise {NOISE} N·m; a claim is false beyond "
          f"{100 * WRONG:g} % (mass, principal moments) or {1e3 * COM_WRONG:g} mm (centre of "
          "mass)")
    print("| payload, recordings | m, c reported | m > 30 % off | c > 5 mm off | c beyond 3σ "
          "| inertia claimed | inertia > 30 % off |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, scenario, c, _ in rows:
        print(f"| {name}, {scenario} | {c['mass']} | {c['mass_wrong']} | {c['com_wrong']} | "
              f"{c['com_beyond_3s']} | {c['inertia']} | {c['inertia_wrong']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Identify the whole arm from recorded joint states: a corrected URDF and a report.

    dynamics_identify BAG [--validate BAG] [--urdf PATH] [--base LINK] [--tip LINK]
                      [--topic /joint_states] [--accel-window S] [--min-speed RAD_S]
                      [--output FILE.urdf] [--plot FILE.png]

BAG: an .mcap file or a rosbag2 directory whose joint states carry positions, velocities
and efforts (the torques the drives applied), recorded while the arm moved through an
exciting motion (docs/arm-identification.md). The base parameters and each joint's friction
are fitted (identification/arm_identification.py), the physically consistent standard parameters
nearest the URDF's found (identification/consistent_parameters.py) and written into a copy of the
URDF (its inertials and <dynamics damping friction>; identification/urdf_inertials.py). The torques of
--validate (default: the last quarter of BAG, left out of the fit) are predicted by the URDF
and by the corrected model and compared, per joint. Exit status: 0 done, 2 bad input.
BLAS runs on one thread: the result does not depend on how many cores are free.
"""

import argparse
import os
import sys

import numpy as np

from .. import load_robot
from ..blas_threads import single_threaded_blas
from ..errors import RoboDynamicsError
from ..identification import arm_identification as ai
from ..identification.arm_fit import fit_and_check
from ..io import joint_state_bag
from .options import HelpFormatter, add_bag_options, add_chain_options, description

HELD_OUT = 0.25       # the share of BAG left out of the fit when no --validate is given


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=HelpFormatter,
                                     epilog="exit status: 0 done, 2 bad input")
    parser.add_argument("bag", help="the recording to fit (.mcap file or rosbag2 directory)")
    parser.add_argument("--validate", default=None,
                        help="a recording to validate on (default: the last 25 %% of BAG)")
    add_chain_options(parser, trajectories=False)
    add_bag_options(parser)
    parser.add_argument("--min-speed", type=float, default=ai.MIN_SPEED,
                        help="rad/s below which a joint's rows are left out (dry friction)")
    parser.add_argument("--output", default=None,
                        help="the corrected URDF (default: NAME_identified.urdf here)")
    parser.add_argument("--plot", default=None,
                        help="write a PNG of measured vs predicted (default: none)")
    args = parser.parse_args(argv)
    single_threaded_blas()
    try:
        return run(args)
    except (RoboDynamicsError, ValueError, OSError) as exc:
        print(f"dynamics_identify: {exc}", file=sys.stderr)
        return 2


def states(path, robot, args):
    """(q, q̇, q̈, τ) (N, n) each of the bag at `path`; ValueError without efforts."""
    recording = joint_state_bag.read_joint_states(path, robot.joint_names, args.topic)
    if recording.efforts is None or np.isnan(recording.efforts).any():
        raise ValueError(f"{path}: every joint state needs its efforts (the applied torques)")
    qd, qdd = joint_state_bag.derivatives(recording, args.accel_window)
    return recording.positions, qd, qdd, recording.efforts


def run(args):
    urdf, origin = description(args, args.bag)
    robot = load_robot(urdf, base_link=args.base, tip_link=args.tip)
    if robot.is_coupled:
        raise ValueError("chains with mimic joints are not identified yet")
    q, qd, qdd, tau = states(args.bag, robot, args)
    if args.validate is None:
        split = int(len(q) * (1.0 - HELD_OUT))
        fit = tuple(x[:split] for x in (q, qd, qdd, tau))
        held = tuple(x[split:] for x in (q, qd, qdd, tau))
        source = f"the last {HELD_OUT:.0%} of {args.bag}"
    else:
        fit, held = (q, qd, qdd, tau), states(args.validate, robot, args)
        source = args.validate
    done = fit_and_check(robot, fit, held, args.min_speed)
    output = args.output or f"{robot.name}_identified.urdf"
    with open(output, "w", encoding="utf-8") as stream:
        stream.write(done["text"])
    predicted = done["predicted"]
    print(f"robot '{robot.name}' ({origin}): {len(fit[0])} states fitted from {args.bag}, "
          f"validated on {len(held[0])} of {source}")
    print(f"base parameters: {done['base_parameters']} of {10 * robot.dof}, "
          f"{done['identified']} identified (σ ≤ "
          f"{ai.IDENTIFIED_SHARE:.0%} of the value); residual σ per joint "
          f"{np.round(done['sigma'], 3).tolist()} N·m")
    print(report(robot.joint_names, held[3], predicted, done["friction"]))
    print(friction_sentence(robot.joint_names, done["shown"]))
    print(f"corrected URDF: {os.path.abspath(output)}")
    if args.plot:
        plot(args.plot, robot.joint_names, held[3], predicted)
        print(f"plot: {args.plot}")
    return 0


def report(names, tau, predicted, friction):
    """A per-joint table: RMS of the held-out torque, each model's relative RMS error, the
    friction found; then all joints pooled."""
    rows = [f"{'joint':<26}{'τ RMS [N m]':>12}"
            + "".join(f"{name + ' error':>18}" for name in predicted)
            + f"{'f_v [N m s]':>13}{'f_c [N m]':>11}"]
    errors = {name: ai.nrms(tau, value) for name, value in predicted.items()}
    rms = np.sqrt(np.mean(tau ** 2, axis=0))
    for j, joint in enumerate(names):
        rows.append(f"{joint:<26}{rms[j]:>12.3f}"
                    + "".join(f"{100 * errors[name][j]:>17.1f}%" for name in predicted)
                    + f"{friction[j, 0]:>13.4f}{friction[j, 1]:>11.4f}")
    pooled = {name: ai.pooled_nrms(tau, value) for name, value in predicted.items()}
    rows.append(f"{'all joints':<26}{np.sqrt(np.mean(tau ** 2)):>12.3f}"
                + "".join(f"{100 * pooled[name]:>17.1f}%" for name in predicted))
    return "\n".join(rows)


def friction_sentence(names, shown):
    """Which friction terms the data show (written from the fit) and which keep the URDF's."""
    kinds = ("viscous", "Coulomb")
    kept = [f"{name} ({', '.join(kind for kind, seen in zip(kinds, row) if not seen)})"
            for name, row in zip(names, shown) if not row.all()]
    return ("friction: every joint's shown by the data (beyond 2 σ of the URDF's)" if not kept
            else "friction kept at the URDF's where the data do not show it differ by 2 σ: "
            + ", ".join(kept))


def plot(path, names, tau, predicted):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(names)
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.8 * n), sharex=True, squeeze=False)
    for j, ax in enumerate(axes[:, 0]):
        ax.plot(tau[:, j], color="0.6", linewidth=0.8, label="measured")
        for name, value in predicted.items():
            ax.plot(value[:, j], linewidth=0.9, label=name)
        ax.set_ylabel(f"{names[j]}\n[N m]", fontsize=7)
    axes[0, 0].legend(fontsize=7, ncol=3)
    axes[-1, 0].set_xlabel("held-out state")
    fig.suptitle("held-out torques: measured vs predicted by the URDF and by the identified "
                 "model", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())

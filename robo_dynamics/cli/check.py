"""Will this motion fit the arm? Effort check of a trajectory or a recorded ROS 2 bag.

Against the URDF effort limits, without ROS running.

    dynamics_check INPUT [--urdf PATH] [--base LINK] [--tip LINK] [--margin F]
                   [--sample-period S] [--payload-link LINK --payload-mass KG
                   [--payload-com X Y Z] [--payload-inertia IXX IXY IXZ IYY IYZ IZZ]]
                   [--topic /joint_states] [--accel-window S] [--plot FILE.png]
                   [--backend rnea|pinocchio] [--quiet]

INPUT is a YAML trajectory (the trajectory_msgs/JointTrajectory layout, io/trajectory_yaml.py)
or a bag: an .mcap file or a rosbag2 directory of them. For a bag, the recorded states are
checked (q̈ from the velocities across --accel-window), and when the joint states carry
efforts the residual τ_measured − τ_model per joint is reported and plotted: what the model
leaves out on the real arm (friction, payload, model error). Prints a per-joint table, the
first violation and the time scale that fits (control/trajectory_check.py).
Exit status: 0 within the limits, 1 beyond them, 2 bad input.
"""

import argparse
import os
import sys

import numpy as np

from .. import load_robot, make_solver
from ..control.trajectory_check import check_samples, check_trajectory
from ..errors import RoboDynamicsError
from ..io import joint_state_bag
from ..io.trajectory_yaml import load_trajectory
from ..spatial.inertia import inertia_tensor
from .options import HelpFormatter, add_bag_options, add_chain_options, description

PLOT_POINTS = 4000        # a plotted curve longer than this is drawn as its min/max envelope


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=HelpFormatter,
        epilog="exit status: 0 within the limits, 1 beyond them, 2 bad input")
    parser.add_argument("input", help="trajectory .yaml, or a bag (.mcap file or directory)")
    add_chain_options(parser)
    parser.add_argument("--margin", type=float, default=1.0,
                        help="fraction of the URDF effort limits allowed, (0, 1]")
    parser.add_argument("--sample-period", type=float, default=1e-3,
                        help="seconds between samples of a YAML trajectory")
    parser.add_argument("--payload-link", default=None,
                        help="link carrying a payload (default: none)")
    parser.add_argument("--payload-mass", type=float, default=0.0, help="kg")
    parser.add_argument("--payload-com", type=float, nargs=3, default=(0.0, 0.0, 0.0),
                        metavar=("X", "Y", "Z"), help="m, in the payload link's frame")
    parser.add_argument("--payload-inertia", type=float, nargs=6, default=(0.0,) * 6,
                        metavar=("IXX", "IXY", "IXZ", "IYY", "IYZ", "IZZ"),
                        help="kg m², about the centre of mass, link axes")
    add_bag_options(parser)
    parser.add_argument("--plot", default=None,
                        help="write a PNG of the torques and limits (default: none)")
    parser.add_argument("--backend", default="rnea", help="rnea or pinocchio")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (ValueError, OSError, RoboDynamicsError) as exc:
        print(f"dynamics_check: {exc}", file=sys.stderr)
        return 2


def run(args):
    """Check args.input; print the report; write the plot. Returns the exit status."""
    trajectory_file = args.input.endswith((".yaml", ".yml"))
    urdf, origin = description(args, None if trajectory_file else args.input)
    robot = load_robot(urdf, base_link=args.base, tip_link=args.tip)
    if args.payload_link is not None:
        if not 0.0 <= args.payload_mass < np.inf:
            raise ValueError(f"--payload-mass must be >= 0 and finite, got {args.payload_mass}")
        robot = robot.with_payload(args.payload_link, args.payload_mass, args.payload_com,
                                   inertia_tensor(*args.payload_inertia))
    solver = make_solver(robot, args.backend)
    names = robot.joint_names
    measured = None
    if trajectory_file:
        trajectory = load_trajectory(args.input, names)
        result = check_trajectory(solver, trajectory, robot.effort_limit, args.sample_period,
                                  args.margin)
        source = (f"trajectory {args.input}: {len(trajectory.times)} points, "
                  f"{len(result.times)} samples every {args.sample_period:g} s")
    else:
        bar = None if args.quiet else _progress_bar(args.input)
        recording = joint_state_bag.read_joint_states(args.input, names, args.topic, bar)
        qd, qdd = joint_state_bag.derivatives(recording, args.accel_window)
        result = check_samples(solver, recording.times, recording.positions, qd, qdd,
                               robot.effort_limit, args.margin)
        measured = recording.efforts
        skipped = ", ".join(f"{n} with {why}" for why, n in recording.skipped.items())
        source = (f"bag {args.input}, '{args.topic}': {recording.read} messages, "
                  f"{len(recording.times)} states used"
                  + (f" (skipped {skipped})" if skipped else "")
                  + ("" if recording.velocities is not None
                     else "; no velocities recorded: differentiated from positions"))
    print(f"robot '{robot.name}' ({origin}), {robot.base_link} -> {robot.tip_link}, "
          f"backend {solver.name}" + (f", payload {args.payload_mass} kg at "
                                      f"'{args.payload_link}'" if args.payload_link else ""))
    print(source + f", {result.times[-1]:.3f} s")
    print(report(names, result, measured))
    if args.plot:
        plot(args.plot, names, result, measured)
        print(f"plot: {args.plot}")
    return 0 if result.feasible else 1


def report(names, result, measured=None):
    """The per-joint table, the verdict and the time scale, as text."""
    residual = None if measured is None else measured - result.efforts
    header = f"{'joint':<24}{'limit':>11}{'peak |τ|':>11}{'peak/limit':>12}"
    if residual is not None:
        header += f"{'residual RMS':>14}{'max |residual|':>16}"
    lines = [header + "    (N m or N; limit with the margin)"]
    for j, name in enumerate(names):
        row = (f"{name:<24}{result.limits[j]:>11.4g}{result.peak_effort[j]:>11.4g}"
               f"{result.peak_ratio[j]:>12.3f}")
        if residual is not None:
            r = residual[np.isfinite(residual[:, j]), j]     # NaN: no effort measured
            row += (f"{np.sqrt(np.mean(r ** 2)):>14.4g}{np.max(np.abs(r)):>16.4g}" if r.size
                    else f"{'—':>14}{'—':>16}")
        lines.append(row)
    if result.feasible:
        lines.append("within the limits at every sample")
    else:
        for v in result.violations:
            lines.append(f"BEYOND THE {v.kind.upper()} LIMITS: first at t = {v.time:.4f} s "
                         f"(sample {v.index}), '{v.joint}' {v.kind} {v.value:+.4g} against a "
                         f"limit of {v.limit:.4g}")
    lines.append(f"time scale: {result.reason}")
    if residual is not None:
        lines.append("residual = τ_measured − τ_model (friction, payload and model error the "
                     "model leaves out)")
    return "\n".join(lines)


def plot(path, names, result, measured=None):
    """PNG: per joint, the model torque against ±limit over time (and, with measured efforts,
    the measurement and the residual)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(names)
    columns = 1 if measured is None else 2
    fig, axes = plt.subplots(n, columns, figsize=(7 * columns, 1.7 * n + 0.8), sharex=True,
                             squeeze=False)
    t = result.times
    for j, name in enumerate(names):
        ax = axes[j, 0]
        if measured is not None:
            ax.plot(*_envelope(t, measured[:, j]), lw=0.6, color="0.6", label="measured")
        ax.plot(*_envelope(t, result.efforts[:, j]), lw=0.8, color="C0", label="model τ")
        if np.isfinite(result.limits[j]):
            for sign in (1, -1):
                ax.axhline(sign * result.limits[j], color="C3", ls="--", lw=0.8)
        ax.set_ylabel(f"{name}\n[N m]", fontsize=7)
        if measured is not None:
            axes[j, 1].plot(*_envelope(t, measured[:, j] - result.efforts[:, j]), lw=0.6,
                            color="C2")
            axes[j, 1].axhline(0.0, color="0.3", lw=0.5)
    axes[0, 0].set_title("joint torque against the effort limits (dashed)", fontsize=9)
    axes[0, 0].legend(fontsize=7, loc="upper right")
    if measured is not None:
        axes[0, 1].set_title("residual τ_measured − τ_model [N m]", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel("time [s]")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _envelope(t, y):
    """(t, y) to draw: as given when short, else the min and max of each of PLOT_POINTS / 2
    buckets in turn (the curve's envelope, so no peak is lost)."""
    if len(t) <= PLOT_POINTS:
        return t, y
    buckets = PLOT_POINTS // 2
    size = len(t) // buckets
    cut = buckets * size
    y_b, t_b = y[:cut].reshape(buckets, size), t[:cut:size]
    tt = np.repeat(t_b, 2)
    yy = np.column_stack((y_b.min(axis=1), y_b.max(axis=1))).ravel()
    return np.append(tt, t[cut:]), np.append(yy, y[cut:])


def _progress_bar(path):
    """progress(done, total) drawing a bar on stderr for reading the bag at `path`."""
    label = os.path.basename(os.path.normpath(path))
    shown = [None]

    def progress(done, total):
        if (done, total) == shown[0]:
            return
        shown[0] = (done, total)
        if total:
            filled = int(30 * done / total)
            line = f"\rreading {label} [{'#' * filled}{'.' * (30 - filled)}] " \
                   f"{100 * done / total:3.0f} % ({done}/{total} messages)"
        else:
            line = f"\rreading {label}: {done} messages"
        print(line, end="\n" if done == total else "", file=sys.stderr, flush=True)
    return progress


if __name__ == "__main__":
    sys.exit(main())

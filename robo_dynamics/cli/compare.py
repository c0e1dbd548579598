"""Print the dynamics of an arm at a few poses, from both backends side by side.

    python -m robo_dynamics.cli.compare [--urdf PATH] [--base LINK] [--tip LINK]
"""

import argparse

import numpy as np

from .. import make_solver, load_robot
from ..backends.cross_check import difference
from ..paths import urdf_path

POSES = {
    "zero": lambda n: np.zeros(n),        # a wrist singularity on UR-type arms
    "home": lambda n: np.resize([0.0, -np.pi / 2, np.pi / 2, -np.pi / 2, -np.pi / 2, 0.0], n),
    "reach": lambda n: np.resize([0.3, -0.9, 1.2, -0.8, 1.1, 0.4], n),
}


def _row(label, values, fmt="{:>10.4f}"):
    return f"  {label:<22}" + "".join(fmt.format(v) for v in values)


def _report(robot, rnea, pino, name, q):
    lines = [f"pose '{name}': q = {np.array2string(q, precision=3)} rad"]
    g_a, g_b = rnea.gravity(q), pino.gravity(q)
    lines.append(_row("joint", range(1, robot.dof + 1), "{:>10d}"))
    lines.append(_row("gravity rnea [N m]", g_a))
    lines.append(_row("gravity pinocchio", g_b))
    lines.append(_row("|difference|", np.abs(g_a - g_b), "{:>10.1e}"))
    M_a, M_b = rnea.mass_matrix(q), pino.mass_matrix(q)
    lines.append("  mass matrix M(q) (rnea):")
    lines += ["    " + "".join(f"{v:>9.4f}" for v in row) for row in M_a]
    lines.append(f"  max |M_rnea - M_pinocchio| / max(max |M_pinocchio|, 1): "
                 f"{difference(M_a, M_b).max_rel:.1e}")
    os_a, os_b = rnea.operational_space(q), pino.operational_space(q)
    lines.append(f"  operational-space inertia Λ at '{robot.tip_link}' "
                 "(rows/cols [x y z rx ry rz], base axes) (rnea):")
    lines += ["    " + "".join(f"{v:>10.4f}" for v in row) for row in os_a.Lambda]
    lines.append(f"  max |Λ_rnea - Λ_pinocchio| / max(max |Λ_pinocchio|, 1): "
                 f"{difference(os_a.Lambda, os_b.Lambda).max_rel:.1e}"
                 f", condition number {os_a.condition_number:.3g}"
                 f"{' (near singular)' if os_a.near_singular else ''}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urdf", default=str(urdf_path()), help="URDF or xacro file")
    parser.add_argument("--base", default=None, help="base link (default: URDF root)")
    parser.add_argument("--tip", default=None, help="tip link (default: the only leaf)")
    args = parser.parse_args(argv)
    robot = load_robot(args.urdf, base_link=args.base, tip_link=args.tip)
    rnea, pino = make_solver(robot, "rnea"), make_solver(robot, "pinocchio")
    print(f"robot '{robot.name}' from {args.urdf}: {robot.dof} joints {list(robot.joint_names)}, "
          f"{robot.base_link} -> {robot.tip_link}, gravity {robot.gravity.tolist()} m/s^2")
    for name, pose in POSES.items():
        print()
        print(_report(robot, rnea, pino, name, pose(robot.dof)))


if __name__ == "__main__":
    main()

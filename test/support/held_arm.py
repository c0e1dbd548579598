"""A held arm that a touch cannot defeat (issue 59): pushes of a person's size on arms
simulated by MuJoCo in lockstep with the controller core at dynamics_node's defaults
(arm_matrix.Loop), in gravity compensation, in the safe hold and in Cartesian impedance;
and Cartesian targets at random offsets from random poses.

Each cell returns its figures; test_held_arm.py asserts a trimmed sweep, and
`make held` (python test/support/held_arm.py) prints the whole table (docs/testing.md).
"""

import dataclasses
import sys

import numpy as np

import robo_dynamics as rd
from arm_matrix import MATRIX_ARMS, Loop, node_defaults, working_poses
from conftest import REPO
from robo_dynamics.control.cartesian import CARTESIAN_IMPEDANCE, CartesianTarget
from robo_dynamics.control.controller import HOLD
from robo_dynamics.control.trajectory import SetPoint

ARMS = {"rd_ur5e": (REPO / "urdf" / "rd_ur5e.urdf", "tool0"),
        "ur10": MATRIX_ARMS.get("ur10"), "panda": MATRIX_ARMS.get("panda")}
MODES = ("gravity", "hold", "impedance")
FORCES = (10.0, 25.0, 50.0)              # N: a touch to a firm push
DIRECTIONS = [s * e for e in np.eye(3) for s in (1.0, -1.0)]     # the tool's axes
RAMP, PUSH, AFTER = 0.3, 1.0, 0.3        # s: a ramped push's rise, the push, after it


def load(name):
    path, tip = ARMS[name]
    return rd.load_robot(path, tip_link=tip)


def impedance_target(loop, offset=np.zeros(3)):
    """Cartesian impedance at the node's defaults, the tool's pose `offset` [m] (tool
    axes) from where it is."""
    R, p = loop.ref.tip_pose(loop.arm.q)
    d, n = node_defaults(), loop.robot.dof
    return CartesianTarget(CARTESIAN_IMPEDANCE, R, p + R @ offset,
                           np.diag(d["cartesian.stiffness"]), d["cartesian.damping_ratio"],
                           np.zeros(6), None, np.full(n, 10.0), np.full(n, 5.0),
                           d["cartesian.max_position_error"],
                           d["cartesian.max_orientation_error"])


def enter(loop, mode):
    """Put the loop in `mode`: the hold by a set-point 5 mrad away with a 1 mrad tracking
    bound (the next state trips it)."""
    if mode == "hold":
        s = loop.settings
        loop.ctrl.configure(dataclasses.replace(
            s, max_tracking_error=np.full(loop.robot.dof, 1e-3)))
        loop.ctrl.desire(SetPoint(loop.arm.q + 0.005, np.zeros(loop.robot.dof)), loop.t)
        loop.run(0.002)
        loop.ctrl.configure(s)
        assert loop.ctrl.mode == HOLD, loop.events
    elif mode == "impedance":
        event = loop.ctrl.desire(impedance_target(loop), loop.t)
        assert event.kind == "tracking", event.message


def push(robot, q0, mode, direction, force, sudden):
    """`force` [N] along `direction` (tool axes) on the tool for PUSH s, sudden or ramped
    over RAMP s, in `mode`. Figures: hold_failed (and why), the largest |q̇| / velocity
    bound, whether the torque limits were reached (the hold's command limited), and whether
    they suffice to stand still against the push at every pose it carries the arm through
    (|g − J_vᵀ F| within the effort bound on every joint, F the push applied, from the
    model: not the controller's figure; the hold yields to a push, so a steady one moves
    the arm, and can carry it where the limits no longer suffice); need: the largest
    |g − J_vᵀ F|_i / bound_i on the way (above 1: they do not suffice; just below 1 they
    hold the arm still but leave nothing to stop the motion the push gave it)."""
    loop = Loop(robot, q0)
    loop.run(0.05)
    enter(loop, mode)
    start, saturated, need = loop.t, [], [0.0]
    bound, ref = loop.settings.effort_bound, loop.ref

    def each(lp):
        ramp = 1.0 if sudden else min(1.0, (lp.t - start) / RAMP)
        lp.arm.set_external_wrench(robot.tip_link, ramp * force * direction, np.zeros(3))
        saturated.append(lp.ctrl.at_effort_bound)
        q = lp.arm.q
        F = ref.tip_pose(q)[0] @ (ramp * force * direction)            # base axes
        needed = ref.gravity(q) - ref.jacobian(q)[:3].T @ F            # to stand still
        need[0] = max(need[0], float(np.max(np.abs(needed) / bound)))
    loop.run(PUSH, each=each)
    loop.arm.set_external_wrench(robot.tip_link, np.zeros(3), np.zeros(3))
    loop.run(AFTER)
    return {"failed": loop.ctrl.halted, "saturated": any(saturated), "need": need[0],
            "limits_suffice": need[0] <= 1.0,
            "peak_ratio": float(np.max(loop.peak / loop.settings.velocity_bound)),
            "events": loop.kinds()}


def cartesian_targets(robot, count, seed=59, reach=None):
    """Cartesian impedance targets at random offsets (uniform directions, length up to
    `reach` [m], default cartesian.max_position_error) from random working poses, each
    followed for 1.5 s. Figures: the largest |q̇| / velocity bound, the events of each."""
    reach = node_defaults()["cartesian.max_position_error"] if reach is None else reach
    rng = np.random.default_rng(seed)
    poses = working_poses(robot, count=count, seed=seed)
    out = []
    for q0 in poses:
        loop = Loop(robot, q0)
        loop.run(0.05)
        u = rng.normal(size=3)
        offset = reach * rng.uniform(0.5, 1.0) * u / np.linalg.norm(u)
        event = loop.ctrl.desire(impedance_target(loop, offset), loop.t)
        assert event.kind == "tracking", event.message
        loop.peak[:] = 0.0
        loop.run(1.5)
        out.append({"offset": float(np.linalg.norm(offset)),
                    "peak_ratio": float(np.max(loop.peak / loop.settings.velocity_bound)),
                    "events": loop.kinds()})
    return out


def table():
    """The whole sweep (docs/testing.md): per arm and mode, over 5 working poses × 6
    directions × FORCES × sudden and ramped, the pushes that ended in hold_failed (with
    the torque limits reached or not) and the largest |q̇| / bound; then Cartesian targets."""
    print("| arm | mode | pushes | limits suffice | hold_failed | of them where the limits "
          "suffice (need / bound) | largest |q̇| / bound |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in ARMS:
        if ARMS[name] is None:
            continue
        robot = load(name)
        poses = working_poses(robot, count=5)
        for mode in MODES:
            runs = [push(robot, q0, mode, d, f, sudden) for q0 in poses for d in DIRECTIONS
                    for f in FORCES for sudden in (True, False)]
            failed = [r for r in runs if r["failed"]]
            close = [r["need"] for r in failed if r["limits_suffice"]]
            print(f"| {name} | {mode} | {len(runs)} | "
                  f"{sum(r['limits_suffice'] for r in runs)} | {len(failed)} | "
                  f"{len(close)}{' (' + ', '.join(f'{n:.3f}' for n in close) + ')' if close else ''} | "
                  f"{max(r['peak_ratio'] for r in runs):.2f} |", flush=True)
    print("\n| arm | targets | safe holds | largest |q̇| / bound |")
    print("| --- | --- | --- | --- |")
    for name in ARMS:
        if ARMS[name] is None:
            continue
        runs = cartesian_targets(load(name), 20)
        holds = sum("safe_hold" in r["events"] for r in runs)
        print(f"| {name} | {len(runs)} | {holds} | "
              f"{max(r['peak_ratio'] for r in runs):.2f} |", flush=True)


if __name__ == "__main__":
    sys.exit(table())

"""The speed a contact with a person allows, kept (issue 63): the references the tests of
power-and-force limiting share (test/unit/test_speed_limiting.py), and a sweep of it.

References, independent of the code under test: a point's speed and the mass it carries
along its motion from MuJoCo (mj_jac at the point, mj_fullM); the speed limit from the
standard's formulas written here (ISO/TS 15066:2016 Annex A: transient
v = 2 F / √(μ k), μ = (1/m_H + 1/m_R)⁻¹; clamped v = F / √(m_R k)) over the body-region
table (the standard's figures).

`make contact` (python test/support/contact_sweep.py) prints the sweep for docs/testing.md:
on rd_ur5e, the UR10 and the Panda, fast swings (every joint at up to 0.8 × its velocity
bound, a 1 s quintic, both ways) from working poses, with and without a 2 kg payload,
against every region (transient and clamped) and the chest alone: the largest tool speed
over the speed allowed with the limit on (its margin: 1 − that), and off.
"""

import math
import sys

import numpy as np

from arm_matrix import Loop, working_poses
from held_arm import ARMS, load
from robo_dynamics.control.contact_safety import REGIONS
from robo_dynamics.control.trajectory import Trajectory

TESTED = ("panda", "rd_ur5e")     # the arms the tests run (held_arm.ARMS names)
CELLS = (("every region, transient", tuple(REGIONS), False),
         ("every region, clamped", tuple(REGIONS), True),
         ("chest, transient", ("chest",), False))


def load_or_skip(name):
    """The model of arm `name` (held_arm.ARMS); the test skipped when its description is
    not installed."""
    if ARMS[name] is None:
        import pytest
        pytest.skip("example-robot-data is not installed")
    return load(name)


def iso_limit(m_R, clamped=False, regions=tuple(REGIONS)):
    """[m/s] the least speed any of `regions` allows at reflected mass m_R [kg]."""
    table = [REGIONS[name] for name in regions]
    if clamped:
        return min(r.force / math.sqrt(m_R * r.spring) for r in table)
    return min(2.0 * r.force / math.sqrt(r.spring * m_R * r.mass / (m_R + r.mass))
               for r in table)


def swing(robot, q0, duration, speed=0.6, sign=1.0):
    """A quintic from q0 in `duration` [s] at which every joint peaks at `speed` × its
    velocity bound (alternating directions, the first's: sign), within the joint limits:
    (goal, a function of the start time giving the Trajectory)."""
    n, bound = robot.dof, np.asarray(robot.velocity_limit, dtype=float)
    step = sign * speed * bound * duration / 1.875 * (-1.0) ** np.arange(n)
    goal = np.clip(q0 + step, robot.lower + 0.05, robot.upper - 0.05)
    rest = np.zeros((2, n))
    return goal, lambda t: Trajectory(t, [0.0, duration], [q0, goal], rest, rest)


def jacobian_and_mass(plant, q, link=None, offset=np.zeros(3)):
    """(J_v (3, n) of the point `offset` [m] in `link`'s frame (None: the tool's origin),
    M (n, n)) at q, from MuJoCo (mj_jac at the point, mj_fullM), world axes."""
    import mujoco
    mj, data = plant.mj, plant.data
    data.qpos[plant.qpos], data.qvel[:] = q, 0.0
    mujoco.mj_forward(mj, data)
    body = mj.body(plant.model.tip_link if link is None else link).id
    point = data.xpos[body] + data.xmat[body].reshape(3, 3) @ offset
    jacp = np.zeros((3, mj.nv))
    mujoco.mj_jac(mj, data, jacp, None, point, body)
    M = np.zeros((mj.nv, mj.nv))
    mujoco.mj_fullM(mj, data, M)
    return jacp[:, plant.dof], M[np.ix_(plant.dof, plant.dof)]


def mass_along(plant, q, u):
    """[kg] the tool's reflected mass along unit u (base axes), from MuJoCo."""
    J_v, M = jacobian_and_mass(plant, q)
    w = J_v.T @ u
    return 1.0 / float(w @ np.linalg.solve(M, w))


def point_figures(plant, q, v, link=None, offset=np.zeros(3)):
    """(speed [m/s], m_R along the motion [kg]) of a point (jacobian_and_mass), MuJoCo's."""
    J_v, M = jacobian_and_mass(plant, q, link, offset)
    velocity = J_v @ v
    speed = float(np.linalg.norm(velocity))
    if speed < 1e-6:
        return speed, math.inf
    w = J_v.T @ (velocity / speed)
    return speed, 1.0 / float(w @ np.linalg.solve(M, w))


def swing_ratios(robot, q0, sign, on, cells=CELLS, **changes):
    """The largest tool speed / speed allowed (MuJoCo's) over a swing, per cell: the node
    limited for the cell (on) — one run each — or not at all (one run for every cell)."""
    ratios = []
    for _, regions, clamped in (cells if on else cells[:1]):
        loop = Loop(robot, q0, power_force_limiting=on, body_regions=list(regions),
                    contact_type="clamped" if clamped else "transient", **changes)
        loop.run(0.02)
        trajectory = swing(robot, q0, 1.0, speed=0.8, sign=sign)[1](loop.t)
        assert loop.ctrl.desire(trajectory, loop.t).kind == "tracking"
        probe, worst = type(loop.arm.plant)(robot), np.zeros(len(cells))

        def measure(lp):
            speed, m_R = point_figures(probe, lp.arm.q, lp.arm.v)
            if speed > 0.05:
                worst[:] = np.maximum(worst, [speed / iso_limit(m_R, c, r)
                                              for _, r, c in cells])
        scale = trajectory.scale
        loop.run(0.2 + (scale.walls[-1] if scale is not None else 1.0), each=measure)
        ratios.append(worst[len(ratios)] if on else worst)
    return np.array(ratios if on else ratios[0])


def table():
    """The sweep's Markdown table (module docstring)."""
    print("| arm | cell | swings | limited: largest speed / allowed (smallest margin) | "
          "off: largest | off: swings over the limit |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in ARMS:
        if ARMS[name] is None:
            continue
        arm = load(name)
        on, off = [], []
        for robot in (arm, arm.with_payload(arm.tip_link, 2.0, [0.0, 0.0, 0.05],
                                            np.diag([2e-3] * 3))):
            for q0 in working_poses(robot, count=3, seed=63):
                for sign in (1.0, -1.0):
                    on.append(swing_ratios(robot, q0, sign, True))
                    off.append(swing_ratios(robot, q0, sign, False))
        on, off = np.array(on), np.array(off)
        for k, (cell, _, _) in enumerate(CELLS):
            print(f"| {name} | {cell} | {len(on)} | {on[:, k].max():.3f} "
                  f"({1.0 - on[:, k].max():.3f}) | {off[:, k].max():.2f} | "
                  f"{int(np.sum(off[:, k] > 1.0))} |", flush=True)


if __name__ == "__main__":
    sys.exit(table())

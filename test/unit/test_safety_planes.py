"""Cartesian safety planes (issue 63, control/safety_planes.py) on two arms simulated by
MuJoCo in lockstep with the controller core at dynamics_node's defaults: motions that would
cross a plane are refused, a trajectory toward one is slowed so that the safe hold, started
at any moment, stops the tool before it, and a push across one starts the safe hold. The
tool's position is MuJoCo's (mj_forward: the tool body's origin), not the controller's."""

import numpy as np
import pytest

import robo_dynamics as rd
from arm_matrix import Loop, node_defaults, working_poses
from contact_sweep import TESTED, load_or_skip as load
from robo_dynamics.control.cartesian import CARTESIAN_IMPEDANCE, CartesianTarget
from robo_dynamics.control.trajectory import Trajectory

mujoco = pytest.importorskip("mujoco")

ARMS = TESTED


def tool_position(plant, q):
    """[m] the tool's origin in the base frame, from MuJoCo."""
    data = plant.data
    data.qpos[plant.qpos] = q
    mujoco.mj_kinematics(plant.mj, data)
    base = plant.mj.body(plant.model.base_link).id
    R, p = data.xmat[base].reshape(3, 3), data.xpos[base]
    return R.T @ (data.xpos[plant.mj.body(plant.model.tip_link).id] - p)


def plane(point, normal):
    """The safety_planes parameter of one plane."""
    return [float(x) for x in (*point, *normal)]


def impedance(loop, target):
    d, n = node_defaults(), loop.robot.dof
    R = loop.ref.tip_pose(loop.arm.q)[0]
    return CartesianTarget(CARTESIAN_IMPEDANCE, R, target, np.diag(d["cartesian.stiffness"]),
                           d["cartesian.damping_ratio"], np.zeros(6), None, np.full(n, 10.0),
                           np.full(n, 5.0), d["cartesian.max_position_error"],
                           d["cartesian.max_orientation_error"])


def move(robot, q0, duration=1.0, speed=0.8, sign=1.0):
    """(goal, Trajectory from q0 starting at t = 0.02 s): every joint at up to `speed` ×
    its velocity bound, alternating directions (the first's: sign), within the limits."""
    n, bound = robot.dof, np.asarray(robot.velocity_limit, dtype=float)
    goal = np.clip(q0 + sign * speed * bound * duration / 1.875 * (-1.0) ** np.arange(n),
                   robot.lower + 0.05, robot.upper - 0.05)
    rest = np.zeros((2, n))
    return goal, Trajectory(0.02, [0.0, duration], [q0, goal], rest, rest)


def outward(p, u):
    """u (unit) or −u, whichever points away from the base (a plane across it, its normal
    −u, then leaves the base on its allowed side)."""
    return u if p @ u >= 0.0 else -u


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_motion_that_would_cross_a_plane_is_refused(name):
    """A plane across the tool's way 10 cm out (radially, away from the base): a Cartesian
    target 5 cm beyond it is refused, naming the plane and by how much; a target 5 cm short
    of it is reached, the tool (MuJoCo's) never past the plane by more than 1 mm. A
    trajectory whose path crosses a plane halfway is refused, naming it and when."""
    robot = load(name)
    ref = rd.make_solver(robot, "pinocchio")
    for q0 in working_poses(robot, count=6, seed=66):     # one whose path leaves the base
        goal, trajectory = move(robot, q0)
        p0, p_end = ref.tip_pose(q0)[1], ref.tip_pose(goal)[1]
        way = (p_end - p0) / np.linalg.norm(p_end - p0)
        if 0.5 * (p0 + p_end) @ way > 0.0:
            break
    u = outward(p0, np.array([p0[0], p0[1], 0.0]) / np.linalg.norm(p0[:2]))
    loop = Loop(robot, q0, safety_planes=plane(p0 + 0.10 * u, -u) + plane(
        0.5 * (p0 + p_end), -way))
    loop.run(0.02)
    event = loop.ctrl.desire(impedance(loop, p0 + 0.15 * u), loop.t)
    assert event.kind == "refused" and "would be 50 mm beyond safety plane 0" in event.message
    event = loop.ctrl.desire(trajectory, loop.t)
    assert event.kind == "refused" and "beyond safety plane 1 at t = " in event.message, \
        event.message
    assert loop.ctrl.desire(impedance(loop, p0 + 0.05 * u), loop.t).kind == "tracking"
    probe, depth = type(loop.arm.plant)(robot), [0.0]

    def measure(lp):
        depth[0] = max(depth[0], (tool_position(probe, lp.arm.q) - p0 - 0.10 * u) @ u)
    loop.run(2.5, each=measure)
    assert depth[0] < 1e-3, depth
    assert np.linalg.norm(ref.tip_pose(loop.arm.q)[1] - p0 - 0.05 * u) < 0.01
    assert "safe_hold" not in loop.kinds(), loop.events


def arrival(ref, trajectory, margin):
    """(face (3,), u (3,)): the plane a trajectory's tool comes at as it arrives: across its
    motion shortly before the end (90 % of the way), `margin` [m] beyond the farthest its
    path gets along that motion."""
    times = np.linspace(0.0, trajectory.times[-1], 401)
    q = trajectory.sample_many(times)[0]
    q_late, qd_late = trajectory.sample_path(0.9 * trajectory.times[-1])[:2]
    u = ref.jacobian(q_late)[:3] @ qd_late
    u /= np.linalg.norm(u)
    reach = max(ref.tip_pose(x)[1] @ u for x in q)
    return ref.tip_pose(q[-1])[1] + (reach - ref.tip_pose(q[-1])[1] @ u + margin) * u, u


@pytest.mark.parametrize("name", sorted(ARMS))
def test_the_safe_hold_started_anywhere_stops_the_tool_before_a_plane(name):
    """A quick move (0.5 s, joints at up to 0.8 × their bound) that arrives 2 mm short of a
    plane across its way: the controller slows it as it nears the plane (the approach
    speed within λ d), so that the safe hold started at any of 10 moments of its second
    half stops the tool before the plane (MuJoCo's tool, 1 mm); without the plane given to
    the node, the hold at the worst of them carries the tool past it."""
    robot = load(name)
    ref = rd.make_solver(robot, "pinocchio")
    for q0, sign in ((q, sign) for q in working_poses(robot, count=6, seed=67)
                     for sign in (1.0, -1.0)):         # a plane the base is inside of
        face, u = arrival(ref, move(robot, q0, 0.5, sign=sign)[1], 0.002)
        if face @ u >= 0.0:
            break
    probe, depths = None, {}
    for given in (True, False):
        worst = 0.0
        for k in range(10):
            loop = Loop(robot, q0, safety_planes=plane(face, -u) if given else None,
                        power_force_limiting=False)
            probe = probe or type(loop.arm.plant)(robot)
            loop.run(0.02)
            moving = move(robot, q0, 0.5, sign=sign)[1]
            assert loop.ctrl.desire(moving, loop.t).kind == "tracking", loop.events
            end = moving.scale.walls[-1] if moving.scale is not None else 0.5
            loop.run((0.5 + 0.05 * k) * end)
            loop.ctrl.hold_for("a test's stop")
            depth = [0.0]

            def measure(lp):
                depth[0] = max(depth[0], (tool_position(probe, lp.arm.q) - face) @ u)
            loop.run(0.3, each=measure)
            worst = max(worst, depth[0])
        depths[given] = worst
    assert depths[True] < 1e-3 and depths[False] > 1e-3, depths


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_push_across_a_plane_starts_the_safe_hold_naming_it(name):
    """Gravity compensation, collisions not reacted to (hand guiding), a 20 N push on the
    tool toward a plane 3 cm away: the joint state that finds the tool past the plane
    starts the safe hold, naming the plane and by how much (less than the tool moves in a
    period, 1 ms); no hold before it."""
    robot = load(name)
    q0 = working_poses(robot, count=1, seed=66)[0]
    solver = rd.make_solver(robot, "pinocchio")
    J_v = solver.jacobian(q0)[:3]
    p0 = solver.tip_pose(q0)[1]
    u = outward(p0, np.linalg.eigh(J_v @ solver.mass_matrix_inverse(q0) @ J_v.T)[1][:, 0])
    loop = Loop(robot, q0, safety_planes=plane(p0 + 0.03 * u, -u), collision_reaction="none")
    loop.run(0.05)
    R = loop.ref.tip_pose(loop.arm.q)[0]
    loop.arm.set_external_wrench(robot.tip_link, R.T @ (20.0 * u), np.zeros(3))
    speeds = []
    loop.run(1.0, each=lambda lp: speeds.append(np.linalg.norm(
        lp.ref.jacobian(lp.arm.q)[:3] @ lp.arm.v)))
    holds = [e for e in loop.events if e.kind == "safe_hold"]
    assert holds and "beyond safety plane 0" in holds[0].message, loop.events
    depth = 1e-3 * float(holds[0].message.split("the tool is ")[1].split(" mm")[0])
    assert 0.0 < depth <= max(speeds) * 1e-3, (depth, max(speeds))


def test_a_plane_is_drawn_on_itself_facing_the_allowed_side_and_points_by_their_margin():
    """rviz/safety.py: the square lies on its plane (distance 0, 1e-12) about the point
    nearest the tool, its z axis the normal, a rotation; the colour is the documented
    green up to half the limit, red from 0.95, blended between (its red rising, its green
    falling)."""
    from robo_dynamics.control.safety_planes import planes_from
    from robo_dynamics.rviz.safety import margin_colour, plane_patch
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, c = rng.normal(size=3), rng.normal(size=3)
        n = n if c @ n <= 0.0 else -n                    # the base on its allowed side
        wall = planes_from(plane(c, n))
        tool = rng.normal(size=3)
        centre, R, size = plane_patch(wall[0], tool, 0.9)
        assert abs(wall[0].distance(centre)) < 1e-12
        np.testing.assert_allclose(np.cross(tool - centre, R[:, 2]), 0.0, atol=1e-12)
        np.testing.assert_allclose(R[:, 2], n / np.linalg.norm(n), atol=1e-12)
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
        assert np.linalg.det(R) == pytest.approx(1.0) and size[0] == 0.9
    assert margin_colour(0.1)[:3] == pytest.approx((0.1, 0.8, 0.2))
    assert margin_colour(0.5)[:3] == pytest.approx((0.1, 0.8, 0.2))
    for ratio in (0.95, 3.0):
        assert margin_colour(ratio)[:3] == pytest.approx((1.0, 0.1, 0.1))
    ratios = np.linspace(0.5, 0.95, 46)
    reds = [margin_colour(r)[0] for r in ratios]
    greens = [margin_colour(r)[1] for r in ratios]
    assert np.all(np.diff(reds) > 0.0) and np.all(np.diff(greens) < 0.0)

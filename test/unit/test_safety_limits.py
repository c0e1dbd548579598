"""The Cartesian safety limits at every joint state (issue 63; control/safety_limits.py): a
monitored sphere against a plane, speed caps on the tool and a monitored point, and the
stop category a breach brings, on two arms simulated by MuJoCo in lockstep with the
controller core at dynamics_node's defaults.

References: MuJoCo's positions, speeds and Jacobians of the same URDF (mj_jac at the point);
each test also runs without the limit and sees the arm pass it: the test can fail.
"""

import numpy as np
import pytest

import robo_dynamics as rd
from arm_matrix import Loop, working_poses
from contact_sweep import TESTED, jacobian_and_mass, load_or_skip as load
from robo_dynamics.control.contact_safety import monitored_points
from robo_dynamics.control.trajectory import SetPoint, Trajectory

mujoco = pytest.importorskip("mujoco")
from robo_dynamics.simulation.mujoco_plant import MujocoPlant  # noqa: E402

ARMS = TESTED
ELBOWS = {"rd_ur5e": ("forearm_link", [0.0, 0.0, 0.1]), "panda": ("panda_link4", [0.0, 0.05, 0.0])}


def point_position(plant, q, link, offset):
    """[m] a point `offset` in `link`'s frame, base frame, from MuJoCo."""
    data = plant.data
    data.qpos[plant.qpos] = q
    mujoco.mj_kinematics(plant.mj, data)
    base, body = plant.mj.body(plant.model.base_link).id, plant.mj.body(link).id
    R, p = data.xmat[base].reshape(3, 3), data.xpos[base]
    return R.T @ (data.xpos[body] + data.xmat[body].reshape(3, 3) @ offset - p)


def plane(point, normal):
    return [float(x) for x in (*point, *normal)]


def recording(loop):
    """Record each state's Cycle in loop.cycles (with the time and MuJoCo's q̇)."""
    loop.cycles = []

    def cycle(*state):
        result = type(loop).cycle(loop, *state)
        loop.cycles.append((loop.t, loop.arm.v.copy(), result))
        return result
    loop.cycle = cycle
    return loop


@pytest.mark.parametrize("name", sorted(ARMS))
@pytest.mark.parametrize("backend", ["pinocchio", "rnea"])
def test_a_points_jacobian_is_mujocos(name, backend):
    """solver.point_jacobian (a Pinocchio frame put at the point; the library's
    own kinematics) against MuJoCo's mj_jac at the same point: 20 poses, every link, random
    offsets, 1e-12."""
    robot = load(name)
    solver, plant = rd.make_solver(robot, backend), MujocoPlant(robot)
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = rng.uniform(robot.lower, robot.upper)
        link = robot.body_links[rng.integers(robot.dof)]
        offset = rng.normal(size=3) * 0.1
        p, J_v = solver.point_jacobian(q, link, offset)
        assert np.abs(J_v - jacobian_and_mass(plant, q, link, offset)[0]).max() < 1e-12
        assert np.abs(p - point_position(plant, q, link, offset)).max() < 1e-12


def push_elbow_toward_a_plane(name, q0, monitored, gap=0.03, radius=0.04, force=10.0, **extra):
    """Gravity compensation, collisions not reacted to (hand guiding), a push of `force` [N]
    at the elbow (ELBOWS) along its most mobile direction that has the tool 5 cm behind it,
    toward a plane `gap` [m] beyond the sphere of `radius` about it: (loop, the plane's
    point, its normal toward the base, the elbow's MuJoCo positions per state)."""
    robot = load(name)
    link, offset = ELBOWS[name]
    solver = rd.make_solver(robot, "pinocchio")
    p0, J_v = solver.point_jacobian(q0, link, offset)
    p_tool = solver.tip_pose(q0)[1]
    axes = np.linalg.eigh(J_v @ solver.mass_matrix_inverse(q0) @ J_v.T)[1]
    c, u = next((p0 + (gap + radius) * u, u) for u in (
        s * axes[:, k] for k in (2, 1, 0) for s in (1.0, -1.0))   # the most mobile first
        if (p0 - p_tool) @ u > 0.05 and p0 @ u + gap + radius > 0.0)   # tool and base inside
    loop = recording(Loop(robot, q0, safety_planes=plane(c, -u), collision_reaction="none",
                          monitored_links=[link] if monitored else None,
                          monitored_offsets=offset if monitored else None,
                          monitored_radii=[radius] if monitored else None, **extra))
    loop.run(0.05)
    probe, positions = MujocoPlant(robot), []
    F = _link_rotation(probe, loop.arm.q, link).T @ (force * u)     # at the point, link axes
    loop.arm.set_external_wrench(link, F, np.cross(offset, F))
    loop.run(0.6, each=lambda lp: positions.append(point_position(probe, lp.arm.q, link,
                                                                  offset)))
    return loop, c, u, positions


def _link_rotation(plant, q, link):
    """R (3, 3) of `link` in the base frame, MuJoCo's."""
    data = plant.data
    data.qpos[plant.qpos] = q
    mujoco.mj_kinematics(plant.mj, data)
    base, body = plant.mj.body(plant.model.base_link).id, plant.mj.body(link).id
    return data.xmat[base].reshape(3, 3).T @ data.xmat[body].reshape(3, 3)


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_monitored_sphere_pushed_into_a_plane_starts_the_safe_hold(name):
    """A push at the elbow toward a plane, the elbow a monitored sphere of 4 cm: the safe
    hold starts on the first joint state at which the sphere (MuJoCo's centre) reaches the
    plane (less than a period's travel past it), naming the point and the plane; not
    monitored, the elbow goes through the plane (later the velocity watchdog may
    hold the arm, never for the plane)."""
    robot = load(name)
    q0 = working_poses(robot, count=1, seed=67)[0]
    depths = {}
    for monitored in (True, False):
        loop, c, u, positions = push_elbow_toward_a_plane(name, q0, monitored)
        inside = np.array([(p - c) @ -u - (0.04 if monitored else 0.0) for p in positions])
        holds = [k for k, (_, _, cycle) in enumerate(loop.cycles[50:])
                 if any(e.kind == "safe_hold" for e in cycle.events)]
        depths[monitored] = -inside.min()
        if monitored:
            first = int(np.argmax(inside < 0.0))
            step = np.max(np.abs(np.diff(inside)))             # the most it moves a period
            assert inside.min() < 0.0 and holds == [first], (holds, first)
            assert -inside[first] <= step, (inside[first], step)
            message = next(e.message for e in loop.events if e.kind == "safe_hold")
            assert f"the monitored point on '{ELBOWS[name][0]}'" in message, message
            assert "beyond safety plane 0" in message, message
        else:
            assert not any("safety plane" in e.message for e in loop.events), loop.events
    assert depths[False] > 0.02, depths


def guided_speeds(loop, link=None, offset=None, seconds=0.5):
    """Run `seconds`; MuJoCo's speed of the tool (link None) or of a point, per state."""
    probe, speeds = MujocoPlant(loop.robot), []

    def measure(lp):
        J_v = jacobian_and_mass(probe, lp.arm.q, link, np.zeros(3) if offset is None
                                else np.asarray(offset))[0]
        speeds.append(float(np.linalg.norm(J_v @ lp.arm.v)))
    loop.run(seconds, each=measure)
    return np.array(speeds)


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_speed_cap_slows_a_trajectory_and_a_guided_push_past_it_stops_the_arm(name):
    """tool_speed_limit 0.25 m/s, power_force_limiting off: a fast move keeps the tool
    (MuJoCo's speed) within the cap with no stop; without the cap it passes it. The elbow
    with monitored_speed_limits 0.15 m/s likewise. Guided (gravity compensation), a 5 N
    push is braked within the cap; 60 N drives it past the cap, and the safe hold starts on
    the first state past it, naming the speed."""
    robot = load(name)
    link, offset = ELBOWS[name]
    q0 = working_poses(robot, count=1, seed=68)[0]
    n, bound = robot.dof, np.asarray(robot.velocity_limit, dtype=float)
    goal = np.clip(q0 + 0.8 * bound / 1.875 * (-1.0) ** np.arange(n), robot.lower + 0.05,
                   robot.upper - 0.05)
    for where, cap, changes in (
            (None, 0.25, {"tool_speed_limit": 0.25}),
            (link, 0.15, {"monitored_links": [link], "monitored_offsets": offset,
                          "monitored_speed_limits": [0.15]})):
        worst = {}
        for capped in (True, False):
            loop = Loop(robot, q0, power_force_limiting=False, **(changes if capped else {}))
            loop.run(0.02)
            trajectory = Trajectory(loop.t, [0.0, 1.0], [q0, goal], np.zeros((2, n)))
            assert loop.ctrl.desire(trajectory, loop.t).kind == "tracking"
            seconds = 0.1 + (trajectory.scale.walls[-1] if trajectory.scale else 1.0)
            worst[capped] = guided_speeds(loop, where, offset if where else None,
                                          seconds).max()
            assert "safe_hold" not in loop.kinds(), loop.events
        assert worst[True] <= cap < worst[False], (where, worst)
    for force, stops in ((5.0, False), (60.0, True)):
        loop = recording(Loop(robot, q0, power_force_limiting=False, tool_speed_limit=0.1,
                              collision_reaction="none"))
        loop.run(0.05)
        solver = loop.ref
        J_v = solver.jacobian(q0)[:3]
        u = np.linalg.eigh(J_v @ solver.mass_matrix_inverse(q0) @ J_v.T)[1][:, 0]
        R = solver.tip_pose(loop.arm.q)[0]
        loop.arm.set_external_wrench(robot.tip_link, R.T @ (force * u), np.zeros(3))
        speeds = guided_speeds(loop, seconds=0.3)
        holds = [k for k, (_, _, cycle) in enumerate(loop.cycles[50:])
                 if any(e.kind == "safe_hold" for e in cycle.events)]
        if stops:
            first = int(np.argmax(speeds > 0.1))
            assert speeds.max() > 0.1 and holds == [first], (holds, first, speeds.max())
            message = next(e.message for e in loop.events if e.kind == "safe_hold")
            assert "the tool moves at" in message and "0.1 m/s allowed" in message, message
        else:
            assert holds == [] and speeds.max() <= 0.1, (holds, speeds.max())


@pytest.mark.parametrize("name", sorted(ARMS))
def test_the_stop_category_decides_whether_power_stays_after_a_breach(name):
    """The elbow pushed into a plane (as above). Category 2: the hold's command goes on at
    every state. Category 1: the hold's command goes on until every joint (MuJoCo's q̇) is
    below 1 % of its velocity bound, then no command (the simulated arm's brakes engage),
    the event naming the category and the breach; the arm then stays put, and a new desired
    motion brings the commands back."""
    robot = load(name)
    q0 = working_poses(robot, count=1, seed=67)[0]
    bound = np.asarray(robot.velocity_limit, dtype=float)
    for category in (2, 1):
        loop, _, _, _ = push_elbow_toward_a_plane(name, q0, True,
                                                  safety_stop_category=category)
        loop.arm.set_external_wrench(ELBOWS[name][0], np.zeros(3), np.zeros(3))
        loop.run(0.5)
        breach = next(k for k, (_, _, cycle) in enumerate(loop.cycles)
                      if any(e.kind == "safe_hold" for e in cycle.events))
        after = loop.cycles[breach:]
        commanded = [cycle.command is not None for _, _, cycle in after]
        if category == 2:
            assert all(commanded) and "stopped" not in loop.kinds(), loop.kinds()
            continue
        stop = next(k for k, (_, _, cycle) in enumerate(after)
                    if any(e.kind == "stopped" for e in cycle.events))
        assert all(commanded[:stop]) and not any(commanded[stop:]), stop
        assert np.all(np.abs(after[stop][1]) <= 0.01 * bound)
        assert not np.all(np.abs(after[stop - 1][1]) <= 0.01 * bound)
        message = next(e.message for e in loop.events if e.kind == "stopped")
        assert message.startswith("category-1 stop: the monitored point on"), message
        q_stopped = loop.arm.q.copy()
        loop.run(0.2)
        assert np.abs(loop.arm.q - q_stopped).max() < 1e-3
        assert loop.ctrl.desire(SetPoint(loop.arm.q.copy(), np.zeros(robot.dof)),
                                loop.t).kind == "tracking"
        loop.run(0.05)
        assert loop.cycles[-1][2].command is not None


@pytest.mark.parametrize("name", sorted(ARMS))
@pytest.mark.parametrize("clamped", [False, True])
def test_the_simulated_hand_peaks_at_the_impact_closed_form(name, clamped):
    """sim_arm's hand stand-in (simulation/hand_stand_in.py) struck by the tool coasting at
    0.5 m/s along its axis (the arm's motors holding gravity only, MuJoCo at 0.05 ms): the
    spring's peak is v √(μ k), μ = (1/m_H + 1/m_R)⁻¹ free and m_R clamped, with MuJoCo's
    reflected mass along the axis, within 2 % (the impact is short: the arm's gravity and
    Coriolis terms move little in it)."""
    from contact_sweep import mass_along
    from robo_dynamics.control.contact_safety import REGIONS
    from robo_dynamics.simulation.hand_stand_in import HandStandIn
    from robo_dynamics.simulation.simulated_arm import SimulatedArm
    robot = load(name)
    q0 = working_poses(robot, count=1, seed=69)[0]
    plant, solver = MujocoPlant(robot, "rk4", 5e-5), rd.make_solver(robot, "pinocchio")
    J_v = solver.jacobian(q0)[:3]
    axis = np.linalg.eigh(J_v @ solver.mass_matrix_inverse(q0) @ J_v.T)[1][:, -1]
    v0 = np.linalg.pinv(J_v) @ (0.5 * axis)               # the tool at 0.5 m/s along it
    arm = SimulatedArm(plant, q0, v0, command_timeout=1.0)
    arm.set_command(plant.holding_torque(q0))
    p0 = plant.tip_frame(q0)[1]
    hand = REGIONS["hand"]
    arm.hand = HandStandIn(p0 + 1e-3 * axis, axis, hand.spring, hand.mass, clamped)
    probe, touch = MujocoPlant(robot), None
    for _ in range(4000):
        if touch is None and arm.hand.force > 0.0:
            touch = (float(jacobian_and_mass(probe, arm.q)[0] @ arm.v @ axis),
                     mass_along(probe, arm.q, axis))
        if touch is not None and arm.hand.force == 0.0:
            break
        arm.step()
    speed, m_R = touch
    mu = m_R if clamped else 1.0 / (1.0 / hand.mass + 1.0 / m_R)
    expected = speed * np.sqrt(mu * hand.spring)
    assert abs(arm.hand.peak - expected) <= 0.02 * expected, (arm.hand.peak, expected)


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_move_that_would_put_a_sphere_beyond_a_plane_is_refused(name):
    """A move (a trajectory of 1 s) that ends with the elbow's point 2 cm inside a plane
    (MuJoCo's positions along the path) and keeps the tool inside: with a 4 cm sphere
    there it is refused, naming the point and the plane; with a point (no radius) it is
    admitted."""
    robot = load(name)
    link, offset = ELBOWS[name]
    probe = MujocoPlant(robot)
    rng = np.random.default_rng(70)
    q0 = working_poses(robot, count=1, seed=70)[0]
    for _ in range(50):                  # a set-point whose elbow moves 3 cm or more
        goal = np.clip(q0 + rng.uniform(-0.3, 0.3, robot.dof), robot.lower, robot.upper)
        e0, e1 = (point_position(probe, q, link, offset) for q in (q0, goal))
        u = (e1 - e0) / np.linalg.norm(e1 - e0)
        c = e1 + 0.02 * u                                 # the plane, 2 cm past the goal's
        path = [q0 + x * (goal - q0) for x in np.linspace(0.0, 1.0, 21)]   # the quintic's
        tools = [point_position(probe, q, robot.tip_link, np.zeros(3)) for q in path]
        elbows = [point_position(probe, q, link, offset) for q in path]
        if (np.linalg.norm(e1 - e0) > 0.03 and c @ u > 0.0
                and all((t - c) @ -u > 0.05 for t in tools)
                and all((e - c) @ -u > 0.019 for e in elbows)):
            break
    else:
        pytest.fail("no set-point found")
    kinds = {}
    for radius in (0.04, 0.0):
        loop = Loop(robot, q0, safety_planes=plane(c, -u), monitored_links=[link],
                    monitored_offsets=offset, monitored_radii=[radius])
        loop.run(0.02)
        move = Trajectory(loop.t, [0.0, 1.0], [loop.arm.q.copy(), goal],
                          np.zeros((2, robot.dof)))
        event = loop.ctrl.desire(move, loop.t)
        kinds[radius] = event.kind
        if radius > 0.0:
            assert (f"the monitored point on '{link}' would be" in event.message
                    and "beyond safety plane 0" in event.message), event.message
    assert kinds == {0.04: "refused", 0.0: "tracking"}, kinds


def test_a_monitored_point_on_a_linkage_moves_through_its_loop():
    """The shipped palletizer's rod (a passive link of its parallelogram), 0.3 m along it,
    monitored: the point's Jacobian through the loop, J B, times motor rates equals the
    central difference of the point's position in MuJoCo's model of the tree at the closed
    poses θ ± ε θ̇ (1e-6 relative), at 10 poses; the monitored link is admitted, and a link
    the mechanism lacks is refused by name."""
    from palletizer import PARAMETERS, URDF
    from robo_dynamics.closed_chain import load_closed_chain
    from robo_dynamics.closed_chain.motor_model import motor_model
    from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain
    chain = load_closed_chain(URDF, parameters=PARAMETERS)
    model = motor_model(chain, PARAMETERS["tip_link"])
    solver = rd.make_solver(model)
    link, offset = "rod", np.array([0.3, 0.0, 0.0])
    assert monitored_points(model, [link], offset) == ((link, (0.3, 0.0, 0.0)),)
    with pytest.raises(ValueError, match="link 'elbow' is not a moving link"):
        monitored_points(model, ["elbow"], offset)
    plant = MujocoClosedChain(chain)
    body, R, p = chain.tree.link_frame(link)
    site = R @ offset + p                              # in the body's frame

    def position(theta):
        plant.set_state(solver.motors.pose(theta), np.zeros(chain.tree.dof))
        b = plant.mj.body(plant.names[body]).id
        return plant.data.xpos[b] + plant.data.xmat[b].reshape(3, 3) @ site
    rng = np.random.default_rng(71)
    theta0 = np.array([0.5, 0.3, -0.3, 0.4])
    for _ in range(10):
        theta = theta0 + rng.uniform(-0.2, 0.2, 4)
        rate = rng.normal(size=4)
        p_point, J_v = solver.point_jacobian(theta, link, offset)
        eps = 1e-6
        expected = (position(theta + eps * rate) - position(theta - eps * rate)) / (2 * eps)
        assert np.abs(J_v @ rate - expected).max() <= 1e-6 * np.linalg.norm(expected)
        assert np.abs(p_point - position(theta)).max() < 1e-12

"""Power and force limiting enforced (issue 63): the tool kept within the speed a contact
with a person allows, in every mode, on two arms simulated by MuJoCo in lockstep with the
controller core at dynamics_node's defaults.

The references are independent of the code under test (test/support/contact_sweep.py):
the tool's speed and the mass it carries along its motion from MuJoCo, the speed limit
from the standard's formulas. Each test also runs the limit off and sees the tool go
faster than allowed: the test can fail.
"""

import math

import numpy as np
import pytest

import robo_dynamics as rd
from arm_matrix import Loop, node_defaults, working_poses
from contact_sweep import TESTED, iso_limit, load_or_skip as load, mass_along, point_figures, swing
from robo_dynamics.control.cartesian import CARTESIAN_IMPEDANCE, CartesianTarget
from robo_dynamics.control.contact_safety import REGIONS, monitored_points
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.follow_trajectory import Stopping
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.settings import controller_settings

mujoco = pytest.importorskip("mujoco")
from robo_dynamics.simulation.mujoco_plant import MujocoPlant  # noqa: E402

ARMS = TESTED


def worst_ratios(loop, seconds, guided=False):
    """Run `seconds`; the largest tool speed / the speed allowed along its motion, for a
    transient and a clamped contact (the plant's own figures: a separate MuJoCo model of
    the same URDF); guided: only while in gravity compensation."""
    probe = type(loop.arm.plant)(loop.robot)
    worst = np.zeros(2)

    def measure(lp):
        if guided and lp.ctrl.mode != "gravity":
            return
        speed, m_R = point_figures(probe, lp.arm.q, lp.arm.v)
        if speed > 0.05:
            worst[:] = np.maximum(worst, [speed / iso_limit(m_R, False),
                                          speed / iso_limit(m_R, True)])
    loop.run(seconds, each=measure)
    return worst


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_trajectory_too_fast_for_a_person_is_slowed_along_its_own_path(name):
    """Every joint at up to 0.8 × its velocity bound (a 1 s quintic) from two working
    poses: with power_force_limiting, for a transient (both) and a clamped contact (the
    first), the tool
    stays within the speed allowed (0.95 of it measured) and the motion
    ends at its goal with no safe hold; off, the same motion goes at least 30 % (transient)
    and 200 % (clamped) faster than allowed at one pose at least."""
    robot = load(name)
    off = []
    for k, q0 in enumerate(working_poses(robot, count=2, seed=63)):
        goal, motion = swing(robot, q0, 1.0, speed=0.8)
        for on, contact in ((False, "transient"), (True, "transient"), (True, "clamped"))[
                :3 - k]:                                 # clamped (slow) at one pose
            loop = Loop(robot, q0, power_force_limiting=on, contact_type=contact)
            loop.run(0.02)
            trajectory = motion(loop.t)
            event = loop.ctrl.desire(trajectory, loop.t)
            assert event.kind == "tracking"
            assert ("slowed next to a person" in event.message) == (
                trajectory.scale is not None), event.message           # said when it is
            scale = trajectory.scale
            ratios = worst_ratios(loop, 0.2 + (scale.walls[-1] if scale else 1.0))
            if not on:
                off.append(ratios)
                continue
            assert ratios[int(contact == "clamped")] <= 1.0, (contact, ratios)
            assert "safe_hold" not in loop.kinds(), loop.events
            assert np.abs(loop.arm.q - goal).max() < 2e-3
    assert np.max(off, axis=0)[0] >= 1.3 and np.max(off, axis=0)[1] >= 3.0, off


def test_the_scaled_motion_is_the_path_at_a_rate_that_never_steps():
    """On rd_ur5e's swing: every desired pose is the unscaled path's at the path time the
    scale gives; the desired velocity and acceleration are the derivatives of the desired
    pose (finite differences, 0.1 ms); |ṡ| ≤ the hold's decay rate; ṡ has no step (it
    moves less than 2 % of that rate per millisecond); the path's time, mapped back to
    wall time, is the wall time."""
    robot = load("rd_ur5e")
    q0 = working_poses(robot, count=1, seed=63)[0]
    loop = Loop(robot, q0)
    _, motion = swing(robot, q0, 1.0, speed=0.8)
    trajectory = motion(0.0)
    trajectory.begin(loop.ctrl.solver, q0, 0.0, loop.settings)
    scale, h = trajectory.scale, 2e-4
    assert scale is not None and scale.least < 0.8
    walls = np.arange(0.0, scale.walls[-1] + 0.1, h)
    q, qd, qdd = (np.array(x) for x in zip(*(trajectory.sample(w) for w in walls)))
    path = np.array([trajectory.sample_path(scale.at(w)[0])[0] for w in walls])
    assert np.abs(q - path).max() < 1e-12
    assert np.abs(np.gradient(q, h, axis=0) - qd)[2:-2].max() < 1e-4
    assert np.abs(np.gradient(qd, h, axis=0) - qdd)[2:-2].max() < 0.02 * np.abs(qdd).max()
    rates = np.array([scale.at(w)[2] for w in walls])
    rate = loop.settings.hold_decay_rate
    assert np.abs(rates).max() <= rate
    assert np.abs(np.diff(rates[::10])).max() < 0.02 * rate
    assert max(abs(scale.wall(scale.at(w)[0]) - w) for w in walls[::97]) < 1e-12


def test_a_cancel_slows_the_scaled_path_from_its_scaled_speed():
    """A cancel in the middle of the scaled swing: the stop starts at the desired velocity
    the scale gave (no step) and ends at rest on the path."""
    robot = load("rd_ur5e")
    q0 = working_poses(robot, count=1, seed=63)[0]
    loop = Loop(robot, q0)
    trajectory = swing(robot, q0, 1.0, speed=0.8)[1](0.0)
    trajectory.begin(loop.ctrl.solver, q0, 0.0, loop.settings)
    now = 0.5 * trajectory.scale.walls[-1]
    stop = Stopping(trajectory, now, np.full(robot.dof, 5.0))
    before, after = trajectory.sample(now), stop.sample(now)
    assert np.abs(after[1] - before[1]).max() < 1e-12
    assert np.abs(after[0] - before[0]).max() < 1e-12
    end = stop.sample(stop.end + 0.1)
    assert np.abs(end[1]).max() == 0.0


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_cartesian_target_is_approached_no_faster_than_a_clamped_hand_allows(name):
    """A target 0.25 m away along the direction the tool carries most mass in, in
    Cartesian impedance at the node's defaults, from two working poses, clamped contact
    (the lowest limit): the tool approaches within what is allowed and is within 1 cm of
    the target, settling; off, the approach goes at least 30 % faster than allowed at one pose at
    least."""
    robot = load(name)
    solver, d, n = rd.make_solver(robot, "pinocchio"), node_defaults(), robot.dof
    off = []
    for q0 in working_poses(robot, count=2, seed=64):
        J_v = solver.jacobian(q0)[:3]
        heavy = np.linalg.eigh(J_v @ solver.mass_matrix_inverse(q0) @ J_v.T)[1][:, 0]
        R, p = solver.tip_pose(q0)
        for on in (True, False):
            loop = Loop(robot, q0, power_force_limiting=on, contact_type="clamped")
            loop.run(0.02)
            motion = CartesianTarget(CARTESIAN_IMPEDANCE, R, p + 0.25 * heavy,
                                     np.diag(d["cartesian.stiffness"]),
                                     d["cartesian.damping_ratio"], np.zeros(6), None,
                                     np.full(n, 10.0), np.full(n, 5.0),
                                     d["cartesian.max_position_error"],
                                     d["cartesian.max_orientation_error"])
            assert loop.ctrl.desire(motion, loop.t).kind == "tracking", loop.events
            ratio = worst_ratios(loop, motion.approach.T)[1]           # the way as timed,
            while not motion.approach.ended and loop.t < 6.0:         # as slowed, and after
                ratio = max(ratio, worst_ratios(loop, 0.1)[1])
            ratio = max(ratio, worst_ratios(loop, 0.6)[1])
            assert "safe_hold" not in loop.kinds(), loop.events
            assert np.linalg.norm(loop.ref.tip_pose(loop.arm.q)[1] - p - 0.25 * heavy) < 0.01
            if on:
                assert ratio <= 1.0, ratio
            else:
                off.append(ratio)
    assert max(off) >= 1.3, off


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_person_guiding_the_arm_faster_than_allowed_is_held_back(name):
    """Gravity compensation (collisions reported, not reacted to: hand guiding), a 15 N
    push on the tool along the direction it carries most mass in, from two working poses,
    clamped contact: with the limit the tool stays within 2 % of the speed allowed while
    the node guides it; off, it goes at least 50 % faster at one pose at least (until the
    velocity watchdog takes it into the safe hold, which the figures stop at)."""
    robot = load(name)
    solver = rd.make_solver(robot, "pinocchio")
    off = []
    for q0 in working_poses(robot, count=2, seed=65):
        J_v = solver.jacobian(q0)[:3]
        push = 15.0 * np.linalg.eigh(J_v @ solver.mass_matrix_inverse(q0) @ J_v.T)[1][:, 0]
        for on in (True, False):
            loop = Loop(robot, q0, power_force_limiting=on, contact_type="clamped",
                        collision_reaction="none")
            loop.run(0.05)
            R = loop.ref.tip_pose(loop.arm.q)[0]
            loop.arm.set_external_wrench(robot.tip_link, R.T @ push, np.zeros(3))
            ratio = worst_ratios(loop, 0.4, guided=True)[1]
            if on:
                assert ratio <= 1.02, ratio
            else:
                off.append(ratio)
    assert max(off) >= 1.5, off


HAND = REGIONS["hand"]
SUBSTEPS = 10          # MuJoCo at 0.1 ms inside each 1 ms control period: the hand's spring
                       # (ω = √(k/μ) ≈ 400 rad/s) integrated to about 1 %


def hit_a_hand(robot, q0, on, clamped=False):
    """The swing of the first test driven through a hand stand-in: a free 0.6 kg body
    (ISO/TS 15066's effective mass of a hand) behind a spring of 75 N/mm that takes
    compression only, its face where the unscaled swing's tool is fastest and its axis
    along that motion. MuJoCo steps the arm at 0.1 ms, the hand and its spring are
    integrated beside it, the spring's force applied at the tool; the controller (node
    defaults, power_force_limiting `on`, a transient contact) runs at 1 kHz. → (the
    largest spring force [N], (the tool's speed along the axis at first touch [m/s], its
    reflected mass along it there [kg], MuJoCo's), the spring's force at the end [N], the
    collisions the controller saw).
    clamped: the hand against a wall (its face fixed), the node told so.""" 
    names, n = list(robot.joint_names), robot.dof
    settings = controller_settings(node_defaults(
        power_force_limiting=on, contact_type="clamped" if clamped else "transient"), robot)
    ctrl = Controller(rd.make_solver(robot, "pinocchio"), JointStateMerger(names, names),
                      settings)
    ref = rd.make_solver(robot, "pinocchio")
    plant = MujocoPlant(robot, "rk4", 1e-3 / SUBSTEPS)
    goal, motion = swing(robot, q0, 1.0, speed=0.8)
    path = motion(0.0)
    times = np.linspace(0.0, 1.0, 201)
    speeds = [np.linalg.norm(ref.jacobian(q)[:3] @ qd) for q, qd in zip(*path.sample_many(times)[:2])]
    q_fast, qd_fast, _ = path.sample(times[int(np.argmax(speeds))])
    axis = ref.jacobian(q_fast)[:3] @ qd_fast
    axis /= np.linalg.norm(axis)
    face, hand_speed = float(ref.tip_pose(q_fast)[1] @ axis), 0.0  # the hand's face, along
    q, v, t, command, force = q0.copy(), np.zeros(n), 0.0, ref.gravity(q0), 0.0
    peak, touch, touched = 0.0, None, None
    for k in range(3000):
        if touched is not None and (t > touched + 0.7 or not clamped and force == 0.0):
            break                     # the hand has left, or 0.7 s against the wall
        cycle = ctrl.step(names, q.tolist(), v.tolist(), command.tolist(), t, t)
        command = cycle.command if cycle.command is not None else command
        if k == 20:
            assert ctrl.desire(motion(t), t).kind == "tracking"
        for _ in range(SUBSTEPS):
            R, p = ref.tip_pose(q)
            depth = float(p @ axis) - face
            force = HAND.spring * max(depth, 0.0)
            if force > 0.0 and touch is None:    # speed along the axis, the mass along it
                touch = (float(ref.jacobian(q)[:3] @ v @ axis) - hand_speed,
                         mass_along(plant, q, axis))
                touched = t
            peak = max(peak, force)
            push = plant.external_joint_torque(q, robot.tip_link, R.T @ (-force * axis),
                                               np.zeros(3))
            q, v = plant.advance(q, v, command + push)
            if not clamped:                       # clamped: the hand against a wall
                hand_speed += force / HAND.mass * plant.h
                face += hand_speed * plant.h
        t += 1e-3
    return peak, touch, force, ctrl.counts["collisions"]


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_hand_in_the_way_is_struck_within_the_force_it_may_take(name):
    """The tool meets a free hand (0.6 kg behind 75 N/mm) where the swing is fastest: with
    power_force_limiting the spring's force peaks within twice the hand's quasi-static
    limit (280 N, the transient limit; its energy within (2 F)²/(2 k) = 0.52 J); off, the
    same swing strikes beyond it. Either way the peak is the two-body impact's,
    v √(μ k) with μ from the tool's reflected mass along the hand's axis (MuJoCo's), within
    10 %: the mass the limit is computed from is the one the hand meets, the controller
    acting throughout."""
    robot = load(name)
    q0 = working_poses(robot, count=2, seed=63)[1]
    peaks = {}
    for on in (True, False):
        peak, (speed, m_R), _, _ = hit_a_hand(robot, q0, on)
        impact = speed * math.sqrt(HAND.spring / (1.0 / HAND.mass + 1.0 / m_R))
        assert peak == pytest.approx(impact, rel=0.1), (on, peak, speed, m_R)
        peaks[on] = peak
    assert peaks[True] <= 2.0 * HAND.force, peaks
    assert peaks[False] > 2.0 * HAND.force, peaks


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_hand_against_a_wall_is_pressed_within_its_quasi_static_limit(name):
    """The same swing into a hand that cannot move away (its face fixed: contact_type
    clamped): limited, the spring's force stays within the hand's quasi-static 140 N;
    off, the impact reaches several times that. Either way the observer calls it a
    collision, the safe hold follows and the hand is not kept pressed (0.7 s later the
    spring holds under 1 N). The peak is v √(m_R k), MuJoCo's m_R, within 10 %."""
    robot = load(name)
    q0 = working_poses(robot, count=2, seed=63)[1]
    peaks = {}
    for on in (True, False):
        peak, (speed, m_R), held, collisions = hit_a_hand(robot, q0, on, clamped=True)
        assert peak == pytest.approx(speed * math.sqrt(HAND.spring * m_R), rel=0.1)
        assert collisions >= 1 and held < 1.0, (collisions, held)       # [N]
        peaks[on] = peak
    assert peaks[True] <= HAND.force, peaks
    assert peaks[False] > 3.0 * HAND.force, peaks


ELBOWS = {"rd_ur5e": ("forearm_link", [0.0, 0.0, 0.1]), "panda": ("panda_link4", [0.0, 0.05, 0.0])}


@pytest.mark.parametrize("name", sorted(ARMS))
def test_a_monitored_elbow_is_slowed_like_the_tool(name):
    """The swing with a point on the elbow monitored (monitored_links, monitored_offsets):
    the point (MuJoCo's speed and mass at it) stays within its limit; with the tool alone
    limited, the same swing carries it faster than allowed at one pose at least. Its
    Jacobian, the model's, is Pinocchio's at a frame put there (1e-12)."""
    import pinocchio as pin
    robot = load(name)
    link, offset = ELBOWS[name]
    pin_model = pin.buildModelFromXML(robot.urdf_xml)
    parent = pin_model.frames[pin_model.getFrameId(link)]
    pin_model.addFrame(pin.Frame("elbow_point", parent.parentJoint, parent.placement *
                                 pin.SE3(np.eye(3), np.array(offset)), pin.FrameType.OP_FRAME))
    data = pin_model.createData()
    probe = MujocoPlant(robot)
    worst = {}
    for q0 in working_poses(robot, count=2, seed=63):
        (_, point), = monitored_points(robot, [link], offset)
        joints = [pin_model.joints[pin_model.getJointId(j)] for j in robot.joint_names]
        q_full = pin.neutral(pin_model)                    # a Panda's fingers at 0
        q_full[[j.idx_q for j in joints]] = q0
        pin.computeJointJacobians(pin_model, data, q_full)
        pin.updateFramePlacements(pin_model, data)
        expected = pin.getFrameJacobian(pin_model, data, pin_model.getFrameId("elbow_point"),
                                        pin.LOCAL_WORLD_ALIGNED)[:3, [j.idx_v for j in joints]]
        p, J_v = rd.make_solver(robot, "rnea").point_jacobian_batch(q0[None], link, point)
        assert np.abs(J_v[0] - expected).max() < 1e-12
        assert np.abs(p[0] - data.oMf[pin_model.getFrameId("elbow_point")].translation).max() < 1e-12
        goal, motion = swing(robot, q0, 1.0, speed=0.8)
        for monitored in (True, False):
            loop = Loop(robot, q0, monitored_links=[link] if monitored else None,
                        monitored_offsets=offset if monitored else None)
            loop.run(0.02)
            trajectory = motion(loop.t)
            assert loop.ctrl.desire(trajectory, loop.t).kind == "tracking"
            ratio = [0.0]

            def measure(lp):
                speed, m_R = point_figures(probe, lp.arm.q, lp.arm.v, link, offset)
                if speed > 0.05:
                    ratio[0] = max(ratio[0], speed / iso_limit(m_R))
            scale = trajectory.scale
            loop.run(0.1 + (scale.walls[-1] if scale else 1.0), each=measure)
            worst[monitored] = max(worst.get(monitored, 0.0), ratio[0])
            assert "safe_hold" not in loop.kinds(), loop.events
    assert worst[True] <= 1.0 and worst[False] > 1.0, worst

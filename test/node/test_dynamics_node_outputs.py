"""dynamics_node's outputs: torques, Λ and markers against Pinocchio, merging and rejecting
joint states, the command's joint order, staleness, clamping, computed torque, friction, the
payload topic.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported)."""

import math

import numpy as np
from scipy.spatial.transform import Rotation
import pytest
import rclpy
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robo_dynamics_interfaces.srv import SetPayload
from conftest import rel

from node_harness import (NAMES, Q, QD, REF, ROBOT, Harness, backend, diagnostic_status,  # noqa: F401 (fixtures)
                          diagnostic_value, harness, ros_context)


def test_gravity_torques_and_lambda_match_pinocchio(harness):
    g_msg = harness.stream("gravity")
    assert list(g_msg.name) == NAMES
    assert rel(g_msg.effort, REF.gravity(Q)) <= 1e-9
    # the command ramps from zero (no measured effort) to gravity compensation, then stays
    harness.stream_until("command", lambda m: rel(m.data, REF.gravity(Q)) <= 1e-9)
    assert rel(harness.stream("command", count=3).data, REF.gravity(Q)) <= 1e-9
    assert rel(harness.inbox["command_state"][-1].effort, REF.gravity(Q)) <= 1e-9
    lam = harness.stream("lambda")
    assert lam.header.frame_id == "base_link" and lam.tip_frame == "tool0"
    expected = REF.operational_space_inertia(Q)
    assert rel(np.reshape(lam.lambda_matrix, (6, 6)), expected) <= 1e-9
    assert not lam.near_singular and 1e3 < lam.condition_number < 1e6


def test_hardware_that_compensates_gravity_gets_the_command_without_it(harness):
    """hardware_compensates_gravity: the published command is the gravity-compensation
    command minus g(q) (Pinocchio's), i.e. zero at rest in the gravity mode; ~/gravity_torques
    still says g(q)."""
    harness.stream_until("command", lambda m: rel(m.data, REF.gravity(Q)) <= 1e-9)
    assert harness.node.set_parameters([Parameter("hardware_compensates_gravity",
                                                  value=True)])[0].successful
    harness.stream_until("command", lambda m: np.max(np.abs(m.data)) <= 1e-9)
    assert rel(harness.stream("gravity").effort, REF.gravity(Q)) <= 1e-9
    assert harness.node.set_parameters([Parameter("hardware_compensates_gravity",
                                                  value=False)])[0].successful
    harness.stream_until("command", lambda m: rel(m.data, REF.gravity(Q)) <= 1e-9)


def test_partial_and_reordered_messages_are_merged_by_name(harness):
    """Two publishers, each with half of the joints in its own order."""
    first, second = [5, 2, 0], [3, 1, 4]
    harness.send_and_wait([NAMES[i] for i in first], Q[first], QD[first])
    assert harness.node.controller.counts["commands"] == 0   # incomplete: no command yet

    def both_halves():
        harness.publish_state([NAMES[i] for i in second], Q[second], QD[second])
        harness.publish_state([NAMES[i] for i in first], Q[first], QD[first])
    assert harness.spin_until(lambda: len(harness.inbox["gravity"]) >= 3, action=both_halves)
    # every output came from the complete state (outputs arrive in the order sent)
    for msg in harness.inbox["gravity"]:
        assert rel(msg.effort, REF.gravity(Q)) <= 1e-9


@pytest.mark.parametrize("harness", [{"command_joints": ["wrist_3_joint", "elbow_joint",
                                                          "shoulder_pan_joint"]}], indirect=True)
def test_commands_follow_the_controller_joint_order(harness):
    g = REF.gravity(Q)
    harness.stream_until("command", lambda m: rel(m.data, [g[5], g[2], g[0]]) <= 1e-9)
    order = ["wrist_3_joint", "elbow_joint", "shoulder_pan_joint"]
    assert list(harness.inbox["gravity"][-1].name) == order
    assert list(harness.inbox["command_state"][-1].name) == order


def test_bad_messages_are_rejected_counted_and_never_published(harness):
    harness.stream("gravity")
    harness.settle()
    before = len(harness.inbox["gravity"])
    bad = [(NAMES, [math.nan] + list(Q[1:]), None), (NAMES, Q[:5], None),
           (NAMES + ["ghost_joint"], list(Q) + [0.0], None), (NAMES, Q, QD[:3]), ([], [], None)]
    commands = harness.node.controller.counts["commands"]
    for names, q, qd in bad:
        harness.send_and_wait(names, q, qd)
    assert harness.node.controller.rejected == len(bad)
    assert harness.node.controller.counts["commands"] == commands    # none computed
    # then good states at another pose: every output is g(Q) (the stream before) or g(Q2);
    # none came from the bad ones (outputs arrive in the order sent). More than one: if the
    # bad ones took longer than stale_timeout, the stream restarts on the second good one
    Q2 = Q + 0.1
    assert harness.spin_until(lambda: rel(harness.inbox["gravity"][-1].effort,
                                          REF.gravity(Q2)) <= 1e-9,
                              action=lambda: harness.publish_state(NAMES, Q2, QD))
    for msg in harness.inbox["gravity"][before:]:
        assert min(rel(msg.effort, REF.gravity(Q)), rel(msg.effort, REF.gravity(Q2))) <= 1e-9
    assert harness.spin_until(lambda: any(
        diagnostic_value(d, "messages_rejected") == str(len(bad)) for d in harness.inbox["diagnostics"]))
    for msg in harness.inbox["gravity"]:
        assert all(math.isfinite(v) for v in msg.effort)


@pytest.mark.parametrize("harness", [{"stale_timeout": 0.15}], indirect=True)
def test_stale_input_stops_commands_and_fresh_input_resumes_them(harness):
    harness.stream("gravity")
    # every complete state stream() published taken first: one still queued behind a
    # starved joint-state thread would be fresh input after the node's timer found the
    # joints stale (it was: 5 commands here under a loaded suite)
    harness.settle()
    # one publisher keeps sending three joints; the other three go silent until the node
    # finds them stale (on a joint state: the event, once)
    part = [0, 1, 2]
    controller = harness.node.controller
    assert harness.spin_until(lambda: controller.counts["stale"] > 0, action=lambda: (
        harness.publish_state([NAMES[i] for i in part], Q[part], QD[part])))
    commands = controller.counts["commands"]
    for _ in range(5):                                # stale: no command for any of these
        harness.send_and_wait([NAMES[i] for i in part], Q[part], QD[part])
    assert controller.counts["commands"] == commands
    assert harness.spin_until(lambda: any(e.kind == "stale" for e in harness.inbox["events"]))
    assert harness.spin_until(lambda: any(
        "stale" in diagnostic_status(d).message for d in harness.inbox["diagnostics"]))
    harness.stream("gravity")                          # everything fresh again: resumes
    assert controller.counts["commands"] > commands


@pytest.mark.parametrize("harness", [{"torque_limit_scale": 0.1}], indirect=True)
def test_commands_are_clamped_to_the_effort_limits(harness):
    msg = harness.stream("gravity")
    bound = 0.1 * ROBOT.effort_limit
    g = REF.gravity(Q)
    np.testing.assert_allclose(msg.effort, np.clip(g, -bound, bound), rtol=1e-9, atol=1e-12)
    assert np.any(np.abs(g) > bound) and harness.node.controller.counts["clamped"] > 0


# the control law itself: no ramp, and a start farther than the default tolerance admitted
LAW = {"max_torque_rate": [1e9], "start_tolerance": [0.5]}


@pytest.mark.parametrize("harness", [{"kp": [50.0], "kd": [10.0], **LAW}], indirect=True)
def test_computed_torque_tracks_a_trajectory_with_the_control_law(harness):
    harness.stream("command")
    assert harness.node.controller.mode == "gravity"   # no desired motion yet
    goal = Q + 0.2
    traj = JointTrajectory(joint_names=NAMES[::-1])    # reordered on purpose
    traj.points = [JointTrajectoryPoint(positions=list(goal[::-1]),
                                        time_from_start=rclpy.duration.Duration(
                                            seconds=0.0).to_msg())]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: harness.node.controller.mode == "tracking")
    msg = harness.stream("command_state", count=2)
    Kp, Kd = 50.0, 10.0
    expected = (REF.mass_matrix(Q) @ (Kp * (goal - Q) + Kd * (0.0 - QD))
                + REF.bias(Q, QD))
    assert rel(msg.effort, np.clip(expected, -ROBOT.effort_limit, ROBOT.effort_limit)) <= 1e-9


@pytest.mark.parametrize("harness", [LAW], indirect=True)
def test_set_point_topic_gives_computed_torque(harness):
    harness.stream("gravity")
    goal = Q - 0.1
    harness.set_point.publish(JointState(name=NAMES, position=list(goal)))
    assert harness.spin_until(lambda: harness.node.controller.mode == "tracking")
    msg = harness.stream("command_state", count=2)
    expected = REF.mass_matrix(Q) @ (100.0 * (goal - Q) + 20.0 * (0.0 - QD)) + REF.bias(Q, QD)
    assert rel(msg.effort, np.clip(expected, -ROBOT.effort_limit, ROBOT.effort_limit)) <= 1e-9


@pytest.mark.parametrize("harness", [{"marker_rate": 20.0}], indirect=True)
def test_markers_and_tip_wrench(harness):
    """The mass a person feels at the tip, its centres of mass, the table of gravity
    torques; the ellipsoid's semi-axis along each of its axes u is the mass a push along u
    accelerates (F / (u · J_v M⁻¹ J_vᵀ u F): Pinocchio's forward dynamics from rest under
    the push alone) × the documented scale (a quarter of the reach per the arm's mass)."""
    harness.stream("markers")
    markers = harness.inbox["markers"][-1].markers
    namespaces = {m.ns for m in markers}
    assert namespaces == {"reflected_mass", "centre_of_mass", "gravity_torques",
                          "speed_margin"}
    reach = 0.1625 + 0.425 + 0.3922 + 0.1333 + 0.0997 + 0.0996          # rd_ur5e's DH offsets
    mass = 3.761 + 8.058 + 2.846 + 1.37 + 1.3 + 0.365                    # its link masses
    (ellipsoid,) = [m for m in markers if m.ns == "reflected_mass"]
    o = ellipsoid.pose.orientation
    axes = Rotation.from_quat([o.x, o.y, o.z, o.w]).as_matrix()
    q = harness.node.controller.measured_state()[0]
    J_v = REF.jacobian(q)[:3]
    for k, semi in enumerate(np.array([ellipsoid.scale.x, ellipsoid.scale.y,
                                       ellipsoid.scale.z]) / 2.0):
        u = axes[:, k]
        push = J_v.T @ (10.0 * u)                                         # 10 N along u
        a = J_v @ REF.forward_dynamics(q, np.zeros(6), push + REF.gravity(q))
        assert semi == pytest.approx(0.25 * reach / mass * 10.0 / (u @ a), rel=1e-6)
    (table,) = [m for m in markers if m.ns == "gravity_torques"]
    assert all(f"{name}: {t:+.2f} N·m" in table.text for name, t in zip(NAMES, REF.gravity(q)))
    com = [m for m in markers if m.ns == "centre_of_mass"]
    assert [m.header.frame_id for m in com] == list(ROBOT.body_links)
    np.testing.assert_allclose([com[1].pose.position.x, com[1].pose.position.y,
                                com[1].pose.position.z], ROBOT.com[1])
    wrench = harness.stream("wrench")
    assert wrench.header.frame_id == "tool0"
    R, _ = REF.tip_pose(Q)
    p = REF.operational_space(Q, np.zeros(6)).gravity_wrench
    np.testing.assert_allclose([wrench.wrench.force.x, wrench.wrench.force.y,
                                wrench.wrench.force.z], R.T @ p[:3], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("harness", [{"marker_rate": 20.0, "monitored_links": ["forearm_link"],
                                      "safety_planes": [0.0, 0.0, 0.9, 0.0, 0.0, -1.0]}],
                         indirect=True)
def test_safety_planes_and_watched_points_are_drawn(harness):
    """A safety plane (z ≤ 0.9 m allowed) is a square whose z axis is its normal, about the
    point of the plane above the tool; the tool and the monitored forearm point are spheres
    where Pinocchio puts them, green while they move at under half the speed a contact
    allows (here a tenth: from Pinocchio's J and M and the standard's transient formula)."""
    import pinocchio as pin
    from conftest import SHIPPED
    harness.stream("markers")
    markers = harness.inbox["markers"][-1].markers
    q, qd = harness.node.controller.measured_state()
    (square,) = [m for m in markers if m.ns == "safety_planes"]
    o = square.pose.orientation
    np.testing.assert_allclose(Rotation.from_quat([o.x, o.y, o.z, o.w]).as_matrix()[:, 2],
                               [0.0, 0.0, -1.0], atol=1e-12)
    tip = REF.tip_pose(q)[1]
    np.testing.assert_allclose([square.pose.position.x, square.pose.position.y,
                                square.pose.position.z], [tip[0], tip[1], 0.9], atol=1e-12)
    model = pin.buildModelFromUrdf(str(SHIPPED / "rd_ur5e.urdf"))
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    M = pin.crba(model, data, q)
    spheres = [m for m in markers if m.ns == "speed_margin"]
    for sphere, frame in zip(spheres, ("tool0", "forearm_link")):
        f = model.getFrameId(frame)
        np.testing.assert_allclose([sphere.pose.position.x, sphere.pose.position.y,
                                    sphere.pose.position.z], data.oMf[f].translation,
                                   atol=1e-9)
        J_v = pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)[:3]
        v = J_v @ qd
        w = J_v.T @ v / np.linalg.norm(v)
        m_R = 1.0 / (w @ np.linalg.solve(M, w))
        v_max = min(2 * F / np.sqrt(k * m_R * m_H / (m_R + m_H)) for F, k, m_H in (
            (140, 75e3, 0.6), (160, 40e3, 2.0), (150, 30e3, 3.0), (140, 25e3, 40.0),
            (110, 10e3, 40.0), (210, 35e3, 40.0)))
        assert np.linalg.norm(v) / v_max < 0.5
        assert (sphere.color.r, sphere.color.g, sphere.color.b) == pytest.approx(
            (0.1, 0.8, 0.2))
    assert len(spheres) == 2


@pytest.mark.parametrize("harness", [{"friction_compensation": True,
                                      "viscous_friction": [0.5],
                                      "coulomb_friction": [1.0, 1.0, 1.0, 0.2, 0.2, 0.2]}],
                         indirect=True)
def test_friction_compensation_adds_viscous_and_coulomb_torque(harness):
    msg = harness.stream("gravity")
    coulomb = np.array([1.0, 1.0, 1.0, 0.2, 0.2, 0.2])
    expected = REF.gravity(Q) + 0.5 * QD + coulomb * np.tanh(QD / 0.01)
    assert rel(msg.effort, expected) <= 1e-9
    # turned off at run time: back to gravity alone
    assert harness.node.set_parameters([Parameter("friction_compensation", value=False)])[
        0].successful
    assert rel(harness.stream("gravity", count=2).effort, REF.gravity(Q)) <= 1e-9


def test_the_payload_in_use_is_on_a_latched_topic():
    """~/payload (transient local): a subscriber that comes after start-up gets the start-up
    payload, then every change ~/set_payload makes."""
    from geometry_msgs.msg import InertiaStamped
    h = Harness(backend="pinocchio", payload_link="tool0", payload_mass=1.5,
                payload_com=[0.0, 0.01, 0.1], payload_inertia=[0.01, 0.0, 0.0, 0.02, 0.0, 0.03])
    try:
        h.stream("gravity")                                  # the node is up and running
        got = []
        h.peer.create_subscription(InertiaStamped, f"{h.node.get_fully_qualified_name()}/payload",
                                   got.append, QoSProfile(
                                       depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        assert h.spin_until(lambda: len(got) == 1)
        start = got[0]
        assert start.header.frame_id == "tool0" and start.inertia.m == 1.5
        assert (start.inertia.com.y, start.inertia.com.z) == (0.01, 0.1)
        assert (start.inertia.ixx, start.inertia.iyy, start.inertia.izz) == (0.01, 0.02, 0.03)
        assert h.call(SetPayload, "set_payload", SetPayload.Request(link="tool0",
                                                                    mass=0.0)).success
        assert h.spin_until(lambda: len(got) == 2)
        assert got[1].header.frame_id == "tool0" and got[1].inertia.m == 0.0
    finally:
        h.close()

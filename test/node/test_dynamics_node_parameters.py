"""dynamics_node's parameters and description: validation, every parameter's value, the
cross-check and model warnings on /diagnostics, the description from its topic or a whole
robot's, remapping.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported)."""

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String

import robo_dynamics as rd
from conftest import example_robot, needs_example_robots, rel, SHIPPED

from node_harness import (NAMES, Q, QD, REF, Harness, backend, diagnostic_status,  # noqa: F401 (fixtures)
                          diagnostic_value, harness, ros_context)


def test_parameters_are_validated(harness):
    node = harness.node
    bad = [Parameter("kp", value=[1.0, 2.0]), Parameter("torque_limit_scale", value=1.5),
           Parameter("stale_timeout", value=-1.0), Parameter("kd", value=[-1.0]),
           Parameter("max_torque_rate", value=[0.0]), Parameter("start_tolerance", value=[-1.0]),
           Parameter("max_tracking_error", value=[math.inf]),
           Parameter("velocity_limit_scale", value=2.0), Parameter("hold_damping", value=[1.0] * 5)]
    for parameter in bad:
        assert not node.set_parameters([parameter])[0].successful
    assert not node.set_parameters([Parameter("backend", value="rnea")])[0].successful  # read-only
    assert not node.set_parameters([Parameter("thread_priority", value=5)])[0].successful
    for read_only in (Parameter("max_payload_mass", value=1e12),
                      Parameter("allow_model_changes", value=False)):
        assert not node.set_parameters([read_only])[0].successful
    for parameter in (Parameter("constraints.elbow_joint.trajectory", value=-0.1),
                      Parameter("constraints.elbow_joint.goal", value=math.nan),
                      Parameter("constraints.goal_time", value=-1.0),
                      Parameter("action_monitor_rate", value=0.0),
                      Parameter("stop_deceleration", value=[0.0]),
                      Parameter("body_regions", value=["head"]),
                      Parameter("body_regions", value=[""]),
                      Parameter("contact_type", value="soft"),
                      Parameter("safety_planes", value=[0.6, 0.0, 0.0, 1.0, 0.0, 0.0]),
                      Parameter("safety_planes", value=[0.6, 0.0, 0.0, 1.0, 0.0]),
                      Parameter("safety_stop_category", value=0),
                      Parameter("tool_speed_limit", value=-0.1)):
        assert not node.set_parameters([parameter])[0].successful, parameter.name
    refused = node.set_parameters([Parameter("safety_stop_category", value=3)])[0]
    assert "safety_stop_category must be one of [1, 2]" in refused.reason, refused.reason
    assert node.set_parameters([Parameter("safety_stop_category", value=1),
                                Parameter("tool_speed_limit", value=0.2)])[0].successful
    settings = node.controller.settings
    assert settings.stop_category == 1 and settings.contact.caps[0] == 0.2
    refused = node.set_parameters([Parameter("safety_planes",            # base beyond it
                                             value=[0.6, 0.0, 0.0, 1.0, 0.0, 0.0])])[0]
    assert "leaves the arm's base (base_link's origin) on its forbidden side" in refused.reason
    assert node.set_parameters([Parameter("safety_planes",
                                          value=[0.6, 0.0, 0.0, -1.0, 0.0, 0.0])])[0].successful
    assert node.controller.settings.planes[0].normal == (-1.0, 0.0, 0.0)
    assert node.set_parameters([Parameter("constraints.elbow_joint.goal",
                                          value=0.05)])[0].successful
    assert node.set_parameters([Parameter("kp", value=[10.0] * 6)])[0].successful
    np.testing.assert_array_equal(node.controller.settings.kp, [10.0] * 6)
    assert node.set_parameters([Parameter("max_torque_rate", value=[50.0])])[0].successful
    np.testing.assert_array_equal(node.controller.limiter.rate, [50.0] * 6)
    descriptors = node.describe_parameters(["kp", "stale_timeout", "robot_description"])
    assert all(d.description for d in descriptors)


def test_every_parameter_has_a_value_and_an_empty_optional_one_is_unset(harness):
    """`ros2 param get/dump` answer from get_parameters: every parameter has a typed value
    (an optional one, unset, is an empty array); a value of the wrong type is refused with
    a reason; setting [] again restores the default (None: hold_decay_rate's law)."""
    from robo_dynamics.ros import parameters
    node = harness.node
    for name in parameters.DYNAMICS_NODE:
        assert node.get_parameter(name).type_ != Parameter.Type.NOT_SET, name
    optional = [n for n, spec in parameters.DYNAMICS_NODE.items() if spec.default is None]
    assert "hold_damping" in optional and "command_joints" in optional
    for name in optional:
        assert list(node.get_parameter(name).value) == [], name
    for described in node.describe_parameters(optional):
        assert described.dynamic_typing and "empty array: unset" in described.description
    assert node.controller.settings.hold_damping is None
    for wrong in ("abc", 5.0, [1, 2, 3, 4, 5, 6], [True] * 6, ["a"] * 6):
        result = node.set_parameters([Parameter("hold_damping", value=wrong)])[0]
        assert not result.successful and "hold_damping must be an array of doubles" in \
            result.reason, (wrong, result.reason)
    assert node.set_parameters([Parameter("hold_damping", value=[3.0])])[0].successful
    np.testing.assert_array_equal(node.controller.settings.hold_damping, [3.0] * 6)
    assert node.set_parameters([Parameter("hold_damping", value=[])])[0].successful
    assert node.controller.settings.hold_damping is None


@pytest.mark.parametrize("harness", [{"cross_check_rate": 20.0, "diagnostics_rate": 20.0}],
                         indirect=True)
def test_cross_check_is_reported_on_diagnostics(harness):
    """The cross-check is done on the joint-state thread, a step per state: states keep
    coming while the test waits for its report."""
    harness.stream_until("diagnostics", lambda d: diagnostic_value(d, "cross_check_gravity") is not None)
    harness.stream("gravity", count=5)
    status = diagnostic_status(harness.inbox["diagnostics"][-1])
    assert status.level == DiagnosticStatus.OK, status.message
    assert float(diagnostic_value(harness.inbox["diagnostics"][-1],
                        "cross_check_max_relative_difference")) < 1e-9
    assert float(diagnostic_value(harness.inbox["diagnostics"][-1], "input_rate_hz")) > 0
    last = harness.inbox["diagnostics"][-1]
    assert 0 < float(diagnostic_value(last, "callback_p50_us")) <= float(diagnostic_value(last, "callback_max_us"))
    # the time up to the command's publication is a part of each callback's
    assert 0 < float(diagnostic_value(last, "command_p50_us")) <= float(diagnostic_value(last, "command_max_us"))
    assert float(diagnostic_value(last, "command_max_us")) <= float(diagnostic_value(last, "callback_max_us"))
    # the observer's own time is a part of each callback's: so is each of its percentiles
    for rank in ("p50", "p99", "max"):
        assert 0 < float(diagnostic_value(last, f"observer_{rank}_us")) <= float(
            diagnostic_value(last, f"callback_{rank}_us"))


@pytest.mark.parametrize("harness", [{"cross_check_rate": 20.0, "diagnostics_rate": 20.0,
                                      "cross_check_tolerance": 1e-300}], indirect=True)
def test_disagreement_above_tolerance_is_an_error(harness):
    assert harness.spin_until(lambda: any(
        diagnostic_status(d).level == DiagnosticStatus.ERROR for d in harness.inbox["diagnostics"]),
        action=lambda: harness.publish_state(NAMES, Q, QD))


def test_description_from_the_transient_local_topic():
    publisher_node = rclpy.create_node("description_publisher")
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    publisher = publisher_node.create_publisher(String, "/robot_description", qos)
    publisher.publish(String(data=(SHIPPED / "planar_2link.urdf").read_text()))
    h = Harness(robot_description_file="")
    h.executor.add_node(publisher_node)
    try:
        assert h.spin_until(lambda: h.node.model is not None)
        assert h.node.model.joint_names == ("joint1", "joint2")
        q = np.array([0.4, -0.7])
        msg = h.stream("gravity", names=["joint1", "joint2"], q=q, qd=[0.0, 0.0])
        g = rd.make_solver(rd.load_robot(SHIPPED / "planar_2link.urdf"), "pinocchio").gravity(q)
        assert rel(msg.effort, g) <= 1e-9
    finally:
        h.close()
        publisher_node.destroy_node()


def test_remapped_joint_states_and_node_name_reach_the_helper_node():
    """joint_states is taken by a helper node (joint_state_thread.py): it must follow the
    node's own remapping and name, given as node arguments."""
    h = Harness(node_args=["--ros-args", "-r", "__node:=left_arm_dynamics",
                           "-r", "joint_states:=/left/joint_states"])
    try:
        node = h.node
        assert node.joint_states.topic == "/left/joint_states"
        assert node.joint_states.node.get_name() == "left_arm_dynamics_joint_states"
        assert h.joint_states.topic_name == "/left/joint_states"
        msg = h.stream("gravity")       # the peer listens on /left_arm_dynamics/...
        assert rel(np.array(msg.effort), REF.gravity(Q)) <= 1e-9
    finally:
        h.close()


# -- real-world URDFs (example-robot-data) -------------------------------------------------
TIAGO = example_robot("tiago_description/robots/tiago.urdf")


ALLEGRO = example_robot("allegro_hand_description/urdf/allegro_right_hand.urdf")


@needs_example_robots
def test_tiago_torso_and_arm_from_the_whole_robot_description():
    """The whole TIAGo (mobile base, head, hand, textures, transmissions): the node controls
    torso + arm, takes joint states of every joint of the robot and ignores the others."""
    robot = rd.load_robot(TIAGO, base_link="torso_fixed_link", tip_link="arm_7_link")
    reference = rd.make_solver(robot, "pinocchio")
    every_joint = [j.get("name") for j in ET.parse(TIAGO).getroot().findall("joint")
                   if j.get("type") != "fixed"]
    q_chain = np.linspace(0.05, 0.6, robot.dof) * np.where(robot.upper > 0.5, 1.0, 0.1)
    q_all = [q_chain[robot.joint_names.index(name)] if name in robot.joint_names else 0.3
             for name in every_joint]
    h = Harness(robot_description_file=str(TIAGO), base_link="torso_fixed_link",
                tip_link="arm_7_link")
    try:
        message = h.stream("gravity", names=every_joint, q=q_all, qd=None)
        assert list(message.name) == list(robot.joint_names)
        assert rel(message.effort, reference.gravity(q_chain)) <= 1e-9
        assert h.node.controller.rejected == 0
    finally:
        h.close()


@needs_example_robots
@pytest.mark.parametrize("harness", [{"robot_description_file": str(ALLEGRO),
                                      "tip_link": "link_3.0_tip", "diagnostics_rate": 20.0}],
                         indirect=True)
def test_model_warnings_are_on_diagnostics(harness):
    with pytest.warns(rd.ModelWarning, match="link_3.0"):
        robot = rd.load_robot(ALLEGRO, tip_link="link_3.0_tip")
    assert robot.warnings
    names, q = list(robot.joint_names), np.linspace(0.1, 0.4, robot.dof)
    message = harness.stream("gravity", names=names, q=q, qd=None)
    assert rel(message.effort, rd.make_solver(robot, "pinocchio").gravity(q)) <= 1e-9

    def shows_warnings():
        harness.publish_state(names, q)
        return bool(harness.inbox["diagnostics"]) and diagnostic_status(
            harness.inbox["diagnostics"][-1]).level == DiagnosticStatus.OK
    assert harness.spin_until(shows_warnings)
    last = harness.inbox["diagnostics"][-1]
    for i, note in enumerate(robot.warnings, start=1):
        assert diagnostic_value(last, f"model_warning_{i}") == note
    assert "warning(s) about the robot description" in diagnostic_status(last).message


@pytest.mark.parametrize("harness", [{"diagnostics_rate": 20.0}], indirect=True)
def test_the_tools_speed_limit_next_to_a_person_is_reported(harness):
    """/diagnostics carries the tool's speed at the streamed state (J_v q̇, Pinocchio), the
    mass it carries along that motion (what a push along it accelerates: Pinocchio's
    forward dynamics) and the speed a transient contact with the most restrictive body
    region allows, 2 F_qs / √(μ k) (ISO/TS 15066 Annex A)."""
    harness.stream_until("diagnostics",
                         lambda d: diagnostic_value(d, "tool_speed_limit") is not None)
    last = harness.inbox["diagnostics"][-1]
    J_v = REF.jacobian(Q)[:3]
    v = J_v @ QD
    u = v / np.linalg.norm(v)
    accel = J_v @ REF.forward_dynamics(Q, np.zeros(6), J_v.T @ u + REF.gravity(Q))
    m_R = 1.0 / (u @ accel)                                  # 1 N along u
    assert diagnostic_value(last, "tool_speed") == f"{np.linalg.norm(v):.3g} m/s"
    assert diagnostic_value(last, "tool_reflected_mass") == f"{m_R:.3g} kg"   # shown digits
    limits = {name: 2 * f / np.sqrt(k / (1 / m_H + 1 / m_R)) for name, (f, k, m_H) in {
        "hand": (140, 75e3, 0.6), "forearm": (160, 40e3, 2.0), "upper_arm": (150, 30e3, 3.0),
        "chest": (140, 25e3, 40.0), "abdomen": (110, 10e3, 40.0),
        "back_shoulders": (210, 35e3, 40.0)}.items()}
    region = min(limits, key=limits.get)
    assert diagnostic_value(last, "tool_speed_limit") == \
        f"{limits[region]:.3g} m/s ({region}, transient)"
    assert diagnostic_value(last, "speed_scaling") == "1"      # nothing tracked
    from rclpy.parameter import Parameter
    assert harness.node.set_parameters([Parameter("body_regions", value=["chest"]),
                                        Parameter("contact_type", value="clamped")])[0].successful
    harness.stream_until("diagnostics", lambda d: "clamped" in (
        diagnostic_value(d, "tool_speed_limit") or ""))
    assert diagnostic_value(harness.inbox["diagnostics"][-1], "tool_speed_limit") == \
        f"{140 / np.sqrt(m_R * 25e3):.3g} m/s (chest, clamped)"         # F_qs / √(m_R k)


def test_a_urdf_without_limits_is_refused_unless_the_parameters_give_them(ros):
    """A URDF that leaves a joint's effort limit 0 (drivers' URDFs do, e.g. the Dobot
    MG400's): the node does not start, naming the joint and the parameter to give; given
    effort_limits, it starts and clamps at them (× torque_limit_scale)."""
    from rclpy.parameter import Parameter
    from robo_dynamics.ros.dynamics_node.node import DynamicsNode
    from conftest import SHIPPED
    text = (SHIPPED / "planar_2link.urdf").read_text().replace('effort="100"', 'effort="0"')
    with pytest.raises(ValueError, match=r"joint1 an effort limit of 0: give the arm's "
                                            r"limits with the parameter effort_limits"):
        DynamicsNode(parameter_overrides=[Parameter("robot_description", value=text)])
    node = DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=text), Parameter("effort_limits", value=[80.0, 40.0]),
        Parameter("torque_limit_scale", value=0.5)])
    try:
        np.testing.assert_array_equal(node.controller.settings.effort_bound, [40.0, 20.0])
    finally:
        node.destroy_node()


@pytest.mark.parametrize("harness", [{"diagnostics_rate": 20.0,
                                      "monitored_links": ["forearm_link"],
                                      "monitored_offsets": [0.0, 0.0, 0.1]}], indirect=True)
def test_a_monitored_points_speed_limit_is_reported(harness):
    """A point 0.1 m along the forearm's z, monitored: /diagnostics carries its speed, the
    mass it carries along its motion and the speed allowed, from Pinocchio's Jacobian of a
    frame put there, its M(q) and the standard's transient formula."""
    import pinocchio as pin
    from conftest import SHIPPED
    harness.stream_until("diagnostics",
                         lambda d: diagnostic_value(d, "forearm_link_speed_limit") is not None)
    last = harness.inbox["diagnostics"][-1]
    model = pin.buildModelFromUrdf(str(SHIPPED / "rd_ur5e.urdf"))
    forearm = model.frames[model.getFrameId("forearm_link")]
    model.addFrame(pin.Frame("point", forearm.parentJoint, forearm.placement *
                             pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1])),
                             pin.FrameType.OP_FRAME))
    data = model.createData()
    pin.computeJointJacobians(model, data, Q)
    J_v = pin.getFrameJacobian(model, data, model.getFrameId("point"),
                               pin.LOCAL_WORLD_ALIGNED)[:3]
    v = J_v @ QD
    u = v / np.linalg.norm(v)
    w = J_v.T @ u
    m_R = 1.0 / (w @ np.linalg.solve(pin.crba(model, data, Q), w))
    limits = {name: 2 * f / np.sqrt(k / (1 / m_H + 1 / m_R)) for name, (f, k, m_H) in {
        "hand": (140, 75e3, 0.6), "forearm": (160, 40e3, 2.0), "upper_arm": (150, 30e3, 3.0),
        "chest": (140, 25e3, 40.0), "abdomen": (110, 10e3, 40.0),
        "back_shoulders": (210, 35e3, 40.0)}.items()}
    region = min(limits, key=limits.get)
    assert diagnostic_value(last, "forearm_link_speed") == f"{np.linalg.norm(v):.3g} m/s"
    assert diagnostic_value(last, "forearm_link_reflected_mass") == f"{m_R:.3g} kg"
    assert diagnostic_value(last, "forearm_link_speed_limit") == \
        f"{limits[region]:.3g} m/s ({region}, transient)"


def test_a_monitored_link_the_chain_lacks_is_refused(ros):
    """monitored_links naming a link that is not a moving link of the chain, or radii that
    do not fit the links: the node does not start, naming the parameter and why."""
    from rclpy.parameter import Parameter
    from robo_dynamics.ros.dynamics_node.node import DynamicsNode
    from conftest import SHIPPED
    with pytest.raises(ValueError, match=r"monitored_links: link 'base_link' is not a moving "
                                            r"link of the chain; choose one of \['link1'"):
        DynamicsNode(parameter_overrides=[
            Parameter("robot_description_file", value=str(SHIPPED / "planar_2link.urdf")),
            Parameter("monitored_links", value=["base_link"])])
    with pytest.raises(ValueError, match=r"monitored_radii needs 1 value or 1 per monitored "
                                            r"link \(2\), got 3"):
        DynamicsNode(parameter_overrides=[
            Parameter("robot_description_file", value=str(SHIPPED / "planar_2link.urdf")),
            Parameter("monitored_links", value=["link1", "link2"]),
            Parameter("monitored_radii", value=[0.05, 0.05, 0.05])])

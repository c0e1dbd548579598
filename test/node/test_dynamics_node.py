"""The dynamics node in-process: messages in, torques and Λ out, services, safety.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported).
"""

import contextlib
import errno
import math
import os
import sys
import threading
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

import robo_dynamics as rd
from robo_dynamics.backends.cross_check import CrossCheckSteps
from robo_dynamics.ros.dynamics_node import joint_state_thread
from robo_dynamics.control.solver_set import CROSS_CHECKED
from robo_dynamics.control.rate_limit import MAX_INTERVAL
from robo_dynamics_interfaces.msg import ControllerEvent
from robo_dynamics_interfaces.srv import (ComputeDynamics, ForwardDynamics, InverseDynamics,
                                          SetPayload)
import ros_harness
from conftest import example_robot, needs_example_robots, rel, SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
NAMES = list(ROBOT.joint_names)
REF = rd.make_solver(ROBOT, "pinocchio")
Q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
QD = np.array([0.2, -0.1, 0.3, 0.0, -0.2, 0.1])
HANG_GUARD = 30.0    # s: only against a hang; the waits end when the event happens


@pytest.fixture(scope="module", autouse=True)
def ros_context(ros):
    yield


class Harness(ros_harness.Harness):
    """The dynamics node on rd_ur5e unless told otherwise, streaming (NAMES, Q, QD)."""

    def __init__(self, **params):
        params.setdefault("robot_description_file", URDF)
        super().__init__(default_state=(NAMES, Q, QD), **params)


@pytest.fixture(params=rd.BACKENDS)
def backend(request):
    """Every node test runs with each backend computing what the node publishes."""
    return request.param


@pytest.fixture
def harness(request, backend):
    h = Harness(backend=backend, **getattr(request, "param", {}))
    yield h
    h.close()



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
        _value(d, "messages_rejected") == str(len(bad)) for d in harness.inbox["diagnostics"]))
    for msg in harness.inbox["gravity"]:
        assert all(math.isfinite(v) for v in msg.effort)


@pytest.mark.parametrize("harness", [{"stale_timeout": 0.15}], indirect=True)
def test_stale_input_stops_commands_and_fresh_input_resumes_them(harness):
    harness.stream("gravity")
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
        "stale" in _status(d).message for d in harness.inbox["diagnostics"]))
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


def test_inverse_and_forward_dynamics_services(harness):
    qdd = np.array([0.5, -0.3, 0.2, 1.0, -1.0, 0.4])
    order = NAMES[::-1]
    response = harness.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        joint_names=order, positions=list(Q[::-1]), velocities=list(QD[::-1]),
        accelerations=list(qdd[::-1])))
    assert response.success and list(response.joint_names) == order
    expected = REF.inverse_dynamics(Q, QD, qdd)
    assert rel(response.effort, expected[::-1]) <= 1e-9

    request = InverseDynamics.Request(positions=list(Q), use_tip_wrench=True)
    request.tip_wrench.header.frame_id = "tool0"
    request.tip_wrench.wrench.force.z = 10.0
    response = harness.call(InverseDynamics, "inverse_dynamics", request)
    f_tip = np.array([0, 0, 10.0, 0, 0, 0])
    expected = REF.gravity(Q) + REF.jacobian(Q, "local").T @ f_tip
    assert response.success and rel(response.effort, expected) <= 1e-9

    tau = np.array([1.0, 20.0, 5.0, 1.0, 0.5, 0.1])
    response = harness.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        positions=list(Q), velocities=list(QD), efforts=list(tau)))
    assert response.success and rel(response.accelerations, REF.forward_dynamics(Q, QD, tau)) \
        <= 1e-9


@pytest.mark.parametrize("harness", [{"armature": [0.4, 0.4, 0.3, 0.1, 0.1, 0.1]}],
                         indirect=True)
def test_a_declared_armature_is_in_the_services_and_in_lambda(harness):
    """armature: τ and q̈ of the services and the published Λ are Pinocchio's with the same
    rotor inertia as its model.armature (a wrong or missing armature is 0.1 N·m or more)."""
    reference = rd.make_solver(ROBOT.with_armature([0.4, 0.4, 0.3, 0.1, 0.1, 0.1]), "pinocchio")
    qdd = np.array([0.5, -0.3, 0.2, 1.0, -1.0, 0.4])
    response = harness.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        positions=list(Q), velocities=list(QD), accelerations=list(qdd)))
    assert response.success and rel(response.effort, reference.inverse_dynamics(Q, QD, qdd)) \
        <= 1e-9
    tau = np.array([1.0, 20.0, 5.0, 1.0, 0.5, 0.1])
    response = harness.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        positions=list(Q), velocities=list(QD), efforts=list(tau)))
    assert response.success and rel(response.accelerations,
                                    reference.forward_dynamics(Q, QD, tau)) <= 1e-9
    lam = harness.stream("lambda")
    assert rel(np.reshape(lam.lambda_matrix, (6, 6)),
               reference.operational_space_inertia(Q)) <= 1e-9


def test_compute_dynamics_service(harness):
    response = harness.call(ComputeDynamics, "compute_dynamics",
                            ComputeDynamics.Request(positions=list(Q), velocities=list(QD)))
    assert response.success and response.dof == 6
    assert rel(np.reshape(response.mass_matrix, (6, 6)), REF.mass_matrix(Q)) <= 1e-9
    assert rel(response.coriolis, REF.bias(Q, QD) - REF.gravity(Q)) <= 1e-9
    assert rel(response.gravity, REF.gravity(Q)) <= 1e-9
    assert rel(np.reshape(response.jacobian, (6, 6)), REF.jacobian(Q)) <= 1e-9
    assert rel(np.reshape(response.operational_space_inertia, (6, 6)),
               REF.operational_space_inertia(Q)) <= 1e-9
    assert response.jacobian_frame == "base_link" and response.tip_frame == "tool0"


@pytest.mark.parametrize("kind, name, request_msg, fragment", [
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(positions=[0.0] * 5),
     "positions: expected 6 values, got 5"),
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        joint_names=NAMES[:5] + ["nope"], positions=[0.0] * 6), "unknown ['nope']"),
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        positions=[math.nan] + [0.0] * 5), "positions: values must be finite"),
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        positions=[0.0] * 6, velocities=[1.0]), "velocities: expected 6 values, got 1"),
    (ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(positions=[0.0] * 6),
     "efforts: expected 6 values, got 0"),
    (ComputeDynamics, "compute_dynamics", ComputeDynamics.Request(
        joint_names=NAMES + NAMES[:1], positions=[0.0] * 7), "duplicates"),
    (SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=-1.0),
     "mass must be finite, >= 0"),
    (SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1e12),
     "<= max_payload_mass (5.0 kg), got 1000000000000.0"),
    (SetPayload, "set_payload", SetPayload.Request(link="nowhere", mass=1.0),
     "'nowhere' is not a moving link"),
    (SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1.0, ixx=0.1, iyy=0.1,
                                                   izz=0.5), "triangle inequality"),
])
def test_bad_service_requests_answer_false_with_a_message(harness, kind, name, request_msg,
                                                          fragment):
    response = harness.call(kind, name, request_msg)
    assert not response.success and fragment in response.message
    harness.stream("gravity")                           # the node still works


def test_payload_service_changes_torques_by_the_payload_weight(harness):
    before = np.array(harness.stream("gravity").effort)
    response = harness.call(SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1.0))
    assert response.success
    after = np.array(harness.stream("gravity", count=3).effort)
    J_v = REF.jacobian(Q)[:3]
    expected = before - J_v.T @ (1.0 * ROBOT.gravity)
    np.testing.assert_allclose(after, expected, rtol=0, atol=1e-9)
    response = harness.call(SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=0.0))
    assert response.success and "removed" in response.message
    np.testing.assert_allclose(harness.stream("gravity", count=3).effort, before, atol=1e-9)


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
                      Parameter("stop_deceleration", value=[0.0])):
        assert not node.set_parameters([parameter])[0].successful, parameter.name
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
    harness.stream_until("diagnostics", lambda d: _value(d, "cross_check_gravity") is not None)
    harness.stream("gravity", count=5)
    status = _status(harness.inbox["diagnostics"][-1])
    assert status.level == DiagnosticStatus.OK, status.message
    assert float(_value(harness.inbox["diagnostics"][-1],
                        "cross_check_max_relative_difference")) < 1e-9
    assert float(_value(harness.inbox["diagnostics"][-1], "input_rate_hz")) > 0
    last = harness.inbox["diagnostics"][-1]
    assert 0 < float(_value(last, "callback_p50_us")) <= float(_value(last, "callback_max_us"))
    # the time up to the command's publication is a part of each callback's
    assert 0 < float(_value(last, "command_p50_us")) <= float(_value(last, "command_max_us"))
    assert float(_value(last, "command_max_us")) <= float(_value(last, "callback_max_us"))
    # the observer's own time is a part of each callback's: so is each of its percentiles
    for rank in ("p50", "p99", "max"):
        assert 0 < float(_value(last, f"observer_{rank}_us")) <= float(
            _value(last, f"callback_{rank}_us"))


@pytest.mark.parametrize("harness", [{"cross_check_rate": 20.0, "diagnostics_rate": 20.0,
                                      "cross_check_tolerance": 1e-300}], indirect=True)
def test_disagreement_above_tolerance_is_an_error(harness):
    assert harness.spin_until(lambda: any(
        _status(d).level == DiagnosticStatus.ERROR for d in harness.inbox["diagnostics"]),
        action=lambda: harness.publish_state(NAMES, Q, QD))


@pytest.mark.parametrize("harness", [{"marker_rate": 20.0}], indirect=True)
def test_markers_and_tip_wrench(harness):
    harness.stream("markers")
    markers = harness.inbox["markers"][-1].markers
    namespaces = {m.ns for m in markers}
    assert namespaces == {"lambda_ellipsoid", "centre_of_mass", "gravity_torque"}
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


def _joint_state_handled_meanwhile(harness):
    """Publish a joint state and wait (hang guard: HANG_GUARD s) until the node has handled
    it: True when it did, i.e. when the joint-state thread was not kept waiting."""
    before = harness.handled()
    harness.publish_state(NAMES, Q, QD)
    deadline = time.monotonic() + HANG_GUARD
    while harness.handled() == before and time.monotonic() < deadline:
        time.sleep(0.001)
    return harness.handled() > before


@pytest.mark.parametrize("harness", [{"diagnostics_rate": 20.0}], indirect=True)
def test_joint_states_do_not_wait_for_markers_diagnostics_or_a_trajectory_being_read(
        harness, monkeypatch):
    """Building rviz2 markers or /diagnostics and reading a desired trajectory take
    milliseconds on the main executor; all happen outside the node's lock, so joint states
    are handled meanwhile (here: one is sent and handled while each is in progress). The
    interpreter lock too: another thread running Python keeps it at most
    GIL_SWITCH_INTERVAL."""
    from robo_dynamics.ros import conversions
    from robo_dynamics.ros.dynamics_node import diagnostics, markers
    harness.stream("command")
    assert sys.getswitchinterval() <= joint_state_thread.GIL_SWITCH_INTERVAL
    outcome = {}
    build, read, entry = (markers.marker_array, conversions.trajectory_from_msg,
                          diagnostics.KeyValue)

    def slow_diagnostics(**fields):       # each value of /diagnostics becomes a KeyValue
        if "diagnostics" not in outcome:   # the first of the first report
            outcome["diagnostics"] = _joint_state_handled_meanwhile(harness)
        return entry(**fields)

    def slow_markers(*args):
        outcome.setdefault("markers", _joint_state_handled_meanwhile(harness))
        return build(*args)

    def slow_trajectory(*args):
        outcome.setdefault("trajectory", _joint_state_handled_meanwhile(harness))
        return read(*args)

    monkeypatch.setattr(markers, "marker_array", slow_markers)
    monkeypatch.setattr(conversions, "trajectory_from_msg", slow_trajectory)
    monkeypatch.setattr(diagnostics, "KeyValue", slow_diagnostics)
    assert harness.spin_until(lambda: "diagnostics" in outcome)
    assert outcome["diagnostics"], "a joint state waited for /diagnostics"
    harness.stream_until("markers", lambda m: "markers" in outcome)   # not one sent before
    traj = JointTrajectory(joint_names=NAMES)
    traj.points = [JointTrajectoryPoint(positions=list(Q), time_from_start=Duration(sec=1))]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: "trajectory" in outcome)
    assert outcome == {"markers": True, "diagnostics": True, "trajectory": True}


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


def _status(diagnostic_array):
    return diagnostic_array.status[0]


def _value(diagnostic_array, key):
    for kv in _status(diagnostic_array).values:
        if kv.key == key:
            return kv.value
    return None


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


@pytest.mark.parametrize("harness", [{"use_sim_time": True}], indirect=True)
def test_simulated_time_drives_staleness_and_the_node_clock(harness):
    """With use_sim_time the node's clock is /clock (not the system clock it reads directly
    otherwise): joint states stop being fresh when simulated time moves past stale_timeout,
    however little real time passes."""
    from rosgraph_msgs.msg import Clock
    clock = harness.peer.create_publisher(Clock, "/clock", 10)

    def tick(seconds):       # both the node's clock and the joint-state thread's (its _now)
        clock.publish(Clock(clock=Time(seconds=seconds).to_msg()))
        ns = Time(seconds=seconds).nanoseconds
        assert harness.spin_until(lambda: harness.node.get_clock().now().nanoseconds == ns and
                                  abs(harness.node.now() - seconds) < 1e-9)
    tick(1000.0)
    harness.stream("gravity")
    harness.settle()          # every state sent is taken: none arrives after the jump below
    harness.spin_until(lambda: harness.node.outputs.system_time is False and
                       abs(harness.node.now() - 1000.0) < 1e-6)
    assert abs(harness.node.now() - 1000.0) < 1e-6
    timeout = harness.node.get_parameter("stale_timeout").value
    tick(1000.0 + 10 * timeout)                       # simulated time jumps; no new state
    assert harness.node.controller.input_age(harness.node.now()) == pytest.approx(10 * timeout)


def test_joint_states_that_stop_are_reported_stale_without_another_state(harness):
    """The stream's end is on ~/events when the states stop, not when they come back:
    nothing is published while the test waits for it."""
    harness.stream("gravity", count=3)
    sent = harness.sequence
    assert harness.spin_until(lambda: any(e.kind == "stale" for e in harness.inbox["events"]))
    assert harness.sequence == sent
    stale = [e for e in harness.inbox["events"] if e.kind == "stale"]
    assert len(stale) == 1 and "command stream stopped" in stale[0].message
    assert not harness.node.controller.running


@pytest.mark.parametrize("harness", [{"use_sim_time": True}], indirect=True)
def test_a_simulated_clock_that_stops_and_runs_again_is_on_the_events(harness):
    from rosgraph_msgs.msg import Clock
    from robo_dynamics.ros.dynamics_node.input_watch import CLOCK_PERIOD
    clock = harness.peer.create_publisher(Clock, "/clock", 10)
    assert harness.spin_until(lambda: harness.node.count_subscribers("/clock") >= 1)
    clock.publish(Clock(clock=Time(seconds=7.0).to_msg()))
    harness.stream("gravity")               # a controller: the clock is watched from now
    kinds = lambda: [e.kind for e in harness.inbox["events"]]     # noqa: E731
    patience = harness.node.input_watch.clock_watch.patience
    assert harness.spin_until(lambda: "clock_stopped" in kinds(),
                              timeout=patience + 10 * CLOCK_PERIOD + 5.0)
    event = [e for e in harness.inbox["events"] if e.kind == "clock_stopped"][0]
    assert "stood at t = 7.000 s" in event.message and event.level == event.WARN
    clock.publish(Clock(clock=Time(seconds=7.5).to_msg()))
    assert harness.spin_until(lambda: "clock_resumed" in kinds())
    assert kinds().count("clock_stopped") == 1


@pytest.mark.parametrize("harness", [{"use_sim_time": True}], indirect=True)
def test_a_state_is_handled_on_the_clock_sent_before_it(harness):
    """A simulation in lockstep sends /clock, then the state of that time: the node handles
    each state at that time, not the step before (the joint-state thread takes /clock)."""
    from rosgraph_msgs.msg import Clock
    clock = harness.peer.create_publisher(Clock, "/clock", 10)
    # one subscriber in the node's process: its joint-state thread drives both clocks
    assert harness.spin_until(lambda: harness.node.count_subscribers("/clock") >= 1)
    for k in range(1, 101):
        t = 1000.0 + 0.002 * k
        clock.publish(Clock(clock=Time(seconds=t).to_msg()))
        harness.send_and_wait(NAMES, Q, QD)
        assert abs(harness.node.controller.last_state_time - t) < 1e-9, k
        # the main node's clock (its timers, /diagnostics) follows the same /clock
        assert abs(harness.node.get_clock().now().nanoseconds * 1e-9 - t) < 1e-9, k


@pytest.mark.parametrize("harness", [{"use_sim_time": True}], indirect=True)
def test_a_state_whose_clock_comes_after_it_is_handled_at_its_own_time(harness):
    """/clock and the state travel on two topics: under load the state of a step can be
    taken before its /clock. It is then handled at its stamp (within CLOCK_LAG of the
    clock), not on the clock of the step before; a stamp further ahead is not trusted."""
    from rosgraph_msgs.msg import Clock
    from ros_harness import state
    clock = harness.peer.create_publisher(Clock, "/clock", 10)
    assert harness.spin_until(lambda: harness.node.count_subscribers("/clock") >= 1)
    clock.publish(Clock(clock=Time(seconds=500.0).to_msg()))
    assert harness.spin_until(lambda: abs(harness.node.now() - 500.0) < 1e-9)
    for ahead, handled_at in ((0.002, 500.002), (5.0, 500.0)):
        msg = state(NAMES, Q, QD)
        msg.header.stamp = Time(seconds=500.0 + ahead).to_msg()
        before = harness.handled()
        harness.joint_states.publish(msg)            # before its /clock
        assert harness.spin_until(lambda: harness.handled() > before)
        assert abs(harness.node.controller.last_state_time - handled_at) < 1e-9, ahead
    assert joint_state_thread.CLOCK_LAG < 5.0


@pytest.mark.parametrize("epoch", [0, 1_795_695_000_123_456_789])  # [ns] from 0; wall clock
def test_a_state_is_handled_at_the_same_time_to_the_bit_whichever_comes_first(epoch):
    """The state of a lockstep step and its /clock carry the same stamp: the time the
    state is handled at must not depend, even in its last bit, on which of the two the
    node took first (a loaded machine reorders them), or the loop's figures would."""
    from builtin_interfaces.msg import Time as Stamp
    from robo_dynamics.ros.conversions import seconds
    period = 2_000_000                                  # [ns] 500 Hz
    for k in range(1, 2001):
        ns = epoch + k * period
        stamp = Stamp(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
        clock_first = joint_state_thread.state_time(ns * 1e-9, seconds(stamp), True)  # now()
        state_first = joint_state_thread.state_time((ns - period) * 1e-9, seconds(stamp), True)
        assert clock_first == state_first == ns * 1e-9, k


def test_without_simulated_time_the_node_clock_is_the_system_clock(harness):
    harness.stream("gravity", count=3)
    assert harness.node.outputs.system_time
    # the node's clock reading lies between two readings of its ROS clock (system time)
    before = harness.node.get_clock().now().nanoseconds
    now = harness.node.now()
    after = harness.node.get_clock().now().nanoseconds
    assert before * 1e-9 - 1e-6 <= now <= after * 1e-9 + 1e-6


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


def _thread_scheduling(harness):
    """(policy, priority) of the node's joint-state thread, read back from the kernel."""
    tid = harness.node.joint_states.thread.native_id
    return os.sched_getscheduler(tid), os.sched_getparam(tid).sched_priority


@pytest.mark.parametrize("harness", [{"thread_priority": 10, "diagnostics_rate": 20.0}],
                         indirect=True)
def test_thread_priority_puts_the_joint_state_thread_on_sched_fifo(harness):
    if not joint_state_thread.fifo_permitted(1):
        pytest.skip("this process may not use SCHED_FIFO (the refusal is tested below)")
    assert rel(harness.stream("gravity").effort, REF.gravity(Q)) <= 1e-9
    assert _thread_scheduling(harness) == (os.SCHED_FIFO, 10)
    assert os.sched_getscheduler(0) == os.SCHED_OTHER        # only that thread changed
    assert harness.spin_until(lambda: harness.inbox["diagnostics"] and _value(
        harness.inbox["diagnostics"][-1], "joint_state_thread") == "SCHED_FIFO 10")


@pytest.mark.parametrize("harness", [{"thread_priority": 10, "cross_check_rate": 50.0,
                                      "diagnostics_rate": 20.0}], indirect=True)
def test_cross_check_steps_give_way_on_the_normal_scheduler(harness, monkeypatch):
    """At SCHED_FIFO each cross-check step runs on the normal scheduler (it must not keep a
    core from the process waiting for the command), and the thread goes back to its
    priority after it. Both are read on the thread itself, in the step and just after the
    block that gives way: read from here, a step may be under way at that moment."""
    if not joint_state_thread.fifo_permitted(1):
        pytest.skip("this process may not use SCHED_FIFO (the refusal is tested below)")
    seen, after, step = [], [], CrossCheckSteps.step
    joint_states = harness.node.joint_states
    give_way = joint_states.giving_way

    def recorded(steps):
        seen.append((threading.get_native_id(), os.sched_getscheduler(0)))
        step(steps)

    @contextlib.contextmanager
    def observed():
        with give_way():
            yield
        after.append((threading.get_native_id(), os.sched_getscheduler(0),
                      os.sched_getparam(0).sched_priority))
    monkeypatch.setattr(CrossCheckSteps, "step", recorded)
    monkeypatch.setattr(joint_states, "giving_way", observed)
    harness.stream_until("diagnostics", lambda d: _value(d, "cross_check_momentum_terms")
                         is not None)
    thread = joint_states.thread.native_id
    assert len(seen) >= 2 * len(CROSS_CHECKED) and len(after) >= 2 * len(CROSS_CHECKED)
    assert set(seen) == {(thread, os.SCHED_OTHER)}
    assert set(after) == {(thread, os.SCHED_FIFO, 10)}
    assert float(_value(harness.inbox["diagnostics"][-1],
                        "cross_check_max_relative_difference")) < 1e-9


def test_refused_thread_priority_warns_and_runs_on(monkeypatch):
    def refuse(pid, policy, param):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(joint_state_thread.os, "sched_setscheduler", refuse)
    harness = Harness(thread_priority=10, diagnostics_rate=20.0)
    try:
        assert rel(harness.stream("gravity").effort, REF.gravity(Q)) <= 1e-9
        assert _thread_scheduling(harness)[0] == os.SCHED_OTHER
        assert harness.spin_until(lambda: harness.inbox["diagnostics"] and _value(
            harness.inbox["diagnostics"][-1], "joint_state_thread")
            == "normal (SCHED_FIFO 10 refused: Operation not permitted)")
    finally:
        harness.close()


def test_default_joint_state_thread_is_on_the_normal_scheduler(harness):
    harness.stream("gravity")
    assert _thread_scheduling(harness) == (os.SCHED_OTHER, 0)


# -- the safety envelope through ROS ------------------------------------------------------------
class SimulatedClock:
    """Drives the node's clock (use_sim_time) so that the time between two commands is known
    exactly: publish /clock, wait until the node's clock shows it, then send a joint state
    and wait for the command it gives."""

    def __init__(self, harness):
        from rosgraph_msgs.msg import Clock
        self.harness, self.Clock = harness, Clock
        self.clock = harness.peer.create_publisher(Clock, "/clock", 10)
        self.log = []        # (t, command in model order) of every command received

    def set(self, t):
        h = self.harness
        self.clock.publish(self.Clock(clock=Time(seconds=t).to_msg()))
        ns = Time(seconds=t).nanoseconds
        assert h.spin_until(lambda: h.node.get_clock().now().nanoseconds == ns)

    def state(self, t, q=Q, qd=np.zeros(6), expect_command=True):
        h = self.harness
        self.set(t)
        c = h.node.controller
        if expect_command and (not c.running or
                               t - c.last_state_time > c.settings.stale_timeout):
            h.send_and_wait(NAMES, q, qd)    # the stream (re)starts on the second state
        count = len(h.inbox["command_state"])
        if not expect_command:
            commands = h.node.controller.counts["commands"]
            h.send_and_wait(NAMES, q, qd)
            assert h.node.controller.counts["commands"] == commands
            return None
        h.publish_state(NAMES, q, qd)
        assert h.spin_until(lambda: len(h.inbox["command_state"]) > count)
        command = np.array(h.inbox["command_state"][-1].effort)
        self.log.append((t, command))
        return command


def assert_rate_limited(log, rate):
    times = np.array([t for t, _ in log])
    commands = np.array([c for _, c in log])
    allowed = rate * np.minimum(np.diff(times), MAX_INTERVAL)
    step = np.abs(np.diff(commands, axis=0))
    assert np.all(step <= allowed[:, None] + 1e-9), (step / allowed[:, None]).max()


SIM = {"use_sim_time": True, "max_torque_rate": [1000.0], "kp": [400.0], "kd": [40.0],
       "diagnostics_rate": 50.0, "cross_check_rate": 0.0}


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_input_rate_counts_the_states_of_the_last_second_of_the_node_clock(harness):
    """/diagnostics input_rate_hz: the joint states accepted within the last second of the
    node's clock; none after the clock went back (simulated time restarting)."""
    clock = SimulatedClock(harness)
    for t in (100.0, 100.05, 100.1, 100.15, 100.2):
        clock.set(t)
        harness.send_and_wait(NAMES, Q)

    def rate_at(t):
        """input_rate_hz of the first report made at node time t (the clock set to t)."""
        clock.set(t)
        start = len(harness.inbox["diagnostics"])
        ns = Time(seconds=t).nanoseconds
        at_t = lambda: [d for d in harness.inbox["diagnostics"][start:]     # noqa: E731
                        if Time.from_msg(d.header.stamp).nanoseconds == ns]
        assert harness.spin_until(at_t), f"no /diagnostics at t = {t}"
        return int(_value(at_t()[0], "input_rate_hz"))
    assert rate_at(100.9) == 5
    assert rate_at(101.125) == 2       # 100.0, 100.05, 100.1 are more than 1 s old
    clock.set(50.0)                    # the clock goes back; the timer runs on from there
    assert rate_at(50.1) == 0


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_commands_never_change_faster_than_the_limit_across_source_switches(harness):
    clock = SimulatedClock(harness)
    t = 100.0
    node = harness.node

    def run(steps, q=Q):
        nonlocal t
        for _ in range(steps):
            t += 0.002
            clock.state(t, q)
    run(60)                                           # start-up: a ramp from zero to g(q)
    assert rel(clock.log[-1][1], REF.gravity(Q)) <= 1e-9
    harness.set_point.publish(JointState(name=NAMES, position=list(Q + 0.009)))
    assert harness.spin_until(lambda: node.controller.mode == "tracking")
    run(40)                                           # gravity -> computed torque
    traj = JointTrajectory(joint_names=NAMES)
    traj.header.stamp = Time(seconds=t).to_msg()
    traj.points = [JointTrajectoryPoint(positions=list(Q), time_from_start=Duration(sec=0)),
                   JointTrajectoryPoint(positions=list(Q + [0, 0.3, 0, 0, 0, 0]),
                                        time_from_start=Duration(sec=2))]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: node.controller.motion is not None
                              and hasattr(node.controller.motion, "times"))
    run(40)                                           # a new trajectory
    assert harness.call(SetPayload, "set_payload",
                        SetPayload.Request(link="tool0", mass=4.0)).success
    run(40)                                           # a payload
    assert node.set_parameters([Parameter("kp", value=[3000.0])])[0].successful
    run(40)                                           # a gain change
    t += 0.5                                          # 0.5 s without joint states
    run(60)                                           # resumed: the motion is abandoned
    assert node.controller.mode == "hold"
    kinds = [e.kind for e in harness.inbox["events"]]
    assert kinds[:2] == ["started", "tracking"] and "model" in kinds
    # the gap in the motion ends it for the hold: seen by the node's watch on the clock
    # (stale, safe_hold, then resumed), or, when the state after the jump comes before the
    # watch looks, on resuming (resumed, safe_hold); the same commands either way
    assert kinds[-2:] in (["resumed", "safe_hold"], ["safe_hold", "resumed"]), kinds
    assert_rate_limited(clock.log, 1000.0)
    # and the ramps really were needed: the targets jumped by more than one step allows
    assert node.controller.counts["rate_limited"] >= 5


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_a_set_point_two_radians_away_is_refused_with_the_reason(harness):
    clock = SimulatedClock(harness)
    for k in range(5):
        clock.state(50.0 + 0.002 * k)
    far = Q + [2.0, 0, 0, 0, 0, 0]
    harness.set_point.publish(JointState(name=NAMES, position=list(far)))
    assert harness.spin_until(lambda: any(e.kind == "refused" for e in harness.inbox["events"]))
    event = [e for e in harness.inbox["events"] if e.kind == "refused"][-1]
    assert event.level == ControllerEvent.WARN and event.mode == "gravity"
    assert "shoulder_pan_joint" in event.message and "start_tolerance" in event.message
    assert harness.node.controller.mode == "gravity"
    before = clock.log[-1][1]
    after = clock.state(50.010)                       # the command did not move towards far
    assert np.max(np.abs(after - before)) <= 1000.0 * 0.002 + 1e-9
    clock.set(50.1)
    assert harness.spin_until(lambda: _value(harness.inbox["diagnostics"][-1],
                                             "desired_motions_refused") == "1")


@pytest.mark.parametrize("harness", [SIM], indirect=True)
def test_velocity_fault_gives_the_safe_hold_on_the_same_joint_state(harness):
    clock = SimulatedClock(harness)
    t = 10.0
    for k in range(60):
        t += 0.002
        clock.state(t)
    last = clock.log[-1][1]
    qd = np.zeros(6)
    qd[1] = 1.2 * ROBOT.velocity_limit[1]
    t += 0.002
    command = clock.state(t, Q, qd)                   # the joint state that shows the fault
    # the documented hold: M(q)(−λ q̇) + C(q, q̇) q̇ + g(q), λ = 20/s on the moving shoulder
    # (Pinocchio's M, C, g), its torques within what this cycle's command can reach (the
    # effort limits and one 2 ms step at 1000 N m/s from the last command): the joints
    # whose torque would leave that range held at its edge, in turn, and the others'
    # accelerations kept (docs/node.md): M_FF a_F + M_FS a_S = τ_F − h_F
    M, h = REF.mass_matrix(Q), REF.coriolis_matrix(Q, qd) @ qd + REF.gravity(Q)
    lo = np.maximum(last - 2.0, -ROBOT.effort_limit)
    hi = np.minimum(last + 2.0, ROBOT.effort_limit)
    a = -20.0 * qd
    expected, S = h + M @ a, np.zeros(6, dtype=bool)
    while np.any(((expected < lo) | (expected > hi)) & ~S):
        S |= (expected < lo) | (expected > hi)
        s_, f_ = np.flatnonzero(S), np.flatnonzero(~S)
        expected[s_] = np.clip(expected[s_], lo[s_], hi[s_])
        a_S = np.linalg.solve(M[np.ix_(s_, s_)],
                              expected[s_] - h[s_] - M[np.ix_(s_, f_)] @ a[f_])
        expected[f_] = h[f_] + M[np.ix_(f_, f_)] @ a[f_] + M[np.ix_(f_, s_)] @ a_S
    assert S.any() and not S.all()                     # the rule is exercised
    np.testing.assert_allclose(command, expected, rtol=0, atol=1e-9)
    assert harness.spin_until(lambda: any(e.kind == "safe_hold" for e in harness.inbox["events"]))
    event = [e for e in harness.inbox["events"] if e.kind == "safe_hold"][-1]
    assert event.level == ControllerEvent.ERROR and "shoulder_lift_joint" in event.message
    clock.set(t + 0.05)
    assert harness.spin_until(lambda: _status(harness.inbox["diagnostics"][-1]).level
                              == DiagnosticStatus.ERROR)
    assert "safe hold" in _status(harness.inbox["diagnostics"][-1]).message


@pytest.mark.parametrize("harness", [{**SIM, "hold_timeout": 0.1}], indirect=True)
def test_a_hold_that_does_not_stop_the_arm_stops_the_commands(harness):
    """The joint stays beyond its velocity bound in the hold: commands until hold_timeout,
    then none, a hold_failed ERROR event and ERROR on /diagnostics."""
    clock = SimulatedClock(harness)
    t = 10.0
    for k in range(5):
        t += 0.002
        clock.state(t)
    qd = np.zeros(6)
    qd[5] = 1.2 * ROBOT.velocity_limit[5]
    for k in range(45):                               # 0.088 s of the hold: it commands
        t += 0.002
        clock.state(t, Q, qd)
    t += 0.02
    clock.state(t, Q, qd, expect_command=False)      # 0.108 s, beyond hold_timeout
    clock.state(t + 0.002, Q, qd, expect_command=False)
    assert harness.spin_until(lambda: any(e.kind == "hold_failed"
                                          for e in harness.inbox["events"]))
    event = [e for e in harness.inbox["events"] if e.kind == "hold_failed"][-1]
    assert event.level == ControllerEvent.ERROR and "wrist_3_joint" in event.message
    clock.set(t + 0.05)
    assert harness.spin_until(lambda: "commands stopped: safe hold failed" in _status(
        harness.inbox["diagnostics"][-1]).message)


@pytest.mark.parametrize("harness", [{**SIM, "stale_timeout": 1.0}], indirect=True)
def test_tracking_fault_gives_the_safe_hold_and_a_new_motion_leaves_it(harness):
    clock = SimulatedClock(harness)
    t = 20.0
    clock.state(t)
    traj = JointTrajectory(joint_names=NAMES)        # joint 3 to move 1 rad in 1 s
    traj.header.stamp = Time(seconds=t).to_msg()
    traj.points = [JointTrajectoryPoint(positions=list(Q), time_from_start=Duration(sec=0)),
                   JointTrajectoryPoint(positions=list(Q + [0, 0, 1.0, 0, 0, 0]),
                                        time_from_start=Duration(sec=1))]
    harness.trajectory.publish(traj)
    assert harness.spin_until(lambda: harness.node.controller.mode == "tracking")
    clock.state(t + 0.248)                             # the arm stays put: error 0.248 rad
    assert harness.node.controller.mode == "tracking"
    clock.state(t + 0.252)                             # 0.252 rad > 0.25: hold
    assert harness.node.controller.mode == "hold"
    assert "elbow_joint" in harness.node.controller.hold_reason
    harness.set_point.publish(JointState(name=NAMES, position=list(Q)))
    assert harness.spin_until(lambda: harness.node.controller.mode == "tracking")


@pytest.mark.parametrize("harness", [{"allow_model_changes": False}], indirect=True)
def test_model_changes_can_be_disabled(harness):
    response = harness.call(SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1.0))
    assert not response.success and "allow_model_changes" in response.message
    assert harness.node.solver.model.payloads == ()


def test_start_up_payload_above_the_bound_refuses_to_start():
    with pytest.raises(ValueError, match="exceeds max_payload_mass"):
        Harness(payload_link="tool0", payload_mass=1e12)


def test_a_service_that_fails_on_a_bug_logs_it_and_answers_false(harness, monkeypatch):
    logged = []

    def broken(*args):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(harness.node.solver, "forward_dynamics", broken)
    monkeypatch.setattr(type(harness.node.get_logger()), "error",
                        lambda self, text, **kw: logged.append(text))
    response = harness.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        positions=list(Q), velocities=list(QD), efforts=[0.0] * 6))
    assert not response.success and "internal error (ZeroDivisionError: a bug)" in response.message
    assert logged and "Traceback" in logged[0] and "ZeroDivisionError" in logged[0]


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
        return bool(harness.inbox["diagnostics"]) and _status(
            harness.inbox["diagnostics"][-1]).level == DiagnosticStatus.OK
    assert harness.spin_until(shows_warnings)
    last = harness.inbox["diagnostics"][-1]
    for i, note in enumerate(robot.warnings, start=1):
        assert _value(last, f"model_warning_{i}") == note
    assert "warning(s) about the robot description" in _status(last).message


@pytest.mark.parametrize("harness", [{"use_sim_time": True}], indirect=True)
def test_a_subscriber_that_comes_after_simulated_time_went_back_gets_the_commands(harness):
    """Outputs are published only to subscribers, counted every 0.1 s of node time. When
    simulated time restarts (jumps back), they are counted again at once: a subscriber that
    appeared meanwhile is served without waiting for simulated time to catch up."""
    from rosgraph_msgs.msg import Clock
    clock = harness.peer.create_publisher(Clock, "/clock", 10)
    topic = "/dynamics_node/commanded_torques"
    for subscription in list(harness.peer.subscriptions):
        if subscription.topic_name == topic:
            harness.peer.destroy_subscription(subscription)
    assert harness.spin_until(
        lambda: harness.node.outputs.command_state.get_subscription_count() == 0)
    clock.publish(Clock(clock=Time(seconds=1000.0).to_msg()))
    harness.stream("gravity", count=5)                     # counted at t = 1000 s: nobody
    late = []
    harness.peer.create_subscription(JointState, topic, late.append, 10)
    assert harness.spin_until(
        lambda: harness.node.outputs.command_state.get_subscription_count() == 1)
    for k in range(50):                                     # simulated time restarts at 100 s
        clock.publish(Clock(clock=Time(seconds=100.0 + 0.01 * k).to_msg()))
        harness.stream("gravity")
        if late:
            break
    assert late and list(late[-1].name) == NAMES


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

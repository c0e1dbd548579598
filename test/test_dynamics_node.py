"""The dynamics node in-process: messages in, torques and Λ out, services, safety.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported).
"""

import errno
import math
import os
import time

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import MarkerArray
from geometry_msgs.msg import WrenchStamped

import robo_dynamics as rd
from robo_dynamics.ros import joint_state_thread
from robo_dynamics.ros.dynamics_node import DynamicsNode
from robo_dynamics_interfaces.msg import OperationalSpaceInertia
from robo_dynamics_interfaces.srv import (ComputeDynamics, ForwardDynamics, InverseDynamics,
                                          SetPayload)
from conftest import rel, SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
ROBOT = rd.load_robot(URDF)
NAMES = list(ROBOT.joint_names)
REF = rd.make_solver(ROBOT, "pinocchio")
Q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
QD = np.array([0.2, -0.1, 0.3, 0.0, -0.2, 0.1])


@pytest.fixture(scope="module", autouse=True)
def ros_context():
    rclpy.init()
    yield
    rclpy.shutdown()


class Harness:
    """A dynamics node, a peer node that talks to it, and an executor spinning both."""

    TOPICS = {"gravity": (JointState, "gravity_torques"),
              "gravity_cmd": (Float64MultiArray, "gravity_command"),
              "ct": (JointState, "computed_torques"),
              "ct_cmd": (Float64MultiArray, "computed_torque_command"),
              "lambda": (OperationalSpaceInertia, "operational_space_inertia"),
              "markers": (MarkerArray, "markers"), "wrench": (WrenchStamped, "tip_wrench")}

    def __init__(self, **params):
        params.setdefault("robot_description_file", URDF)
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        self.node = DynamicsNode(parameter_overrides=overrides)
        self.peer = rclpy.create_node("peer")
        self.inbox = {key: [] for key in self.TOPICS}
        self.inbox["diagnostics"] = []
        for key, (kind, topic) in self.TOPICS.items():
            self.peer.create_subscription(kind, f"/dynamics_node/{topic}",
                                          lambda m, key=key: self.inbox[key].append(m), 100)
        self.peer.create_subscription(DiagnosticArray, "/diagnostics",
                                      lambda m: self.inbox["diagnostics"].append(m), 10)
        self.joint_states = self.peer.create_publisher(JointState, "/joint_states", 100)
        self.trajectory = self.peer.create_publisher(JointTrajectory,
                                                     "/dynamics_node/desired_trajectory", 10)
        self.set_point = self.peer.create_publisher(JointState, "/dynamics_node/desired_state",
                                                    10)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.executor.add_node(self.peer)

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.peer.destroy_node()

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def spin_until(self, predicate, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def publish_state(self, names, q, qd=None):
        self.joint_states.publish(JointState(name=list(names), position=list(map(float, q)),
                                             velocity=[] if qd is None else list(map(float, qd))))

    def stream(self, key, names=NAMES, q=Q, qd=QD, count=1, timeout=5.0):
        """Publish the state until `count` messages arrive on `key`; return the last one."""
        start = len(self.inbox[key])
        end = time.monotonic() + timeout
        while len(self.inbox[key]) < start + count and time.monotonic() < end:
            self.publish_state(names, q, qd)
            self.spin(0.01)
        assert len(self.inbox[key]) >= start + count, f"nothing on {key}"
        return self.inbox[key][-1]

    def call(self, kind, name, request):
        client = self.peer.create_client(kind, f"/dynamics_node/{name}")
        assert client.wait_for_service(timeout_sec=5.0)
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=5.0)
        self.peer.destroy_client(client)
        return future.result()


@pytest.fixture
def harness(request):
    params = getattr(request, "param", {})
    h = Harness(**params)
    yield h
    h.close()



def test_gravity_torques_and_lambda_match_pinocchio(harness):
    g_msg = harness.stream("gravity")
    assert list(g_msg.name) == NAMES
    assert rel(g_msg.effort, REF.gravity(Q)) <= 1e-9
    assert rel(harness.inbox["gravity_cmd"][-1].data, REF.gravity(Q)) <= 1e-9
    lam = harness.stream("lambda")
    assert lam.header.frame_id == "base_link" and lam.tip_frame == "tool0"
    expected = REF.operational_space_inertia(Q)
    assert rel(np.reshape(lam.lambda_matrix, (6, 6)), expected) <= 1e-9
    assert not lam.near_singular and 1e3 < lam.condition_number < 1e6


def test_partial_and_reordered_messages_are_merged_by_name(harness):
    """Two publishers, each with half of the joints in its own order."""
    first, second = [5, 2, 0], [3, 1, 4]
    harness.publish_state([NAMES[i] for i in first], Q[first], QD[first])
    harness.spin(0.05)
    assert harness.inbox["gravity"] == []            # incomplete: nothing published yet
    end = time.monotonic() + 5.0
    while len(harness.inbox["gravity"]) < 3 and time.monotonic() < end:
        harness.publish_state([NAMES[i] for i in second], Q[second], QD[second])
        harness.publish_state([NAMES[i] for i in first], Q[first], QD[first])
        harness.spin(0.01)
    assert rel(harness.inbox["gravity"][-1].effort, REF.gravity(Q)) <= 1e-9


@pytest.mark.parametrize("harness", [{"command_joints": ["wrist_3_joint", "elbow_joint",
                                                          "shoulder_pan_joint"]}], indirect=True)
def test_commands_follow_the_controller_joint_order(harness):
    cmd = harness.stream("gravity_cmd")
    g = REF.gravity(Q)
    np.testing.assert_allclose(cmd.data, [g[5], g[2], g[0]], rtol=1e-9, atol=1e-12)
    assert list(harness.inbox["gravity"][-1].name) == ["wrist_3_joint", "elbow_joint",
                                                       "shoulder_pan_joint"]


def test_bad_messages_are_rejected_counted_and_never_published(harness):
    harness.stream("gravity")
    before = len(harness.inbox["gravity"])
    bad = [(NAMES, [math.nan] + list(Q[1:]), None), (NAMES, Q[:5], None),
           (NAMES + ["ghost_joint"], list(Q) + [0.0], None), (NAMES, Q, QD[:3]), ([], [], None)]
    for names, q, qd in bad:
        harness.publish_state(names, q, qd)
    harness.spin(0.3)
    assert len(harness.inbox["gravity"]) == before
    assert harness.node.merger.rejected == len(bad)
    diag = harness.spin_until(lambda: any(
        _value(d, "messages_rejected") == str(len(bad)) for d in harness.inbox["diagnostics"]),
        timeout=3.0)
    assert diag
    for msg in harness.inbox["gravity"]:
        assert all(math.isfinite(v) for v in msg.effort)


@pytest.mark.parametrize("harness", [{"stale_timeout": 0.15}], indirect=True)
def test_stale_input_stops_commands_and_fresh_input_resumes_them(harness):
    harness.stream("gravity")
    # one publisher keeps sending three joints; the other three go silent
    part = [0, 1, 2]
    end = time.monotonic() + 0.6
    while time.monotonic() < end:
        harness.publish_state([NAMES[i] for i in part], Q[part], QD[part])
        harness.spin(0.01)
    count = len(harness.inbox["gravity"])
    harness.publish_state([NAMES[i] for i in part], Q[part], QD[part])
    harness.spin(0.3)
    assert len(harness.inbox["gravity"]) == count     # stale: stopped
    assert harness.spin_until(lambda: any(
        "stale" in _status(d).message for d in harness.inbox["diagnostics"]), timeout=3.0)
    harness.stream("gravity")                          # everything fresh again: resumes


@pytest.mark.parametrize("harness", [{"torque_limit_scale": 0.1}], indirect=True)
def test_commands_are_clamped_to_the_effort_limits(harness):
    msg = harness.stream("gravity")
    bound = 0.1 * ROBOT.effort_limit
    g = REF.gravity(Q)
    np.testing.assert_allclose(msg.effort, np.clip(g, -bound, bound), rtol=1e-9, atol=1e-12)
    assert np.any(np.abs(g) > bound) and harness.node.clamped > 0


@pytest.mark.parametrize("harness", [{"kp": [50.0], "kd": [10.0]}], indirect=True)
def test_computed_torque_tracks_a_trajectory_with_the_control_law(harness):
    harness.stream("gravity")
    assert harness.inbox["ct"] == []                   # no desired motion yet
    goal = Q + 0.2
    traj = JointTrajectory(joint_names=NAMES[::-1])    # reordered on purpose
    traj.points = [JointTrajectoryPoint(positions=list(goal[::-1]),
                                        time_from_start=rclpy.duration.Duration(
                                            seconds=0.0).to_msg())]
    harness.trajectory.publish(traj)
    harness.spin(0.2)
    msg = harness.stream("ct")
    Kp, Kd = 50.0, 10.0
    expected = (REF.mass_matrix(Q) @ (Kp * (goal - Q) + Kd * (0.0 - QD))
                + REF.bias(Q, QD))
    assert rel(msg.effort, np.clip(expected, -ROBOT.effort_limit, ROBOT.effort_limit)) <= 1e-9


def test_set_point_topic_gives_computed_torque(harness):
    harness.stream("gravity")
    goal = Q - 0.1
    harness.set_point.publish(JointState(name=NAMES, position=list(goal)))
    harness.spin(0.2)
    msg = harness.stream("ct")
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
     "mass must be finite and >= 0"),
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
           Parameter("stale_timeout", value=-1.0), Parameter("kd", value=[-1.0])]
    for parameter in bad:
        assert not node.set_parameters([parameter])[0].successful
    assert not node.set_parameters([Parameter("backend", value="rnea")])[0].successful  # read-only
    assert not node.set_parameters([Parameter("thread_priority", value=5)])[0].successful
    assert node.set_parameters([Parameter("kp", value=[10.0] * 6)])[0].successful
    np.testing.assert_array_equal(node.Kp, [10.0] * 6)
    descriptors = node.describe_parameters(["kp", "stale_timeout", "robot_description"])
    assert all(d.description for d in descriptors)


@pytest.mark.parametrize("harness", [{"cross_check_rate": 20.0, "diagnostics_rate": 20.0}],
                         indirect=True)
def test_cross_check_is_reported_on_diagnostics(harness):
    harness.stream("gravity", count=5)
    assert harness.spin_until(lambda: _value(harness.inbox["diagnostics"][-1],
                                             "cross_check_gravity") not in (None,)
                              if harness.inbox["diagnostics"] else False, timeout=3.0)
    harness.stream("gravity", count=5)
    status = _status(harness.inbox["diagnostics"][-1])
    assert status.level == DiagnosticStatus.OK, status.message
    assert float(_value(harness.inbox["diagnostics"][-1],
                        "cross_check_max_relative_difference")) < 1e-9
    assert float(_value(harness.inbox["diagnostics"][-1], "input_rate_hz")) > 0
    assert 0 < float(_value(harness.inbox["diagnostics"][-1], "callback_p50_us")) <= float(
        _value(harness.inbox["diagnostics"][-1], "callback_max_us"))


@pytest.mark.parametrize("harness", [{"cross_check_rate": 20.0, "diagnostics_rate": 20.0,
                                      "cross_check_tolerance": 1e-300}], indirect=True)
def test_disagreement_above_tolerance_is_an_error(harness):
    assert harness.spin_until(lambda: (harness.publish_state(NAMES, Q, QD) or True) and any(
        _status(d).level == DiagnosticStatus.ERROR for d in harness.inbox["diagnostics"]),
        timeout=5.0)


@pytest.mark.parametrize("harness", [{"marker_rate": 20.0}], indirect=True)
def test_markers_and_tip_wrench(harness):
    harness.stream("markers", timeout=5.0)
    markers = harness.inbox["markers"][-1].markers
    namespaces = {m.ns for m in markers}
    assert namespaces == {"lambda_ellipsoid", "centre_of_mass", "gravity_torque"}
    com = [m for m in markers if m.ns == "centre_of_mass"]
    assert [m.header.frame_id for m in com] == list(ROBOT.body_links)
    np.testing.assert_allclose([com[1].pose.position.x, com[1].pose.position.y,
                                com[1].pose.position.z], ROBOT.com[1])
    wrench = harness.stream("wrench", timeout=5.0)
    assert wrench.header.frame_id == "tool0"
    R, _ = REF.tip_pose(Q)
    p = REF.operational_space(Q, np.zeros(6)).gravity_wrench
    np.testing.assert_allclose([wrench.wrench.force.x, wrench.wrench.force.y,
                                wrench.wrench.force.z], R.T @ p[:3], rtol=1e-7, atol=1e-9)


def test_description_from_the_transient_local_topic():
    publisher_node = rclpy.create_node("description_publisher")
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    publisher = publisher_node.create_publisher(String, "/robot_description", qos)
    publisher.publish(String(data=(SHIPPED / "planar_2link.urdf").read_text()))
    h = Harness(robot_description_file="")
    h.executor.add_node(publisher_node)
    try:
        assert h.spin_until(lambda: h.node.model is not None, timeout=5.0)
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

    def tick(seconds):
        clock.publish(Clock(clock=Time(seconds=seconds).to_msg()))
        harness.spin(0.05)
    tick(1000.0)
    harness.stream("gravity")
    harness.spin_until(lambda: harness.node._system_time is False and
                       abs(harness.node._now() - 1000.0) < 1e-6)
    assert abs(harness.node._now() - 1000.0) < 1e-6
    timeout = harness.node.get_parameter("stale_timeout").value
    tick(1000.0 + 10 * timeout)                       # simulated time jumps; no new state
    assert harness.node.merger.age(harness.node._now()) == pytest.approx(10 * timeout)


def test_without_simulated_time_the_node_clock_is_the_system_clock(harness):
    harness.stream("gravity", count=3)
    assert harness.node._system_time
    assert abs(harness.node._now() - time.time()) < 0.05
    ros_now = harness.node.get_clock().now().nanoseconds * 1e-9
    assert abs(harness.node._now() - ros_now) < 0.05


def test_remapped_joint_states_and_node_name_reach_the_helper_node():
    """joint_states is taken by a helper node (joint_state_thread.py): it must follow the
    node's own remapping and name, given as node arguments."""
    node = DynamicsNode(cli_args=["--ros-args", "-r", "__node:=left_arm_dynamics",
                                  "-r", "joint_states:=/left/joint_states",
                                  "-p", f"robot_description_file:={URDF}"])
    peer = rclpy.create_node("remap_peer")
    inbox = []
    peer.create_subscription(JointState, "/left_arm_dynamics/gravity_torques", inbox.append, 10)
    publisher = peer.create_publisher(JointState, "/left/joint_states", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(peer)
    try:
        assert node.joint_states.topic == "/left/joint_states"
        assert node.joint_states.node.get_name() == "left_arm_dynamics_joint_states"
        end = time.monotonic() + 5.0
        while not inbox and time.monotonic() < end:
            publisher.publish(JointState(name=NAMES, position=Q.tolist()))
            executor.spin_once(timeout_sec=0.01)
        assert inbox, "no gravity torques for joint states on the remapped topic"
        assert rel(np.array(inbox[-1].effort), REF.gravity(Q)) <= 1e-9
    finally:
        executor.shutdown()
        node.destroy_node()
        peer.destroy_node()


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

"""Singular poses, stale and bursty input on the running node."""

import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import robo_dynamics as rd
from robo_dynamics.algorithms.operational_space import KAPPA_MAX
from robo_dynamics.ros.dynamics_node import DynamicsNode
from robo_dynamics_interfaces.msg import OperationalSpaceInertia
from conftest import SHIPPED

UR5E = SHIPPED / "rd_ur5e.urdf"
# exact singular poses: wrist (q5 = 0), elbow stretched (q3 = 0), and both with the wrist
# centre over the base axis is hard to hit exactly, so: wrist, elbow, wrist + elbow
SINGULAR = {
    "wrist": np.array([0.3, -1.0, 1.2, -0.8, 0.0, 0.4]),
    "elbow": np.array([0.3, -1.0, 0.0, -0.8, 1.1, 0.4]),
    "wrist and elbow": np.array([0.0, -1.57, 0.0, 0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("pose", sorted(SINGULAR))
@pytest.mark.parametrize("backend", ["rnea", "pinocchio"])
def test_lambda_is_bounded_at_and_near_singular_poses(pose, backend):
    solver = rd.make_solver(rd.load_robot(UR5E), backend)
    q_singular = SINGULAR[pose]
    J = solver.jacobian(q_singular)
    assert np.linalg.matrix_rank(J, tol=1e-9) < 6
    sigma_1 = None
    for offset in (0.0, 1e-12, 1e-8, 1e-5, 1e-3, 1e-1):
        q = q_singular + offset
        result = solver.operational_space(q, np.zeros(6))
        assert np.all(np.isfinite(result.Lambda)) and np.all(np.isfinite(result.eta))
        assert np.all(np.isfinite(result.gravity_wrench))
        Jq, M = solver.jacobian(q), solver.mass_matrix(q)
        sigma_1 = np.linalg.eigvalsh(Jq @ np.linalg.solve(M, Jq.T)).max()
        assert np.linalg.eigvalsh(result.Lambda).max() <= 1.0001 * KAPPA_MAX / sigma_1
        assert result.near_singular == (result.condition_number > KAPPA_MAX)
        if offset <= 1e-8:
            assert result.near_singular
        if offset >= 1e-1:
            assert not result.near_singular


def test_planar_arm_stretched_out():
    """The 2-link arm at q2 = 0 cannot move its tip along the link, but J (6 × 2) keeps rank
    2 (the tip can still turn about y): the 6-D Λ is regular there and stays finite."""
    solver = rd.make_solver(rd.load_robot(SHIPPED / "planar_2link.urdf"))
    for q2 in (0.0, 1e-10, 1e-6):
        q = np.array([0.4, q2])
        assert np.linalg.matrix_rank(solver.jacobian(q)[[0, 2]], tol=1e-9) == (1 if q2 < 1e-9
                                                                                else 2)
        result = solver.operational_space(q)
        assert np.all(np.isfinite(result.Lambda)) and not result.near_singular


@pytest.fixture
def ros():
    rclpy.init()
    yield
    rclpy.shutdown()


def make_harness(**params):
    node = DynamicsNode(parameter_overrides=[Parameter("robot_description_file", value=str(UR5E)),
                                             Parameter("marker_rate", value=0.0)]
                        + [Parameter(k, value=v) for k, v in params.items()])
    peer = rclpy.create_node("reliability_peer")
    inbox = {"gravity": [], "lambda": []}
    peer.create_subscription(JointState, "/dynamics_node/gravity_torques",
                             lambda m: inbox["gravity"].append((time.monotonic(), m)), 1000)
    peer.create_subscription(OperationalSpaceInertia, "/dynamics_node/operational_space_inertia",
                             lambda m: inbox["lambda"].append(m), 1000)
    pub = peer.create_publisher(JointState, "/joint_states", 1000)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(peer)
    return node, peer, pub, inbox, executor


def spin(executor, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.002)


def test_node_at_singular_poses_publishes_bounded_flagged_lambda_and_limited_torques(ros):
    node, peer, pub, inbox, executor = make_harness()
    names = list(node.model.joint_names)
    try:
        for q in SINGULAR.values():
            for _ in range(5):
                pub.publish(JointState(name=names, position=q.tolist(), velocity=[0.0] * 6))
                spin(executor, 0.02)
        assert len(inbox["lambda"]) >= 10
        for msg in inbox["lambda"]:
            assert msg.near_singular and np.all(np.isfinite(msg.lambda_matrix))
            assert msg.condition_number > KAPPA_MAX
        for _, msg in inbox["gravity"]:
            assert np.all(np.abs(msg.effort) <= node.model.effort_limit)
    finally:
        executor.shutdown()
        node.destroy_node()
        peer.destroy_node()


def test_commands_stop_within_the_timeout_and_resume(ros):
    timeout = 0.1
    node, peer, pub, inbox, executor = make_harness(stale_timeout=timeout)
    names = list(node.model.joint_names)
    q = SINGULAR["wrist"] + 0.3
    try:
        for _ in range(50):                            # a live stream...
            pub.publish(JointState(name=names, position=q.tolist()))
            spin(executor, 0.005)
        last_input = time.monotonic()                  # ...that stops
        spin(executor, 3 * timeout)
        # the last command follows the last input by processing time only (slack for a
        # loaded machine), well within the timeout
        assert inbox["gravity"][-1][0] - last_input <= timeout + 0.05
        count = len(inbox["gravity"])
        spin(executor, 0.2)
        assert len(inbox["gravity"]) == count          # nothing while silent
        for _ in range(10):                            # resumes on fresh data
            pub.publish(JointState(name=names, position=q.tolist()))
            spin(executor, 0.005)
        assert len(inbox["gravity"]) > count
    finally:
        executor.shutdown()
        node.destroy_node()
        peer.destroy_node()


def test_bursts_do_not_grow_queues(ros):
    """A burst of 10× the nominal rate (10 000 messages as fast as they can be sent): the
    subscription keeps the newest 10 (KEEP_LAST), the node keeps up afterwards, memory
    stays put."""
    import resource
    node, peer, pub, inbox, executor = make_harness()
    names = list(node.model.joint_names)
    q = (SINGULAR["elbow"] + 0.5).tolist()
    try:
        spin(executor, 0.2)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for burst in range(10):
            for _ in range(1000):
                pub.publish(JointState(name=names, position=q))
            spin(executor, 0.2)
        accepted = node.received
        assert 0 < accepted <= 10_000
        assert node.errors == 0 and node.controller.merger.rejected == 0
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert rss_after - rss_before < 50_000          # KiB: no unbounded growth
        before = len(inbox["gravity"])
        for _ in range(20):                             # and it still answers promptly
            pub.publish(JointState(name=names, position=q))
            spin(executor, 0.005)
        assert len(inbox["gravity"]) > before
    finally:
        executor.shutdown()
        node.destroy_node()
        peer.destroy_node()

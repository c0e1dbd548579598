"""The shipped palletizer in closed loop over ROS 2: sim_arm simulates the whole linkage in
MuJoCo (its loop an equality constraint, the motors braked until the first command),
dynamics_node runs the motors from the params file's closure, lockstep on simulated time.
The references are MuJoCo's motion and the desired motion."""

import numpy as np
import pytest
import rclpy
import yaml
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from conftest import REPO, flat
from ros_harness import Loop, closed_loop_nodes

pytest.importorskip("mujoco")

URDF = str(REPO / "urdf" / "rd_palletizer.urdf")
SECTION = flat(yaml.safe_load((REPO / "config" / "rd_palletizer.yaml").read_text())[
    "/**/dynamics_node"]["ros__parameters"])
THETA = [0.5, 0.3, -0.3, 0.4]          # rad: base, shoulder, rear, wrist


@pytest.fixture(scope="module")
def loop(ros):
    sim, node = closed_loop_nodes(URDF, THETA, {"engine": "mujoco", "lockstep_max_speed": 0.0,
                                                "brakes": True, **SECTION}, SECTION)
    closed = Loop(sim, node)
    closed.sim, closed.node = sim, node
    closed.peer = closed.add(rclpy.create_node("linkage_client"))
    closed.trajectory = closed.peer.create_publisher(
        JointTrajectory, "/dynamics_node/desired_trajectory", 10)
    assert closed.spin_until(lambda: node.controller is not None and node.controller.running
                             and closed.trajectory.get_subscription_count() > 0, timeout=60.0)
    yield closed
    closed.close()


def now(loop):
    return loop.node.get_clock().now().nanoseconds * 1e-9


def run_for(loop, seconds, each=None):
    """Spin until `seconds` of simulated time have passed; each() after every spin."""
    end = now(loop) + seconds
    assert loop.spin_until(lambda: now(loop) >= end, timeout=300.0,
                           action=each)


def test_gravity_compensation_holds_the_linkage_where_it_was_released(loop):
    """0.5 s of simulated time from the brakes' release: the motors stay within 1e-4 rad of
    where they started (MuJoCo's soft loop settles by about that), the loop closed."""
    run_for(loop, 0.5)
    q = loop.sim.arm.q
    assert np.abs(q - THETA).max() < 1e-4, q - THETA
    assert np.abs(loop.sim.arm.v).max() < 1e-3
    linkage = loop.sim.arm.plant.model.mechanism
    assert np.abs(linkage.constraint(loop.sim.arm.plant.positions())).max() < 1e-5
    assert loop.node.controller.mode == "gravity"


def test_a_desired_trajectory_is_tracked_through_the_loop(loop):
    """Every motor ±0.2 rad in 0.8 s (a quintic from rest to rest), sent on
    ~/desired_trajectory: MuJoCo's motors within 0.5 mrad of it all along (0.14 measured;
    sampled at each spin, at the state's simulated time) and at the goal 0.2 s after."""
    start = loop.sim.arm.q.copy()
    goal = start + 0.2 * (-1.0) ** np.arange(4)
    names = list(loop.node.model.joint_names)
    msg = JointTrajectory(joint_names=names)
    rest = [0.0] * 4
    for t, q in ((0.0, start), (0.8, goal)):
        point = JointTrajectoryPoint(positions=q.tolist(), velocities=rest, accelerations=rest)
        point.time_from_start.sec, point.time_from_start.nanosec = int(t), int(1e9 * (t % 1))
        msg.points.append(point)
    loop.trajectory.publish(msg)
    assert loop.spin_until(lambda: loop.node.controller.mode == "tracking", timeout=30.0)
    errors = []
    run_for(loop, 1.0, each=lambda: errors.append(np.abs(   # at the state's simulated time
        loop.node.controller.desired_state(loop.sim.arm.t)[0] - loop.sim.arm.q).max()))
    print(f"largest tracking error {1e3 * max(errors):.3f} mrad")
    assert max(errors) < 5e-4, max(errors)
    assert np.abs(loop.sim.arm.q - goal).max() < 5e-4
    assert loop.node.controller.mode == "tracking"

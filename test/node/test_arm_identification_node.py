"""~/identify_arm over ROS 2: dynamics_node drives sim_arm — MuJoCo's UR5e with every link's
inertials perturbed by up to 20 %, joint friction, 0.5 N·m sensor noise, lockstep on
simulated time — through the excitation it designs, fits, writes the corrected URDF,
predicts the held-out period better than the URDF it was given and, asked to, uses the
corrected model from then on; a bad goal is refused with its reason."""

import numpy as np
import pytest
import rclpy
from rclpy.action import ActionClient

import robo_dynamics as rd
from robo_dynamics_interfaces.action import IdentifyArm
from conftest import SHIPPED
from robo_dynamics.simulation.perturbed import perturbed_urdf
from ros_harness import Loop, closed_loop_nodes

URDF = SHIPPED / "rd_ur5e.urdf"
ROBOT = rd.load_robot(URDF)
PINOCCHIO = rd.make_solver(ROBOT, "pinocchio")
Q0 = [0.3, -1.2, 1.4, -0.9, 1.2, 0.4]
FRICTION = [3.0, 3.0, 1.0, 0.03, 0.008, 0.0004]       # the plant's, viscous and Coulomb
TIMEOUT = 600.0      # s: a hang guard only; the test waits for the action's result


@pytest.fixture(scope="module")
def loop(ros, tmp_path_factory):
    plant = tmp_path_factory.mktemp("plant") / "perturbed.urdf"
    plant.write_text(perturbed_urdf(URDF, ROBOT, np.random.default_rng(7)))
    sim, node = closed_loop_nodes(str(URDF), Q0, {
        "robot_description_file": str(plant), "engine": "mujoco", "lockstep_max_speed": 0.0,
        "effort_noise": 0.5, "friction": True, "joint_damping": FRICTION,
        "joint_friction": FRICTION},
        # the model error and the friction look like a push to the observer
        {"kp": [400.0], "kd": [40.0], "collision_reaction": "none"})
    closed = Loop(sim, node)
    closed.node, closed.plant = node, str(plant)
    closed.peer = closed.add(rclpy.create_node("arm_identification_client"))
    closed.client = ActionClient(closed.peer, IdentifyArm, "/dynamics_node/identify_arm")
    assert closed.spin_until(lambda: node.controller is not None and node.controller.running
                             and closed.client.server_is_ready(), timeout=60.0)
    yield closed
    closed.close()


def run(loop, **goal):
    sent = loop.client.send_goal_async(IdentifyArm.Goal(**goal))
    assert loop.spin_until(sent.done, timeout=30.0) and sent.result().accepted
    result = sent.result().get_result_async()
    assert loop.spin_until(result.done, timeout=TIMEOUT)
    return result.result().result


def test_a_bad_goal_is_refused_with_its_reason(loop):
    result = run(loop, periods=1)
    assert not result.success and "periods ≥ 2" in result.message


def test_the_node_identifies_the_arm_writes_a_corrected_urdf_and_uses_it(loop, tmp_path):
    """…and with apply, its gravity torques (the node's own solver, after the goal) are at
    least 10 × closer to the plant's than the URDF's, over 200 random poses."""
    output = tmp_path / "identified.urdf"
    poses = np.random.default_rng(0).uniform(-2.0, 2.0, (200, ROBOT.dof))
    truth = rd.make_solver(rd.load_robot(loop.plant), "pinocchio").gravity_batch(poses)
    before = loop.node.solver.gravity_batch(poses) - truth
    result = run(loop, period=5.0, output_urdf=str(output), apply=True)
    assert result.success and result.applied, result.message
    assert result.urdf_error_all >= 0.10
    assert result.identified_error_all <= 0.4 * result.urdf_error_all, result.message
    np.testing.assert_allclose(result.sigma, 0.5, rtol=0.15)          # the sensors' noise
    np.testing.assert_allclose(result.viscous_friction[:3], FRICTION[:3], rtol=0.1)
    corrected = rd.load_robot(str(output))
    np.testing.assert_allclose(corrected.damping, result.viscous_friction, rtol=1e-8)
    # held at rest where it began: the URDF's model held the tool off by its gravity error,
    # the corrected one at least 2 × closer 2 s of simulated time after the swap
    node = loop.node
    assert node.controller.mode == "tracking"

    def tool_off():
        q_d = node.controller.desired_state(node.now())[0]
        tool = PINOCCHIO.tip_pose(node.controller.measured_state()[0])[1]
        return np.linalg.norm(tool - PINOCCHIO.tip_pose(q_d)[1])
    held_off, start = tool_off(), node.now()
    assert loop.spin_until(lambda: node.now() > start + 2.0, timeout=TIMEOUT)
    settled = tool_off()
    print(f"tool held off by {1e3 * held_off:.2f} mm with the URDF, {1e3 * settled:.2f} mm "
          "with the corrected model")
    assert np.abs(node.controller.measured_state()[1]).max() < 0.05
    assert settled * 2.0 <= held_off
    after = loop.node.solver.gravity_batch(poses) - truth
    assert np.sqrt(np.mean(after ** 2)) * 10.0 <= np.sqrt(np.mean(before ** 2))
    np.testing.assert_allclose(loop.node.model.damping, result.viscous_friction, rtol=1e-8)
    print(f"held out: identified {result.identified_error_all:.4f}, URDF "
          f"{result.urdf_error_all:.4f}; {result.message}")


def test_apply_is_refused_before_the_arm_moves_when_model_changes_are_disabled(ros):
    from robo_dynamics.ros.dynamics_node.node import DynamicsNode
    from ros_harness import overrides
    node = DynamicsNode(namespace="/refused", parameter_overrides=overrides(
        {"robot_description_file": str(URDF), "allow_model_changes": False}))
    closed = Loop(node)       # (beside the module's node: a namespace of its own)
    closed.peer = closed.add(rclpy.create_node("arm_identification_refused"))
    closed.client = ActionClient(closed.peer, IdentifyArm, "/refused/dynamics_node/identify_arm")
    try:
        assert closed.spin_until(closed.client.server_is_ready, timeout=60.0)
        result = run(closed, apply=True)
        assert not result.success and not result.applied
        assert "model changes are disabled" in result.message, result.message
    finally:
        closed.close()


def test_destroying_the_node_destroys_every_action_server_while_its_helper_lives(ros):
    """An action server left to the garbage collector is finalised after its node is gone,
    which crashed a test process (SIGSEGV in a collection) once: the helper node that serves
    ~/identify_payload and ~/identify_arm has no waitable left when the node is destroyed."""
    from robo_dynamics.ros.dynamics_node.node import DynamicsNode
    from ros_harness import overrides
    node = DynamicsNode(parameter_overrides=overrides({"robot_description_file": str(URDF)}))
    helpers = [node.identification.node, node.trajectory_action.node]
    assert all(len(list(helper.waitables)) > 0 for helper in helpers)
    node.destroy_node()
    assert all(len(list(helper.waitables)) == 0 for helper in helpers)

"""dynamics_node on a closed linkage: the shipped palletizer (urdf/rd_palletizer.urdf with
config/rd_palletizer.yaml, its motors and loop closure as node parameters). From
/joint_states carrying the motors only, it commands the torques that hold the linkage
(virtual work on its drawing), answers ~/inverse_dynamics and ~/forward_dynamics for the
motors as Pinocchio's constraint dynamics does, publishes the passive joints where the
parallelogram puts them; what it cannot do on a linkage yet is refused with the reason."""

import numpy as np
import pytest
import yaml
from sensor_msgs.msg import JointState

from conftest import REPO, flat
from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import frame_jacobian, frame_pose
from robo_dynamics_interfaces.srv import ForwardDynamics, InverseDynamics, SetPayload
from ros_harness import Harness
from palletizer import MOTORS, closed, holding_torque

URDF = REPO / "urdf" / "rd_palletizer.urdf"
SECTION = yaml.safe_load((REPO / "config" / "rd_palletizer.yaml").read_text())[
    "/**/dynamics_node"]["ros__parameters"]
# rad: base, shoulder, rear, wrist; parked at the shoulder's and the rear's limits, where
# Newton's method from the drawn pose alone closes the loop crossed (issue 58)
THETA = [0.5, -0.8, 0.5, 0.4]
MID = [0.5, 0.3, -0.3, 0.4]     # rad: mid-range, for MuJoCo's loop force and a motion


@pytest.fixture(scope="module")
def node(ros):
    harness = Harness(default_state=(list(MOTORS), THETA, [0.0] * 4), marker_rate=50.0,
                      robot_description_file=str(URDF), **flat(SECTION))
    harness.passive, harness.whole = [], []
    name = harness.node.get_fully_qualified_name()
    harness.peer.create_subscription(JointState, f"{name}/passive_joint_states",
                                     harness.passive.append, 100)
    harness.peer.create_subscription(JointState, f"{name}/joint_states",
                                     harness.whole.append, 100)
    yield harness
    harness.close()


def settled_command(node, attempts=10):
    """The command once the start-up ramp is over: three new ones in a row the same, and the
    stream not stopped meanwhile. (A stream that stopped for stale joint states, or saw a
    gap longer than stale_timeout between two states on a loaded machine, resumes with its
    last command, still on its ramp: two the same.)"""
    inbox, counts = node.inbox["command"], node.node.controller.counts
    for _ in range(attempts):
        stale, start = counts["stale"], len(inbox)
        node.stream_until("command", lambda last: len(inbox) >= start + 3 and list(
            inbox[-3].data) == list(inbox[-2].data) == list(last.data))
        if counts["stale"] == stale:
            return np.array(inbox[-1].data)
    raise AssertionError(f"the stream stopped for stale joint states {attempts} times")


@pytest.fixture(scope="module")
def linkage():
    return load_closed_chain(URDF, parameters=SECTION)


def test_it_commands_the_torques_that_hold_the_linkage(node):
    """Gravity compensation from the motors' states: the shoulder's and the rear link's
    torques are ∂V/∂θ of the drawing (the loop's share included), not the cut tree's."""
    command = settled_command(node)
    np.testing.assert_allclose(command, holding_torque(THETA[1], THETA[2]), rtol=1e-6,
                               atol=1e-6)
    assert node.node.model.joint_names == MOTORS


def test_it_publishes_the_passive_joints_where_the_loop_puts_them(node):
    """elbow = rear − shoulder, rod = shoulder − rear: the parallelogram; on ~/joint_states
    (what robot_state_publisher draws from) every joint, the motors as measured."""
    node.stream("command")
    assert node.spin_until(lambda: node.passive and node.whole)
    passive = {"elbow_joint": THETA[2] - THETA[1], "rod_joint": THETA[1] - THETA[2]}
    message = node.passive[-1]
    assert dict(zip(message.name, message.position)) == pytest.approx(passive, abs=1e-9)
    message = node.whole[-1]
    assert dict(zip(message.name, message.position)) == pytest.approx(
        {**dict(zip(MOTORS, THETA)), **passive}, abs=1e-9)


def test_its_dynamics_services_answer_for_the_motors_as_pinocchio(node, linkage):
    """~/inverse_dynamics of a motion of the motors, and ~/forward_dynamics of those torques
    back, against Pinocchio's constraintDynamics at the closed state."""
    reference = PinocchioClosedChain(linkage)
    theta_dot, theta_ddot = np.array([0.4, -0.3, 0.5, 1.0]), np.array([1.0, 0.5, -0.8, 2.0])
    q = closed(linkage, THETA)
    in_v = np.argsort(linkage.actuated)      # the motors in the partition's v order
    qd = linkage.velocities(q, theta_dot[in_v])
    qdd = linkage.accelerations(q, qd, theta_ddot[in_v])
    expected, _ = reference.inverse_dynamics(q, qd, qdd)
    answer = node.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        joint_names=list(MOTORS), positions=THETA, velocities=theta_dot.tolist(),
        accelerations=theta_ddot.tolist()))
    assert answer.success, answer.message
    np.testing.assert_allclose(answer.effort, expected, rtol=1e-8, atol=1e-8)
    forward = node.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        joint_names=list(MOTORS), positions=THETA, velocities=theta_dot.tolist(),
        efforts=list(answer.effort)))
    assert forward.success, forward.message
    np.testing.assert_allclose(forward.accelerations, theta_ddot, rtol=1e-8, atol=1e-8)
    # the loop's wrench on the rod (from the forearm), both answers: its generalized force
    # (J_b − J_a)ᵀ w is Pinocchio's constraint force Φ_qᵀλ
    _, constraint_force = reference.inverse_dynamics(q, qd, qdd)
    kin = linkage.kinematics(q)
    for reply in (answer, forward):
        assert list(reply.closure_names) == ["rod_end"]
        w = reply.closure_wrenches[0]
        wrench = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y,
                           w.torque.z])
        point = [frame_pose(linkage.tree, kin, link, np.eye(3), np.array(xyz))
                 for link, xyz in (("rod", [0.8, 0, 0]), ("forearm", [-0.25, 0, 0]))]
        J_a, J_b = (frame_jacobian(linkage.tree, kin, body, p) for body, _, p in point)
        np.testing.assert_allclose((J_b - J_a).T @ wrench, constraint_force,
                                   atol=1e-8 * np.abs(constraint_force).max())


def test_service_answers_do_not_depend_on_the_calls_before(node, linkage):
    """~/inverse_dynamics at 100 random states within the motors' limits, asked in two
    random orders: the same answers both times (to 1e-9 relative), each equal to Pinocchio's
    constraint dynamics at the parallelogram's closed pose written from its geometry
    (elbow = rear − shoulder, rod = shoulder − rear), not closed by robo_dynamics."""
    reference = PinocchioClosedChain(linkage)
    rng = np.random.default_rng(58)
    low, high = (np.array([getattr(linkage.tree, side)[i] for i in linkage.actuated])
                 for side in ("lower", "upper"))
    states = [(rng.uniform(low, high), rng.uniform(-1, 1, 4), rng.uniform(-2, 2, 4))
              for _ in range(100)]
    names, answers = linkage.tree.joint_names, []
    for order in (rng.permutation(100), rng.permutation(100)):
        answer = {}
        for k in order:
            theta, theta_dot, theta_ddot = states[k]
            reply = node.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
                joint_names=list(MOTORS), positions=theta.tolist(),
                velocities=theta_dot.tolist(), accelerations=theta_ddot.tolist()))
            assert reply.success, reply.message
            answer[k] = np.array(reply.effort)
        answers.append(answer)
    for k, (theta, theta_dot, theta_ddot) in enumerate(states):
        np.testing.assert_allclose(answers[0][k], answers[1][k], rtol=1e-9, atol=1e-9)
        q = np.zeros(len(names))
        for name, value in zip(MOTORS, theta):
            q[names.index(name)] = value
        q[names.index("elbow_joint")] = theta[2] - theta[1]
        q[names.index("rod_joint")] = theta[1] - theta[2]
        assert np.abs(linkage.constraint(q)).max() <= 1e-12      # the geometry is closed
        in_v = np.argsort(linkage.actuated)
        qd = linkage.velocities(q, theta_dot[in_v])
        qdd = linkage.accelerations(q, qd, theta_ddot[in_v])
        expected, _ = reference.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(answers[0][k], expected, rtol=1e-8,
                                   atol=1e-8 * np.abs(expected).max())


def test_the_loops_force_at_rest_is_mujocos(node, linkage):
    """~/inverse_dynamics at rest: the rod's end carries the force MuJoCo's equality
    constraint does on its linkage held still at the same pose by its own holding torques
    (within 1 %: its loop is a stiff spring, 0.3 % measured; at THETA, 0.27 rad from where the
    branches meet, its regularised force is 3 % off), none out of the
    parallelogram's plane (statically indeterminate: the least-norm force)."""
    pytest.importorskip("mujoco")
    import mujoco
    from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain
    answer = node.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        joint_names=list(MOTORS), positions=MID))
    assert answer.success, answer.message
    force = answer.closure_wrenches[0].force
    found = np.array([force.x, force.y, force.z])
    plant = MujocoClosedChain(linkage, time_step=2e-4)
    q = closed(linkage, MID)
    plant.data.qfrc_applied[plant.actuated] = plant.holding_torque(q)
    mujoco.mj_forward(plant.mj, plant.data)
    rows = plant.data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    expected = plant.data.efc_force[rows]          # on body 1 (the rod), world axes
    assert np.linalg.norm(found - expected) <= 0.01 * np.linalg.norm(expected), (found,
                                                                                  expected)
    normal = np.array([-np.sin(MID[0]), np.cos(MID[0]), 0.0])    # the loop's plane's
    assert abs(found @ normal) <= 1e-9 * np.linalg.norm(found)


def test_a_payload_is_refused_with_the_reason_and_the_commands_go_on(node):
    answer = node.call(SetPayload, "set_payload", SetPayload.Request(
        link="tool", mass=2.0))
    assert not answer.success and "closed linkage" in answer.message, answer.message
    command = settled_command(node)
    np.testing.assert_allclose(command, holding_torque(THETA[1], THETA[2]), rtol=1e-6,
                               atol=1e-6)


def test_it_draws_the_linkage_and_its_tool_inertia_without_a_failure(node):
    """The markers (every body's centre of mass, the table of the motors' gravity torques,
    the mass the tool carries into a push) come, the table's torques those of the drawing
    (∂V/∂θ, to its two decimals), and no computation has failed on the linkage so far."""
    node.stream("markers")
    markers = node.inbox["markers"][-1].markers
    (table,) = [m.text for m in markers if m.ns == "gravity_torques"]
    lines = table.split("\n")[1:]
    assert [line.split(":")[0] for line in lines] == list(MOTORS), table
    expected = holding_torque(THETA[1], THETA[2])
    shown = [float(line.split(":")[1].split()[0]) for line in lines]
    np.testing.assert_allclose(shown, expected, atol=0.006)
    assert {m.ns for m in markers} >= {"reflected_mass", "centre_of_mass"}
    assert node.node.health.errors == 0


@pytest.mark.parametrize("action", ["identify_arm", "identify_payload"])
def test_identification_is_refused_with_the_reason(node, action):
    """Neither identification is written for a linkage yet: the goal ends with a reason,
    and the gravity compensation goes on."""
    from rclpy.action import ActionClient
    from robo_dynamics_interfaces.action import IdentifyArm, IdentifyPayload
    kind = IdentifyArm if action == "identify_arm" else IdentifyPayload
    client = ActionClient(node.peer, kind, f"{node.node.get_fully_qualified_name()}/{action}")
    try:
        assert node.spin_until(client.server_is_ready)
        goal = kind.Goal() if action == "identify_arm" else kind.Goal(link="tool")
        sent = client.send_goal_async(goal)
        assert node.spin_until(sent.done, action=lambda: node.publish_state(
            list(MOTORS), THETA, [0.0] * 4))
        if sent.result().accepted:
            result = sent.result().get_result_async()
            assert node.spin_until(result.done, timeout=60.0, action=lambda: node.publish_state(
                list(MOTORS), THETA, [0.0] * 4))
            answer = result.result().result
            assert not answer.success and "closed linkage" in answer.message, answer.message
    finally:
        client.destroy()
    command = settled_command(node)
    np.testing.assert_allclose(command, holding_torque(THETA[1], THETA[2]), rtol=1e-6,
                               atol=1e-6)


def test_compute_dynamics_answers_for_the_motors_as_pinocchio(node, linkage):
    """g, C θ̇ and M̂ of ~/compute_dynamics: Pinocchio's motor torques at θ̈ = 0 (and θ̇ = 0)
    and the difference a θ̈ makes to them."""
    from robo_dynamics_interfaces.srv import ComputeDynamics
    reference = PinocchioClosedChain(linkage)
    theta_dot, theta_ddot = np.array([0.4, -0.3, 0.5, 1.0]), np.array([1.0, 0.5, -0.8, 2.0])
    q, in_v = closed(linkage, THETA), np.argsort(linkage.actuated)
    qd = linkage.velocities(q, theta_dot[in_v])

    def torques(velocity, acceleration):
        return reference.inverse_dynamics(q, velocity, linkage.accelerations(
            q, velocity, acceleration[in_v]))[0]
    zero = np.zeros(4)
    answer = node.call(ComputeDynamics, "compute_dynamics", ComputeDynamics.Request(
        joint_names=list(MOTORS), positions=THETA, velocities=theta_dot.tolist()))
    assert answer.success, answer.message
    g = torques(np.zeros_like(qd), zero)
    np.testing.assert_allclose(answer.gravity, g, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(np.array(answer.coriolis) + g, torques(qd, zero), rtol=1e-8,
                               atol=1e-8)
    M = np.array(answer.mass_matrix).reshape(4, 4)
    np.testing.assert_allclose(M @ theta_ddot, torques(qd, theta_ddot) - torques(qd, zero),
                               rtol=1e-8, atol=1e-8)


def test_check_trajectory_weighs_a_motion_of_the_linkage_as_pinocchio(node, linkage):
    """A 2 s quintic of every motor (0.3 rad), sampled every 10 ms: the peak motor torques
    are the largest of Pinocchio's along the samples (each closed from the last)."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from robo_dynamics.control.trajectory import Trajectory
    from robo_dynamics_interfaces.srv import CheckTrajectory
    start, goal, rest = np.array(MID), np.array(MID) + 0.3, np.zeros(4)
    msg = JointTrajectory(joint_names=list(MOTORS), points=[
        JointTrajectoryPoint(positions=start.tolist(), velocities=rest.tolist(),
                             accelerations=rest.tolist(), time_from_start=Duration(sec=0)),
        JointTrajectoryPoint(positions=goal.tolist(), velocities=rest.tolist(),
                             accelerations=rest.tolist(), time_from_start=Duration(sec=2))])
    answer = node.call(CheckTrajectory, "check_trajectory", CheckTrajectory.Request(
        trajectory=msg, sample_period=0.01))
    assert answer.success and answer.feasible, answer.message
    reference, in_v = PinocchioClosedChain(linkage), np.argsort(linkage.actuated)
    motion = Trajectory(0.0, [0.0, 2.0], [start, goal], [rest, rest], [rest, rest])
    peaks, q = np.zeros(4), closed(linkage, MID)
    for t in np.linspace(0.0, 2.0, 201):
        theta, theta_dot, theta_ddot = motion.sample(t)
        q = linkage.close_from(q, theta[in_v])
        qd = linkage.velocities(q, theta_dot[in_v])
        qdd = linkage.accelerations(q, qd, theta_ddot[in_v])
        peaks = np.maximum(peaks, np.abs(reference.inverse_dynamics(q, qd, qdd)[0]))
    assert answer.samples == 201
    np.testing.assert_allclose(answer.peak_effort, peaks, rtol=1e-8, atol=1e-8)


def test_the_delta_is_held_with_the_torques_of_its_geometry(ros):
    """The shipped Delta from its params file: the commands at a motor state are ∂V/∂θ of
    the platform trilateration places (test_closed_chain_delta)."""
    from closed_chain_models import potential
    section = yaml.safe_load((REPO / "config" / "rd_delta.yaml").read_text())[
        "/**/dynamics_node"]["ros__parameters"]
    theta = np.array([0.2, -0.1, 0.15])
    harness = Harness(default_state=(list(section["actuated_joints"]), theta.tolist(),
                                     [0.0] * 3),
                      node_args=["--ros-args", "-r", "__ns:=/delta"],   # apart from the
                      marker_rate=0.0,                                  # module's node
                      robot_description_file=str(REPO / "urdf" / "rd_delta.urdf"),
                      **flat(section))
    try:
        h = 1e-6
        expected = [(potential(theta + h * e) - potential(theta - h * e)) / (2 * h)
                    for e in np.eye(3)]
        np.testing.assert_allclose(settled_command(harness), expected, rtol=1e-6, atol=1e-6)
    finally:
        harness.close()


def test_a_passive_joint_off_the_closure_starts_the_safe_hold_naming_it(node):
    """A driver that reports the passive joints too: within passive_joint_tolerance (0.02
    rad) of the parallelogram nothing happens; the elbow 0.05 rad off starts the safe hold
    with the joint and the size in its reason, and the hold keeps the linkage held (its
    commands at rest are the holding torques). (Last in this file: the node stays held.)"""
    names = list(MOTORS) + ["elbow_joint", "rod_joint"]
    elbow, rod = THETA[2] - THETA[1], THETA[1] - THETA[2]
    events = len(node.inbox["events"])
    node.send_and_wait(names, THETA + [elbow + 0.01, rod], [0.0] * 6)
    assert node.node.controller.mode == "gravity"
    node.send_and_wait(names, THETA + [elbow + 0.05, rod], [0.0] * 6)
    assert node.node.controller.mode == "hold"
    assert node.spin_until(lambda: any(e.kind == "safe_hold"
                                       for e in node.inbox["events"][events:]))
    held = [e for e in node.inbox["events"][events:] if e.kind == "safe_hold"][0]
    assert "passive joint 'elbow_joint' measured 0.05 from where the loops put it" in (
        held.message), held.message
    np.testing.assert_allclose(settled_command(node), holding_torque(THETA[1], THETA[2]),
                               rtol=1e-6, atol=1e-6)


def test_the_start_up_line_names_the_closed_chain_solver_not_a_backend():
    """A linkage is solved in-house whatever `backend` says: the node's first line says so
    (it said "backend 'pinocchio'" right after its closed-chain notice)."""
    import robo_dynamics as rd
    from robo_dynamics.control.settings import controller_settings
    from robo_dynamics.ros.chain import describe, load_chain
    from robo_dynamics.ros.parameter_tables import DYNAMICS_NODE
    values = {name: spec.default for name, spec in DYNAMICS_NODE.items()}
    values.update(flat(SECTION))
    values["loop_closures"] = SECTION["loop_closures"]
    model = load_chain(str(URDF), values)
    lines = describe(model, "pinocchio", MOTORS, rd.make_solver(model),
                     controller_settings(values, model))
    assert "in-house closed-chain solver" in lines[0][1] and "pinocchio" not in lines[0][1]


def test_the_mg400s_urdf_alone_is_refused_for_its_zero_limits_and_loads_with_its_params_file():
    """The MG400's driver URDF gives every limit as 0 (every command would be clamped to
    nothing): without config/mg400.yaml's limits the node refuses it naming the motors."""
    import realworld
    from robo_dynamics.errors import ArgumentError
    from robo_dynamics.ros.chain import load_chain
    urdf = realworld.require(realworld.MG400_URDF).read_text()
    section = yaml.safe_load((REPO / "config" / "mg400.yaml").read_text())[
        "/**/dynamics_node"]["ros__parameters"]
    values = {**section, "gravity": [0.0, 0.0, -9.81], "base_link": ""}
    bare = {key: value for key, value in values.items()
            if key not in ("effort_limits", "velocity_limits")}
    with pytest.raises(ArgumentError, match="effort limit of 0") as refused:
        load_chain(urdf, bare)
    assert all(name in str(refused.value) for name in section["actuated_joints"])
    model = load_chain(urdf, values)
    assert list(model.joint_names) == section["actuated_joints"]
    np.testing.assert_array_equal(model.effort_limit, section["effort_limits"])


def test_a_spring_in_the_params_file_is_held_by_the_motors_too(ros):
    """joint_springs on the rod joint (passive: rod = shoulder − rear): the node's gravity
    compensation adds the spring's ∂(½ k (rod − rod₀)²)/∂θ = ±k (rod − rod₀) to the shoulder
    and the rear motor (virtual work on the drawing)."""
    k, rod0 = 80.0, 0.05
    section = {**SECTION, "joint_springs": {"joints": ["rod_joint"], "stiffness": [k],
                                            "reference": [rod0]}}
    harness = Harness(default_state=(list(MOTORS), THETA, [0.0] * 4),
                      node_args=["--ros-args", "-r", "__ns:=/sprung"],   # apart from the
                      robot_description_file=str(URDF), **flat(section))  # module's node
    try:
        spring = k * (THETA[1] - THETA[2] - rod0)
        np.testing.assert_allclose(settled_command(harness),
                                   holding_torque(THETA[1], THETA[2]) + [0, spring, -spring, 0],
                                   rtol=1e-6, atol=1e-6)
    finally:
        harness.close()

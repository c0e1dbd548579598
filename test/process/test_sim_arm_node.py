"""sim_arm in-process: it publishes joint states, takes effort commands by name order,
times them out, and closes the loop with dynamics_node (gravity compensation holds)."""

import os
import re
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

import robo_dynamics as rd
from robo_dynamics.ros.dynamics_node.node import DynamicsNode
from robo_dynamics.ros.sim_arm.node import SimArmNode
from robo_dynamics.simulation.simulated_arm import IntegratedPlant, SimulatedArm
from conftest import REPO, SHIPPED
from ros_harness import Loop, overrides

URDF = str(SHIPPED / "rd_ur5e.urdf")
REF = rd.make_solver(rd.load_robot(URDF), "pinocchio")
Q0 = [0.3, -1.2, 1.4, -0.9, 1.2, 0.4]


@pytest.fixture(scope="module", autouse=True)
def ros_context(ros):
    yield


def make_sim(**params):
    params.setdefault("robot_description_file", URDF)
    params.setdefault("initial_positions", Q0)
    return SimArmNode(parameter_overrides=overrides(params))


@pytest.fixture(params=["internal", "mujoco"])
def engine(request):
    """Each of sim_arm's engines."""
    return request.param


def test_brakes_hold_until_commands_and_again_after_the_timeout(engine):
    loop = Loop()
    sim = loop.add(make_sim(command_timeout=0.05, publish_rate=200.0, engine=engine))
    assert sim.arm.plant.engine == engine
    peer = loop.add(rclpy.create_node("peer"))
    states = []
    peer.create_subscription(JointState, "/joint_states", states.append, 100)
    commands = peer.create_publisher(Float64MultiArray, "/effort_commands", 10)
    try:
        assert loop.spin_until(lambda: len(states) >= 10)
        assert np.allclose(states[-1].position, Q0)                   # braked: not falling
        np.testing.assert_allclose(states[-1].effort, REF.gravity(Q0), rtol=1e-12, atol=1e-12)
        commands.publish(Float64MultiArray(data=[1.0, 2.0, 3.0]))     # wrong length
        assert loop.spin_until(lambda: sim.rejected == 1)
        assert sim.arm.braked and np.allclose(states[-1].position, Q0)
        commands.publish(Float64MultiArray(data=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]))
        assert loop.spin_until(lambda: not sim.arm.braked)           # released: it falls
        assert loop.spin_until(lambda: sim.arm.braked)    # timed out: braked where it was
        count = len(states)
        assert loop.spin_until(lambda: len(states) >= count + 2)
        q = np.array(states[-1].position)
        assert np.max(np.abs(q - Q0)) > 1e-3 and np.all(np.array(states[-1].velocity) == 0.0)
        assert np.all(np.array(states[-2].position) == q)
        np.testing.assert_allclose(states[-1].effort, REF.gravity(q), rtol=1e-12, atol=1e-12)
        assert list(states[-1].name) == list(sim.model.joint_names)
    finally:
        loop.close()


def test_lockstep_is_the_sampled_data_loop_whatever_the_timing(engine):
    """With lockstep each command acts over exactly the period after the state it answers
    (no period lost, repeated or shared, however late it comes) and /clock carries each
    state's time before the state: the loop over ROS equals the same loop run on the
    library's SimulatedArm directly, to the last bit."""
    period = 1.0 / 250.0
    sim = make_sim(lockstep=True, lockstep_timeout=60.0, publish_rate=250.0, engine=engine,
                   command_timeout=1.0)
    loop = Loop(sim)
    peer = loop.add(rclpy.create_node("peer"))
    commands = peer.create_publisher(Float64MultiArray, "/effort_commands", 10)
    offset = np.array([2.0, 2.0, 1.0, 0.01, 0.005, 0.001])     # N·m: the arm moves

    def law(q, v):
        return REF.gravity(q) + offset

    states, clock, pending = [], [], []      # pending: [command, spins since its state]

    def answer(msg):
        states.append(msg)
        if len(states) <= 40:
            pending.append([law(np.array(msg.position), np.array(msg.velocity)), 0])

    def reply_late():
        """Send the answer only after five more spins of the loop, in which sim_arm's
        timer fires (each spin runs a callback or waits 10 ms, its period being 4 ms)."""
        if pending:
            pending[0][1] += 1
            if pending[0][1] > 5:
                commands.publish(Float64MultiArray(data=pending.pop()[0].tolist()))
    from rosgraph_msgs.msg import Clock
    peer.create_subscription(Clock, "/clock", lambda m: clock.append(nanoseconds(m.clock)), 100)
    peer.create_subscription(JointState, "/joint_states", answer, 100)
    try:       # 41 states, and the clock up to the last one's time
        assert loop.spin_until(lambda: len(states) >= 41 and clock and
                               clock[-1] >= nanoseconds(states[40].header.stamp),
                               timeout=60.0, action=reply_late)
    finally:
        loop.close()
    if engine == "internal":
        plant = IntegratedPlant(rd.make_solver(sim.model, "pinocchio"), "rk4", 1e-3)
    else:
        from robo_dynamics.simulation.mujoco_plant import MujocoPlant
        plant = MujocoPlant(sim.model, "rk4", 1e-3)
    arm = SimulatedArm(plant, np.array(Q0), command_timeout=1.0, brakes=True)
    stamps = [nanoseconds(m.header.stamp) for m in states[:41]]
    for k, msg in enumerate(states[:41]):
        for _ in range(4):                          # 4 steps of 1 ms per period
            arm.step()
        assert np.array_equal(arm.q, msg.position) and np.array_equal(arm.v, msg.velocity), k
        arm.set_command(law(arm.q, arm.v))
        assert stamps[k] - stamps[0] == round(k * period * 1e9)      # [ns]
    assert np.max(np.abs(arm.q - Q0)) > 1e-3                    # it did move
    # every state's time went out on /clock (those the peer heard: it may join late)
    heard = [t for t in stamps if t >= clock[0]]
    assert len(heard) > 30 and set(heard) <= set(clock)


def nanoseconds(stamp):
    """A builtin_interfaces Time in integer nanoseconds."""
    return stamp.sec * 10 ** 9 + stamp.nanosec


def test_command_order_follows_command_joints():
    order = ["wrist_3_joint", "shoulder_pan_joint"]
    sim = make_sim(command_joints=order)
    received = Float64MultiArray(data=[0.5, -2.0])
    sim._on_command(received)
    tau = sim.arm.command
    assert tau[5] == 0.5 and tau[0] == -2.0 and np.all(tau[1:5] == 0.0)
    sim.destroy_node()


def test_closed_loop_gravity_compensation_holds_the_arm(engine):
    """On the internal plant the library agrees with itself exactly; on MuJoCo (an
    independent engine, no friction) the pose is held to its rounding."""
    sim = make_sim(publish_rate=500.0, engine=engine)
    node = DynamicsNode(parameter_overrides=overrides(
        {"robot_description_file": URDF, "marker_rate": 0.0}))
    # the dynamics node's gravity command is the simulator's effort input
    bridge = rclpy.create_node("bridge")
    relay = bridge.create_publisher(Float64MultiArray, "/effort_commands", 10)
    bridge.create_subscription(Float64MultiArray, "/dynamics_node/commands",
                               relay.publish, 10)
    loop = Loop(sim, node, bridge)
    try:
        # 1.5 s of simulated time under the node's commands
        assert loop.spin_until(lambda: not sim.arm.braked and sim.arm.t >= 1.5, timeout=60.0)
        assert not sim.arm.braked
        np.testing.assert_allclose(sim.arm.q, Q0, atol=1e-9)
        assert np.max(np.abs(sim.arm.v)) < 1e-9
    finally:
        loop.close()


def test_engine_options_are_checked_at_start_up():
    with pytest.raises(ValueError, match="armature need engine mujoco"):
        make_sim(armature=[0.1])
    with pytest.raises(ValueError, match="obstacle_box needs 6 finite numbers"):
        make_sim(engine="mujoco", obstacle_box=[0.5, 0.0])
    sim = make_sim(engine="mujoco", armature=[0.05], obstacle_box=[0.6, 0.0, 0.2, 0.1, 0.1, 0.1])
    np.testing.assert_array_equal(sim.arm.plant.armature, [0.05] * 6)
    sim.destroy_node()


def test_unknown_payload_makes_the_arm_sag_under_gravity_compensation():
    """With 2 kg at tool0 that the controller ignores, the held pose cannot be kept."""
    sim = make_sim(publish_rate=500.0, payload_link="tool0", payload_mass=2.0)
    assert np.isclose(sim.model.mass.sum(), rd.load_robot(URDF).mass.sum() + 2.0)
    sim.arm.set_command(rd.make_solver(rd.load_robot(URDF), "pinocchio").gravity(
        np.array(Q0)))
    sim.arm.command_timeout = 10.0
    for _ in range(200):
        sim.arm.step()
    assert np.max(np.abs(sim.arm.q - Q0)) > 1e-2
    sim.destroy_node()


def test_a_push_on_the_forearm_is_estimated_by_the_node_and_holds_the_arm(engine):
    """The node holds a pose (computed torque to a set-point); sim_arm pushes its arm (30 N
    at the middle of the forearm) and publishes the push's true joint torques; the node,
    seeing only joint states with noisy efforts, estimates them (same stamps: the states'
    simulated time), reports the collision and holds the arm (thresholds at 2 % / 4 % of
    the effort limits)."""
    from geometry_msgs.msg import WrenchStamped
    from robo_dynamics_interfaces.msg import ControllerEvent

    sim = make_sim(publish_rate=100.0, engine=engine, effort_noise=0.5, command_timeout=0.2)
    node = DynamicsNode(parameter_overrides=overrides(
        {"robot_description_file": URDF, "marker_rate": 0.0, "stale_timeout": 0.5,
         "contact_thresholds": (0.02 * sim.model.effort_limit).tolist(),
         "collision_thresholds": (0.04 * sim.model.effort_limit).tolist()}))
    bridge = rclpy.create_node("bridge")
    relay = bridge.create_publisher(Float64MultiArray, "/effort_commands", 10)
    bridge.create_subscription(Float64MultiArray, "/dynamics_node/commands",
                               relay.publish, 10)
    truth, estimate, events, states = {}, {}, [], []
    bridge.create_subscription(JointState, "/sim_arm/external_joint_torques",
                               lambda m: truth.__setitem__(_key(m), np.array(m.effort)), 1000)
    bridge.create_subscription(JointState, "/dynamics_node/external_joint_torques",
                               lambda m: estimate.__setitem__(_key(m), np.array(m.effort)),
                               1000)
    bridge.create_subscription(ControllerEvent, "/dynamics_node/events", events.append, 20)
    listen = bridge.create_subscription(JointState, "/joint_states", states.append, 1000)
    push = bridge.create_publisher(WrenchStamped, "/sim_arm/external_wrench", 10)
    set_point = bridge.create_publisher(JointState, "/dynamics_node/desired_state", 10)
    loop = Loop(sim, node, bridge)
    middle = 0.5 * np.asarray(sim.model.origin_translation[3])   # forearm → wrist 1 joint
    wrench = WrenchStamped()
    wrench.header.frame_id = "nowhere"
    try:
        assert loop.spin_until(lambda: not sim.arm.braked and sim.arm.t >= 0.5, timeout=60.0)
        push.publish(wrench)                                  # an unknown link: refused
        assert loop.spin_until(lambda: sim.rejected == 1)
        # the noise the node sees: efforts minus the commands they carry out (n × 400 samples)
        noise = [np.array(s.effort) - sim.arm.command for s in states[-400:]]
        assert 0.4 < np.std(noise) < 0.6
        bridge.destroy_subscription(listen)         # one executor runs it all: lighten it
        # (a set-point also leaves a hold from the start: the first command is the measured
        # effort, and 0.5 N·m of noise on wrist 3, 10⁻⁴ kg·m², may trip the velocity bound)
        set_point.publish(JointState(name=list(sim.names), position=sim.arm.q.tolist()))
        assert loop.spin_until(lambda: any(e.kind == "tracking" for e in events))
        before = len(events)
        wrench.header.frame_id = "forearm_link"
        wrench.wrench.force.y = 30.0
        (wrench.wrench.torque.x, wrench.wrench.torque.y, wrench.wrench.torque.z) = \
            np.cross(middle, [0.0, 30.0, 0.0]).tolist()
        push.publish(wrench)
        # the push is a collision; the hold may come first from the velocity bound (30 N
        # on the elbow accelerates the light wrist 1 at tens of rad/s²), then the collision
        # is reported as such
        assert loop.spin_until(lambda: any("collision" in e.message for e in events[before:]
                                           if e.kind in ("safe_hold", "collision")),
                               timeout=30)
        assert any(e.kind == "safe_hold" for e in events[before:])
        started = min(truth)
        # the node runs on its own thread and may lag the simulation: wait for both
        assert loop.spin_until(lambda: max(truth) > started + 0.3 and estimate
                               and max(estimate) > started + 0.3, timeout=60.0)
        # each estimate against the truth of the nearest state (one executor runs all three
        # nodes here: not every state's messages get through, and τ_ext changes slowly)
        stamps = np.array(sorted(truth))
        pairs = [(estimate[k], truth[stamps[np.argmin(np.abs(stamps - k))]])
                 for k in sorted(estimate) if k > started + 0.15
                 and np.min(np.abs(stamps - k)) <= 0.005]
        assert len(pairs) >= 5
        errors = [np.abs(a - b).max() for a, b in pairs]
        peak = max(np.abs(b).max() for _, b in pairs)
        # noise 0.5 N·m filtered at K_O Δt = 0.5 (100 Hz): σ ≈ 0.25 N·m per joint
        assert peak > 5.0 and np.median(errors) < 0.15 * peak, (np.median(errors), peak)
    finally:
        loop.close()


def _key(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def documented_commands():
    """The commands of docs/install.md that start dynamics_node and sim_arm (continuation
    lines joined, $PWD the repository), as argument lists."""
    text = (REPO / "docs" / "install.md").read_text().replace("\\\n", " ")
    commands = {}
    for line in text.splitlines():
        found = re.match(r"\.venv/bin/(dynamics_node|sim_arm) (.*?)( &)?$", line.strip())
        if found:
            words = shlex.split(found[2].replace("$PWD", str(REPO)), comments=True)
            commands[found[1]] = [os.path.join(sys.prefix, "bin", found[1])] + words
    return commands


def test_the_documented_console_scripts_close_the_loop():
    """docs/install.md's two commands, as a user types them: sim_arm in lockstep advances
    only once the node's command for its last state has arrived, so its simulated time
    moving on is the node's commands reaching it, under the topic names as given."""
    commands = documented_commands()
    assert set(commands) == {"dynamics_node", "sim_arm"}, commands
    started = [subprocess.Popen(commands[name], cwd=REPO, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
               for name in ("dynamics_node", "sim_arm")]
    listener = rclpy.create_node("listener")
    stamps, commanded = [], []
    listener.create_subscription(JointState, "/joint_states", lambda m: stamps.append(
        m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec), 10)
    listener.create_subscription(Float64MultiArray, "/dynamics_node/commands",
                                 lambda m: commanded.append(list(m.data)), 10)
    try:
        executor = rclpy.executors.SingleThreadedExecutor()
        executor.add_node(listener)
        give_up = time.monotonic() + 120.0      # a loop that never closes: not forever
        while not (stamps and stamps[-1] >= 0.5 and commanded) and time.monotonic() < give_up:
            executor.spin_once(timeout_sec=0.1)
            assert all(p.poll() is None for p in started), [p.returncode for p in started]
    finally:
        listener.destroy_node()
        for process in started:
            process.send_signal(signal.SIGINT)
        codes = [process.wait(timeout=30) for process in started]
    assert codes == [0, 0]
    assert stamps and stamps[-1] >= 0.5, stamps[-3:]       # the loop closed
    # simulated time, from 0 (not the system clock's ~1.8e9 s; how far the loop ran before
    # this listener was discovered depends on the machine)
    assert 0.5 <= stamps[-1] < 600.0 and len(commanded[-1]) == 6
    np.testing.assert_allclose(commanded[-1], REF.gravity(np.zeros(6)), atol=0.5)

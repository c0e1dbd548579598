"""Property-based tests (hypothesis) of joint-state handling: the merger alone, and the
running node fed ≥ 10 000 generated messages. Nothing escapes, nothing non-finite or out of
limits is published, every rejection is counted."""

from conftest import require_example_robots
require_example_robots(__name__)   # it reads example-robot-data: without it, skipped saying why

import math

import numpy as np
import pytest
import rclpy
from hypothesis import HealthCheck, given, settings, strategies as st
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from builtin_interfaces.msg import Time

import robo_dynamics as rd
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.rate_limit import MAX_INTERVAL
from robo_dynamics.ros.dynamics_node.node import DynamicsNode
from conftest import ARMS

PATH, TIP = ARMS["panda"]
ROBOT = rd.load_robot(PATH, tip_link=TIP)
CHAIN = list(ROBOT.joint_names)
OFF_CHAIN = ["panda_finger_joint1", "panda_finger_joint2"]
UNKNOWN = ["ghost", "base_x"]
KNOWN = CHAIN + OFF_CHAIN + ["panda_joint8", "panda_hand_joint", "panda_hand_tcp_joint"]

WILD = st.one_of(st.sampled_from([math.nan, math.inf, -math.inf, 1e12, -1e300]),
                 st.floats(-1e300, 1e300))


@st.composite
def values(draw, count):
    """`count` joint values: ordinary ones, with a wild one (NaN, inf, huge) now and then."""
    out = draw(st.lists(st.floats(-4.0, 4.0), min_size=count, max_size=count))
    if out and draw(st.integers(0, 9)) == 0:
        out[draw(st.integers(0, count - 1))] = draw(WILD)
    return out


@st.composite
def joint_state(draw):
    """A message that is sometimes valid: names from the chain, off the chain, unknown,
    duplicated or missing; arrays of matching, wrong or empty length; wild values."""
    kind = draw(st.sampled_from(["full"] * 6 + ["partial", "partial", "wild"]))
    if kind == "full":
        names = draw(st.permutations(CHAIN))
    elif kind == "partial":
        names = draw(st.lists(st.sampled_from(CHAIN + OFF_CHAIN), min_size=1, max_size=9,
                              unique=True))
    else:
        names = draw(st.lists(st.sampled_from(CHAIN + OFF_CHAIN + UNKNOWN), max_size=10))
    count = len(names)
    length = draw(st.sampled_from([count] * 8 + [count - 1, count + 1, 0]))
    positions = draw(values(max(length, 0)))
    v_length = draw(st.sampled_from([count] * 6 + [0, count + 2]))
    velocities = draw(values(max(v_length, 0)))
    stamp = draw(st.integers(0, 2**31 - 1))      # stamps jump and go backwards
    return list(names), positions, velocities, stamp


def expected_valid(names, positions, velocities):
    """The rule, written independently of the merger."""
    if not names or len(set(names)) != len(names) or any(n not in KNOWN for n in names):
        return False
    if len(positions) != len(names) or len(velocities) not in (0, len(names)):
        return False
    chain_values = [positions[k] for k, n in enumerate(names) if n in CHAIN]
    if velocities:
        chain_values += [velocities[k] for k, n in enumerate(names) if n in CHAIN]
    return all(math.isfinite(v) and abs(v) <= 1e3 for v in chain_values)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(joint_state(), min_size=1, max_size=5))
def test_merger_accepts_exactly_the_valid_messages(messages):
    merger = JointStateMerger(CHAIN, KNOWN)
    rejected = 0
    for now, (names, positions, velocities, _) in enumerate(messages):
        before = merger.q.copy(), merger.qd.copy()
        reason = merger.update(names, positions, velocities, float(now))
        assert (reason is None) == expected_valid(names, positions, velocities), reason
        if reason is not None:
            rejected += 1
            np.testing.assert_array_equal(merger.q, before[0])
            np.testing.assert_array_equal(merger.qd, before[1])
        assert np.all(np.isfinite(merger.q)) and np.all(np.isfinite(merger.qd))
    assert merger.rejected == rejected


class Counter:
    """Everything the node published, checked as it arrives: finite, within the effort
    limits, and each command within one rate-limited step of the one before."""

    def __init__(self, bound, max_step):
        self.bound, self.max_step = bound, max_step
        self.count = 0
        self.bad = []
        self.last_command = None

    def effort(self, msg):
        self.count += 1
        values = np.asarray(msg.effort if hasattr(msg, "effort") else msg.data)
        if not (np.all(np.isfinite(values)) and np.all(np.abs(values) <= self.bound + 1e-9)):
            self.bad.append(values)

    def command(self, msg):
        self.effort(msg)
        values = np.asarray(msg.data)
        if self.last_command is not None and np.any(
                np.abs(values - self.last_command) > self.max_step + 1e-9):
            self.bad.append(values - self.last_command)
        self.last_command = values


@pytest.fixture(scope="module")
def running_node(ros):
    node = DynamicsNode(parameter_overrides=[
        Parameter("robot_description_file", value=str(PATH)), Parameter("tip_link", value=TIP),
        Parameter("stale_timeout", value=1e6), Parameter("marker_rate", value=0.0),
        Parameter("kp", value=[4000.0]), Parameter("kd", value=[300.0]),
        Parameter("start_tolerance", value=[10.0]), Parameter("max_tracking_error", value=[10.0])])
    peer = rclpy.create_node("fuzz_peer")
    counter = Counter(ROBOT.effort_limit, 1000.0 * MAX_INTERVAL)
    for topic, kind, check in (("gravity_torques", JointState, counter.effort),
                               ("commanded_torques", JointState, counter.effort),
                               ("commands", Float64MultiArray, counter.command)):
        peer.create_subscription(kind, f"/dynamics_node/{topic}", check, 10_000)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(peer)
    for _ in range(50):
        executor.spin_once(timeout_sec=0.01)
    state = {"sent": 0, "valid": 0}
    yield node, executor, counter, state
    executor.shutdown()
    node.destroy_node()
    peer.destroy_node()


@settings(max_examples=100, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.large_base_example,
    HealthCheck.data_too_large])
@given(st.lists(joint_state(), min_size=50, max_size=50))
def feed_generated_messages(running_node, messages):
    """Each example: 50 generated joint states into the running node's callback."""
    node, executor, counter, state = running_node
    # a far set-point within the joint limits (admitted: the fixture widens
    # start_tolerance) with stiff gains: computed torque saturates, so clamping is
    # exercised; a velocity fault among the generated states switches to the hold, and the
    # next example tracks again
    model = node.urdf_model
    far = model.lower + 0.9 * (model.upper - model.lower)
    node.desired_motion.set_point(JointState(name=CHAIN, position=far.tolist()))
    for names, positions, velocities, stamp in messages:
        msg = JointState(name=names, position=[float(p) for p in positions],
                         velocity=[float(v) for v in velocities])
        msg.header.stamp = Time(sec=stamp, nanosec=0)
        node.on_joint_state(msg)            # the subscription callback, without transport
        state["sent"] += 1
        state["valid"] += expected_valid(names, positions, velocities)
        executor.spin_once(timeout_sec=0.0)  # deliver what it published to the checker


def test_running_node_survives_generated_messages(running_node):
    """100 examples of 50 generated joint states (≥ 5 000 messages) into one running node:
    every rejection counted, no computation error, every published torque finite and in
    limits, no command step above the rate limit."""
    node, executor, counter, state = running_node
    feed_generated_messages(running_node)
    for _ in range(200):
        executor.spin_once(timeout_sec=0.01)
    assert state["sent"] >= 5_000
    assert node.controller.rejected == state["sent"] - state["valid"]
    assert 0 < node.controller.rejected < state["sent"]
    assert node.health.errors == 0
    assert counter.count > 0 and counter.bad == []
    counts = node.controller.counts
    assert counts["clamped"] > 0 and counts["faults"] > 0 and counts["rate_limited"] > 0
    print(f"\nfuzz: {state['sent']} messages, {node.controller.rejected} rejected, "
          f"{counter.count} outputs received, {counts['clamped']} clamped, "
          f"{counts['faults']} safe holds, 0 crashes")

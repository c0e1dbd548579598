"""dynamics_node's clock: simulated time drives staleness and the node's clock, a clock that
stops, a state and its /clock in either order, the system clock, a subscriber after the
clock went back.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported)."""

import pytest
from rclpy.time import Time
from sensor_msgs.msg import JointState

from robo_dynamics.ros.dynamics_node import joint_state_thread

from node_harness import NAMES, Q, QD, backend, harness, ros_context  # noqa: F401 (fixtures)


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

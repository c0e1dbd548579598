"""dynamics_node as a managed (lifecycle) node over ROS 2: sim_arm (MuJoCo, lockstep, braked
while no command comes) ↔ dynamics_node with managed true, driven through
lifecycle_msgs/ChangeState as a lifecycle manager does, and a MoveIt-like
FollowJointTrajectory client. References: the lifecycle state machine's states, the goal's
result codes, the hold's documented decay (1/hold_decay_rate), the rate limit."""

import numpy as np
import pytest
import rclpy
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from std_msgs.msg import Float64MultiArray

from robo_dynamics.control.activation import STOP_TIME_CONSTANTS
from ros_harness import closed_loop_nodes
from test_trajectory_action import MOVE, NAMES, Q0, URDF, Client, goal_from

R = FollowJointTrajectory.Result


@pytest.fixture
def managed(ros):
    sim, node = closed_loop_nodes(URDF, Q0, {"engine": "mujoco", "brakes": True,
                                             "lockstep_timeout": 0.05},
                                  {"managed": True, "collision_reaction": "none",
                                   "diagnostics_rate": 20.0})
    loop = Lifecycle(sim, node)
    yield loop
    loop.close()


class Lifecycle(Client):
    def __init__(self, sim, node):
        super().__init__(sim, node)
        self.change = self.peer.create_client(ChangeState, "/dynamics_node/change_state")
        self.get = self.peer.create_client(GetState, "/dynamics_node/get_state")
        self.commands, self.diagnostics = [], []
        self.peer.create_subscription(Float64MultiArray, "/dynamics_node/commands",
                                      self.commands.append, 1000)
        self.peer.create_subscription(DiagnosticArray, "/diagnostics",
                                      self.diagnostics.append, 10)

    def call(self, client, request):
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(request)
        assert self.spin_until(future.done, timeout=30.0)
        return future.result()

    def transition(self, transition_id):
        return self.call(self.change, ChangeState.Request(
            transition=Transition(id=transition_id))).success

    def state(self):
        return self.call(self.get, GetState.Request()).current_state.label

    def diagnosed(self, key):
        """The value of `key` on the next /diagnostics message."""
        self.diagnostics.clear()
        assert self.spin_until(lambda: self.diagnostics)
        values = {kv.key: kv.value for kv in self.diagnostics[-1].status[0].values}
        return values.get(key), self.diagnostics[-1].status[0].message


def test_a_managed_node_commands_only_between_activate_and_deactivate(managed):
    """unconfigured (no model) → configure → inactive: joint states taken, a goal refused with
    the reason, no command → activate: commands → a goal, deactivated half-way: it ends
    with PATH_TOLERANCE_VIOLATED saying so, the hold brings the arm to rest, the commands
    stop after STOP_TIME_CONSTANTS / λ of simulated time and never jump → cleanup."""
    loop, node = managed, managed.node
    assert loop.state() == "unconfigured" and node.controller is None
    assert loop.transition(Transition.TRANSITION_CONFIGURE)
    assert loop.state() == "inactive"
    assert loop.spin_until(lambda: node.controller.measured_state() is not None)
    status, result = loop.run(goal_from(loop.q(), MOVE, 2.0))
    assert result.error_code != R.SUCCESSFUL and "not active" in result.error_string, \
        result.error_string
    assert loop.commands == []

    assert loop.transition(Transition.TRANSITION_ACTIVATE) and loop.state() == "active"
    assert loop.spin_until(lambda: len(loop.commands) > 10)
    # (simulated time stands while no command answers a state: /diagnostics, on the node's
    # clock, come once it runs)
    assert loop.diagnosed("lifecycle")[0] == "active"
    handle = loop.send(goal_from(loop.q(), MOVE, 2.0))
    assert loop.spin_until(lambda: loop.feedback and
                           loop.feedback[-1].feedback.desired.time_from_start.sec >= 1)
    sent_before = len(loop.commands)
    start = loop.now()
    assert loop.transition(Transition.TRANSITION_DEACTIVATE) and loop.state() == "inactive"
    status, result = loop.result(handle)
    assert result.error_code == R.PATH_TOLERANCE_VIOLATED, result.error_string
    assert "deactivated" in result.error_string
    assert loop.spin_until(lambda: node.activation.state == "inactive", timeout=60.0)
    stopped_after = loop.now() - start
    rate = node.controller.settings.hold_decay_rate
    assert stopped_after >= STOP_TIME_CONSTANTS / rate - 0.01, stopped_after
    held = np.array([c.data for c in loop.commands[sent_before - 1:]])
    limit = node.controller.settings.max_torque_rate * 0.002          # 500 Hz
    assert np.all(np.abs(np.diff(held, axis=0)) <= limit + 1e-9)
    count = len(loop.commands)
    t = loop.now()
    assert loop.spin_until(lambda: node.controller.measured_state() is not None
                           and loop.now() >= t, timeout=30.0)
    assert len(loop.commands) == count                   # no command once stopped
    assert np.abs(node.controller.measured_state()[1]).max() < 0.05

    assert loop.transition(Transition.TRANSITION_CLEANUP) and loop.state() == "unconfigured"
    assert node.controller is None


def test_configure_without_a_usable_description_fails_with_its_reason(ros):
    """A managed node given a file that does not exist stays unconfigured; /diagnostics (on
    the system clock here) says why."""
    sim, node = closed_loop_nodes(URDF, Q0, {}, {"managed": True, "diagnostics_rate": 20.0,
                                                 "use_sim_time": False,
                                                 "robot_description_file": "/no/such.urdf"})
    loop = Lifecycle(sim, node)
    try:
        assert not loop.transition(Transition.TRANSITION_CONFIGURE)
        assert loop.state() == "unconfigured"
        value, message = loop.diagnosed("lifecycle")
        assert value == "unconfigured" and "/no/such.urdf" in message, message
    finally:
        loop.close()


def test_shutdown_from_active_deactivates_first(managed):
    """active → shutdown: finalized, and the node deactivated on the way (its stream holds
    the arm and is stopping or stopped; desired motions refused)."""
    loop, node = managed, managed.node
    assert loop.transition(Transition.TRANSITION_CONFIGURE)
    assert loop.transition(Transition.TRANSITION_ACTIVATE)
    assert loop.spin_until(lambda: len(loop.commands) > 10)
    assert loop.transition(Transition.TRANSITION_ACTIVE_SHUTDOWN)
    assert loop.state() == "finalized"
    assert node.activation.state in ("stopping", "inactive")
    assert "not active" in node.controller.inactive


def test_autostart_brings_a_managed_node_up_active_and_it_stays_managed(ros):
    """managed with autostart (the launch file's activate:=true): active as soon as it has
    its description, commanding the arm, and still deactivated by a lifecycle manager."""
    sim, node = closed_loop_nodes(URDF, Q0, {"engine": "mujoco", "brakes": True},
                                  {"managed": True, "autostart": True,
                                   "collision_reaction": "none"})
    loop = Lifecycle(sim, node)
    try:
        assert loop.state() == "active"
        assert loop.spin_until(lambda: len(loop.commands) > 10)
        assert loop.transition(Transition.TRANSITION_DEACTIVATE)
        assert loop.state() == "inactive"
        assert "not active" in node.controller.inactive
    finally:
        loop.close()


def test_only_a_managed_node_offers_the_lifecycle_interface(ros):
    """The plain node (managed false) has no ~/change_state nor ~/get_state: nothing to
    manage; a managed node has them (what `ros2 lifecycle set` uses). (~/transition_event
    both have: rcl_lifecycle creates it whatever the interface, docs/node.md.) Read from
    the services the node itself holds, not the graph another process may share."""
    from rclpy.parameter import Parameter
    from robo_dynamics.ros.dynamics_node.node import DynamicsNode
    for managed in (False, True):
        node = DynamicsNode(parameter_overrides=[
            Parameter("robot_description_file", value=URDF), Parameter("managed", value=managed)])
        try:
            services = {node.resolve_service_name(s.srv_name) for s in node.services}
        finally:
            node.destroy_node()
        lifecycle = {"/dynamics_node/change_state", "/dynamics_node/get_state"}
        assert (lifecycle <= services) == managed, sorted(services)

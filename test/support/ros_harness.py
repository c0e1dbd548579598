"""What the tests that run ROS in-process share: an executor loop that waits on events, and
a dynamics node with a peer node that talks to it over the loopback.

Waits are on events: `spin_until(predicate)` returns as soon as the predicate holds; its
timeout only turns a hang into a failure, it is never what a test measures. rclpy is
initialised by conftest's `ros` fixture; conftest isolates ROS before any of this runs.
"""


import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from robo_dynamics.ros.dynamics_node.node import DynamicsNode
from robo_dynamics.ros.processes import spin_until
from robo_dynamics_interfaces.msg import ControllerEvent, OperationalSpaceInertia

TIMEOUT = 10.0       # s: only for a wait that would otherwise hang; generous for slow CI


def overrides(params):
    """Parameter overrides from keyword arguments."""
    return [Parameter(name, value=value) for name, value in params.items()]


class Loop:
    """Nodes spun by one single-threaded executor, destroyed together by close()."""

    def __init__(self, *nodes):
        self.executor = SingleThreadedExecutor()
        self.nodes = []
        for node in nodes:
            self.add(node)

    def add(self, node):
        self.nodes.append(node)
        self.executor.add_node(node)
        return node

    def spin_until(self, predicate, timeout=TIMEOUT, action=None):
        """Spin until predicate() holds (then True), or False after `timeout` seconds.
        action: called before each spin (e.g. publish the next input)."""
        return spin_until(self.executor, predicate, timeout, action=action)

    def close(self):
        self.executor.shutdown()
        for node in reversed(self.nodes):
            node.destroy_node()


def closed_loop_nodes(urdf, q0, sim_params=(), node_params=()):
    """(sim_arm, dynamics_node) closing the loop on simulated time: sim_arm at 500 Hz in
    lockstep (its commands are the node's ~/commands), the node on its /clock, no markers;
    sim_params and node_params add to or replace those parameters."""
    from robo_dynamics.ros.sim_arm.node import SimArmNode
    sim = SimArmNode(parameter_overrides=overrides({
        "robot_description_file": urdf, "initial_positions": list(q0), "publish_rate": 500.0,
        "lockstep": True, "lockstep_timeout": 1.0, **dict(sim_params)}),
        cli_args=["--ros-args", "-r", "effort_commands:=/dynamics_node/commands"])
    node = DynamicsNode(parameter_overrides=overrides({
        "robot_description_file": urdf, "use_sim_time": True, "marker_rate": 0.0,
        **dict(node_params)}))
    return sim, node


def state(names, q, qd=None, effort=None):
    """A JointState with the given names and values (plain floats)."""
    return JointState(name=list(names), position=[float(v) for v in q],
                      velocity=[] if qd is None else [float(v) for v in qd],
                      effort=[] if effort is None else [float(v) for v in effort])


class Harness(Loop):
    """A dynamics node (parameters as keyword arguments; node_args: its command-line ROS
    arguments), a peer that subscribes to every output and publishes the inputs, and the
    loop spinning both. inbox[key]: the messages received on each output, in order.
    default_state: (names, q, qd) that stream() publishes unless told otherwise.
    outputs: the keys of TOPICS the peer subscribes to (default all of them).

    Each joint state the peer publishes is stamped with its sequence number (header.stamp.sec;
    the node's clock, not the stamp, decides staleness) and the node stamps the outputs it
    computes from it with that stamp: so a test can tell the output of a state it sent from
    one still on its way from an earlier state."""

    STAMPED = ("gravity", "command_state", "lambda")

    TOPICS = {"gravity": (JointState, "gravity_torques"),
              "command": (Float64MultiArray, "commands"),
              "command_state": (JointState, "commanded_torques"),
              "lambda": (OperationalSpaceInertia, "operational_space_inertia"),
              "markers": (MarkerArray, "markers"), "wrench": (WrenchStamped, "tip_wrench")}

    def __init__(self, node_args=None, default_state=None, outputs=None, **params):
        super().__init__()
        self.default_state = default_state
        self.sequence = 0          # stamp of the last joint state published
        self.node = self.add(DynamicsNode(parameter_overrides=overrides(params),
                                          cli_args=node_args))
        name = self.node.get_fully_qualified_name()
        self.peer = self.add(rclpy.create_node("peer"))
        self.inbox = {key: [] for key in (*self.TOPICS, "diagnostics", "events")}
        for key, (kind, topic) in self.TOPICS.items():
            if outputs is not None and key not in outputs:
                continue
            self.peer.create_subscription(kind, f"{name}/{topic}",
                                          lambda m, key=key: self.inbox[key].append(m), 1000)
        self.peer.create_subscription(DiagnosticArray, "/diagnostics",
                                      self.inbox["diagnostics"].append, 10)
        self.peer.create_subscription(ControllerEvent, f"{name}/events",
                                      self.inbox["events"].append, QoSProfile(
                                          depth=20, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        topic = self.node.joint_states.topic if self.node.joint_states else "/joint_states"
        self.joint_states = self.peer.create_publisher(JointState, topic, 1000)
        self.trajectory = self.peer.create_publisher(JointTrajectory,
                                                     f"{name}/desired_trajectory", 10)
        self.set_point = self.peer.create_publisher(JointState, f"{name}/desired_state", 10)

    def publish_state(self, names, q, qd=None, effort=None):
        msg = state(names, q, qd, effort)
        self.sequence += 1
        msg.header.stamp.sec = self.sequence
        self.joint_states.publish(msg)

    def since(self, key, sequence, start):
        """Messages on `key` computed from the states stamped `sequence` or later (for
        outputs without the input's stamp: those received after index `start`)."""
        if key in self.STAMPED:
            return [m for m in self.inbox[key][start:] if m.header.stamp.sec >= sequence]
        return self.inbox[key][start:]

    def handled(self):
        """Joint states the node has taken so far, accepted or rejected."""
        controller = self.node.controller
        return self.node.health.received + (controller.rejected if controller else 0)

    def send_and_wait(self, names, q, qd=None, effort=None):
        """Publish one joint state and wait until the node has taken one more (its command,
        if any, is then published: the node publishes before it counts the state). Exact
        when nothing else is on its way to the node: settle() first."""
        before = self.handled()
        self.publish_state(names, q, qd, effort)
        assert self.spin_until(lambda: self.handled() > before), "the state never arrived"

    def _state(self, names, q, qd):
        if names is None:
            return self.default_state
        return names, q, qd

    def settle(self):
        """Send the default state and wait for the gravity torques computed from it (found
        by its stamp): every state published before has then been taken or dropped, and
        the outputs of those taken have arrived (one publisher each way, in order). For a
        node that is computing (not stale)."""
        names, q, qd = self.default_state
        start = len(self.inbox["gravity"])
        self.publish_state(names, q, qd)
        sequence = self.sequence
        assert self.spin_until(lambda: self.since("gravity", sequence, start)), \
            "no output for the settling state"

    def stream(self, key, names=None, q=None, qd=None, count=1):
        """Publish the state until `count` more messages arrive on `key`; the last one."""
        names, q, qd = self._state(names, q, qd)
        sequence, start = self.sequence + 1, len(self.inbox[key])
        assert self.spin_until(lambda: len(self.since(key, sequence, start)) >= count,
                               action=lambda: self.publish_state(names, q, qd)), \
            f"nothing on {key}"
        return self.since(key, sequence, start)[-1]

    def stream_until(self, key, predicate, names=None, q=None, qd=None):
        """Publish the state until the last message on `key` satisfies `predicate`."""
        names, q, qd = self._state(names, q, qd)
        sequence, start = self.sequence + 1, len(self.inbox[key])

        def met():
            fresh = self.since(key, sequence, start)
            return fresh and predicate(fresh[-1])
        if not self.spin_until(met, action=lambda: self.publish_state(names, q, qd)):
            raise AssertionError(f"{key}: condition not met; last {self.inbox[key][-1:]}")
        return self.inbox[key][-1]

    def call(self, kind, name, request):
        client = self.peer.create_client(kind, f"{self.node.get_fully_qualified_name()}/{name}")
        assert client.wait_for_service(timeout_sec=TIMEOUT)
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=TIMEOUT)
        self.peer.destroy_client(client)
        return future.result()

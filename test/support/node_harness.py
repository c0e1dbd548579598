"""dynamics_node in the test's process on rd_ur5e (the shipped arm), what the node tier's files
share: the harness streaming (NAMES, Q, QD), a fixture running each test with both backends,
/diagnostics readers, and a simulated clock that times commands exactly."""

import numpy as np
import pytest
from rclpy.time import Time

import robo_dynamics as rd
from robo_dynamics.control.rate_limit import MAX_INTERVAL
import ros_harness
from conftest import SHIPPED


URDF = str(SHIPPED / "rd_ur5e.urdf")


ROBOT = rd.load_robot(URDF)


NAMES = list(ROBOT.joint_names)


REF = rd.make_solver(ROBOT, "pinocchio")


Q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])


QD = np.array([0.2, -0.1, 0.3, 0.0, -0.2, 0.1])


HANG_GUARD = 30.0    # s: only against a hang; the waits end when the event happens


@pytest.fixture(scope="module", autouse=True)
def ros_context(ros):
    yield


class Harness(ros_harness.Harness):
    """The dynamics node on rd_ur5e unless told otherwise, streaming (NAMES, Q, QD)."""

    def __init__(self, **params):
        params.setdefault("robot_description_file", URDF)
        super().__init__(default_state=(NAMES, Q, QD), **params)


@pytest.fixture(params=rd.BACKENDS)
def backend(request):
    """Every node test runs with each backend computing what the node publishes."""
    return request.param


@pytest.fixture
def harness(request, backend):
    h = Harness(backend=backend, **getattr(request, "param", {}))
    yield h
    h.close()


def diagnostic_status(diagnostic_array):
    return diagnostic_array.status[0]


def diagnostic_value(diagnostic_array, key):
    for kv in diagnostic_status(diagnostic_array).values:
        if kv.key == key:
            return kv.value
    return None


# -- the safety envelope through ROS ------------------------------------------------------------
class SimulatedClock:
    """Drives the node's clock (use_sim_time) so that the time between two commands is known
    exactly: publish /clock, wait until the node's clock shows it, then send a joint state
    and wait for the command it gives."""

    def __init__(self, harness):
        from rosgraph_msgs.msg import Clock
        self.harness, self.Clock = harness, Clock
        self.clock = harness.peer.create_publisher(Clock, "/clock", 10)
        self.log = []        # (t, command in model order) of every command received

    def set(self, t):
        h = self.harness
        self.clock.publish(self.Clock(clock=Time(seconds=t).to_msg()))
        ns = Time(seconds=t).nanoseconds
        assert h.spin_until(lambda: h.node.get_clock().now().nanoseconds == ns)

    def state(self, t, q=Q, qd=np.zeros(6), expect_command=True):
        h = self.harness
        self.set(t)
        c = h.node.controller
        if expect_command and (not c.running or
                               t - c.last_state_time > c.settings.stale_timeout):
            h.send_and_wait(NAMES, q, qd)    # the stream (re)starts on the second state
        count = len(h.inbox["command_state"])
        if not expect_command:
            commands = h.node.controller.counts["commands"]
            h.send_and_wait(NAMES, q, qd)
            assert h.node.controller.counts["commands"] == commands
            return None
        h.publish_state(NAMES, q, qd)
        assert h.spin_until(lambda: len(h.inbox["command_state"]) > count)
        command = np.array(h.inbox["command_state"][-1].effort)
        self.log.append((t, command))
        return command


def assert_rate_limited(log, rate):
    times = np.array([t for t, _ in log])
    commands = np.array([c for _, c in log])
    allowed = rate * np.minimum(np.diff(times), MAX_INTERVAL)
    step = np.abs(np.diff(commands, axis=0))
    assert np.all(step <= allowed[:, None] + 1e-9), (step / allowed[:, None]).max()


SIM = {"use_sim_time": True, "max_torque_rate": [1000.0], "kp": [400.0], "kd": [40.0],
       "diagnostics_rate": 50.0, "cross_check_rate": 0.0}

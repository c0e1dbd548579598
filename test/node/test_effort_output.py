"""Pre-serialised effort outputs: what a subscriber decodes (rclpy's own deserialiser) is
exactly the values and stamp that were published, for any names and lengths."""

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robo_dynamics.ros.effort_output import EffortOutput


class Recorder:
    """Stands in for a publisher: keeps what was published, as bytes."""

    def publish(self, message):
        self.sent = message if isinstance(message, bytes) else serialize_message(message)


NAME_SETS = [["j"], ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint"],
             [f"panda_joint{k}" for k in range(1, 8)], ["a" * 37, "bé", "c", "dd"],
             [f"arm_{k:02d}" for k in range(12)]]


@pytest.mark.parametrize("names", NAME_SETS, ids=lambda names: f"{len(names)}-joints")
@pytest.mark.parametrize("fallback", [False, True], ids=["bytes", "message"])
def test_joint_state_decodes_to_the_values_and_stamp_published(names, fallback):
    output = EffortOutput(JointState(name=names), "effort", len(names))
    assert output.buffer is not None           # bytes are patched, not messages built
    if fallback:
        output.buffer = None
    rng = np.random.default_rng(len(names))
    recorder = Recorder()
    for k in range(20):
        values = rng.normal(0.0, 10.0 ** rng.integers(-3, 4), len(names))
        values[k % len(names)] = [-0.0, 1e-300, -1e300, 0.0][k % 4]
        stamp = Time(sec=int(rng.integers(0, 2**31 - 1)), nanosec=int(rng.integers(0, 10**9)))
        output.publish(recorder, values, stamp)
        decoded = deserialize_message(recorder.sent, JointState)
        assert list(decoded.name) == names
        assert np.array_equal(np.array(decoded.effort), values)
        assert np.array_equal(np.signbit(decoded.effort), np.signbit(values))
        assert (decoded.header.stamp.sec, decoded.header.stamp.nanosec) == (stamp.sec,
                                                                            stamp.nanosec)
        assert len(decoded.position) == len(decoded.velocity) == 0


@pytest.mark.parametrize("count", [1, 6, 7, 12])
def test_float64_multi_array_decodes_to_the_values_published(count):
    output = EffortOutput(Float64MultiArray(), "data", count)
    assert output.buffer is not None           # bytes are patched, not messages built
    recorder = Recorder()
    rng = np.random.default_rng(count)
    for _ in range(20):
        values = rng.uniform(-300.0, 300.0, count)
        output.publish(recorder, values)
        decoded = deserialize_message(recorder.sent, Float64MultiArray)
        assert np.array_equal(np.array(decoded.data), values)
        assert len(decoded.layout.dim) == 0 and decoded.layout.data_offset == 0

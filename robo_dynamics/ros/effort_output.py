"""An effort (or position) output published as pre-serialised bytes.

The node publishes the same two messages every cycle: a JointState whose names never change
and a Float64MultiArray of the same length. Only the stamp and the n effort values differ.
Converting the Python message to C and serialising it costs more than the dynamics
(BENCHMARKS.md, "Design measurements"), so the message is serialised once
at start-up and each cycle overwrites its numbers in the byte buffer (CDR, little endian):

    offset 4 .. 12     header.stamp: int32 sec, uint32 nanosec   (JointState only)
    8 n bytes          effort or position (JointState) or data (Float64MultiArray): n
                       float64, found by serialising placeholder values once and locating
                       them

rclpy's Publisher.publish takes the bytes as a serialised message. The layout is verified
at construction by a round trip through rclpy's own deserialiser; if it does not hold, the
output falls back to ordinary message publishing.
"""

import array
import struct

from rclpy.serialization import deserialize_message, serialize_message

_STAMP = struct.Struct("<iI")        # builtin_interfaces/Time in little-endian CDR
_CDR_LITTLE_ENDIAN = b"\x00\x01"     # encapsulation identifier


class EffortOutput:
    """Publish n efforts as `message` (a JointState with names set, or a Float64MultiArray).

    field: "effort" or "position" (JointState; the stamp is set too) or "data"
    (Float64MultiArray).
    buffer: the serialised message whose numbers publish() overwrites, or None when the
    layout did not hold and publish() converts the message each time.
    """

    def __init__(self, message, field, count):
        self.message, self.field, self.count = message, field, count
        self.stamped = hasattr(message, "header")
        self.buffer = self._template()

    def _template(self):
        """The serialised message with placeholder numbers, or None if the layout does not
        hold for this middleware (then publish() converts the message each time)."""
        placeholder = array.array("d", [0.5 + 1e-3 * k for k in range(self.count)])
        setattr(self.message, self.field, placeholder)
        buffer = bytearray(serialize_message(self.message))
        self.offset = buffer.find(placeholder.tobytes())
        if (buffer[:2] != _CDR_LITTLE_ENDIAN or self.offset < 12 or
                buffer.count(placeholder.tobytes()) != 1):
            return None
        probe = array.array("d", [-1.25 * (k + 1) for k in range(self.count)])
        buffer[self.offset:self.offset + 8 * self.count] = probe.tobytes()
        if self.stamped:
            _STAMP.pack_into(buffer, 4, 123456789, 987654321)
        decoded = deserialize_message(bytes(buffer), type(self.message))
        if list(getattr(decoded, self.field)) != list(probe):
            return None
        if self.stamped and (decoded.header.stamp.sec, decoded.header.stamp.nanosec) != (
                123456789, 987654321):
            return None
        self.end = self.offset + 8 * self.count
        return buffer

    def publish(self, publisher, values, stamp=None):
        """Publish `values` (float64 NumPy array of `count`) with `stamp` (JointState)."""
        if self.buffer is None:
            if self.stamped:
                self.message.header.stamp = stamp
            setattr(self.message, self.field, array.array("d", values.tobytes()))
            publisher.publish(self.message)
            return
        buffer = self.buffer
        if self.stamped:
            _STAMP.pack_into(buffer, 4, stamp.sec, stamp.nanosec)
        buffer[self.offset:self.end] = values.tobytes()
        publisher.publish(bytes(buffer))

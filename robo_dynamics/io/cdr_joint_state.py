"""sensor_msgs/JointState read straight from its serialized bytes (little-endian CDR).

A bag of 1 kHz joint states holds hundreds of thousands of messages; a general message
decoder builds a Python object per message. This reader only finds where each array lies in
the bytes, so the arrays can be gathered with NumPy. The layout (OMG CDR, as ROS 2
serializes it): a 4-byte encapsulation header, then the fields in order, each aligned to its
own size counted from the end of that header; a string is a uint32 length (with the
terminating NUL) and its bytes; a sequence is a uint32 count and its elements, with no
alignment padding when it is empty.

    header.stamp.sec int32, header.stamp.nanosec uint32, header.frame_id string,
    name string[], position float64[], velocity float64[], effort float64[]

Anything else (big-endian data, a truncated message) raises ValueError.
"""

import struct

CDR_LITTLE_ENDIAN = b"\x00\x01"
_U32 = struct.Struct("<I")
_TIME = struct.Struct("<iI")
_HEADER = 4                      # the encapsulation header; alignment counts from its end


def split(data):
    """(stamp [ns], name block, name count, position, velocity, effort) of one serialized
    JointState: the name block is the bytes of the name sequence (equal blocks, equal
    names), the arrays are the bytes of float64 little-endian values (b"" when absent)."""
    if data[:2] != CDR_LITTLE_ENDIAN:
        raise ValueError(f"not little-endian CDR (encapsulation {bytes(data[:2]).hex()})")
    end = len(data)
    if end < _HEADER + 16:
        raise ValueError(f"{end} bytes: too short for a JointState")
    sec, nanosec = _TIME.unpack_from(data, _HEADER)
    (length,) = _U32.unpack_from(data, _HEADER + 8)
    pos = _HEADER + 12 + length
    pos += -pos % 4
    if pos + 4 > end:
        raise ValueError("truncated JointState (in header.frame_id)")
    (count,) = _U32.unpack_from(data, pos)
    pos += 4
    names_start = pos
    for _ in range(count):
        pos += -pos % 4
        if pos + 4 > end:
            raise ValueError("truncated JointState (in name)")
        (length,) = _U32.unpack_from(data, pos)
        pos += 4 + length
    names = bytes(data[names_start:pos])
    arrays = []
    for field in ("position", "velocity", "effort"):
        pos += -pos % 4
        if pos + 4 > end:
            raise ValueError(f"truncated JointState (in {field})")
        (size,) = _U32.unpack_from(data, pos)
        pos += 4
        if size:
            pos += -(pos - _HEADER) % 8
        if pos + 8 * size > end:
            raise ValueError(f"truncated JointState (in {field})")
        arrays.append(bytes(data[pos:pos + 8 * size]))
        pos += 8 * size
    return (sec * 1_000_000_000 + nanosec, names, count, *arrays)


def names_of(block, count):
    """The joint names in a name block from split()."""
    names, pos = [], 0
    for _ in range(count):
        pos += -pos % 4                   # the block starts 4-aligned in the message
        (length,) = _U32.unpack_from(block, pos)
        names.append(bytes(block[pos + 4:pos + 3 + length]).decode("utf-8"))
        pos += 4 + length
    return names

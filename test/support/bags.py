"""Joint-state bags for the tests, as rosbag2 writes them (MCAP, profile ros2, CDR), by
mcap-ros2-support: an independent writer of what io/joint_state_bag.py reads."""

from mcap_ros2.writer import Writer

JOINT_STATE_DEFINITION = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""


def as_dict(stamp_ns, names, position, velocity=(), effort=(), frame_id=""):
    return {"header": {"stamp": {"sec": stamp_ns // 10 ** 9, "nanosec": stamp_ns % 10 ** 9},
                       "frame_id": frame_id},
            "name": list(names), "position": [float(v) for v in position],
            "velocity": [float(v) for v in velocity], "effort": [float(v) for v in effort]}


def write_bag(path, messages, topic="/joint_states", definition=JOINT_STATE_DEFINITION,
              datatype="sensor_msgs/msg/JointState", description=None):
    """An MCAP bag as rosbag2 writes it (profile ros2, CDR), by mcap-ros2-support: messages
    are (log time [ns], message as a dict); `description` (URDF text, None: none) recorded
    on /robot_description (std_msgs/String) before them, as robot_state_publisher's
    transient-local message is."""
    with open(path, "wb") as stream:
        writer = Writer(stream, chunk_size=64 * 1024)
        if description is not None:
            string = writer.register_msgdef("std_msgs/msg/String", "string data\n")
            writer.write_message("/robot_description", string, {"data": description},
                                 log_time=messages[0][0] - 1 if messages else 0)
        schema = writer.register_msgdef(datatype, definition)
        for log_time, message in messages:
            writer.write_message(topic, schema, message, log_time=log_time)
        writer.finish()
    return str(path)

"""The robot description a ROS 2 bag recorded: the last std_msgs/String on
/robot_description (robot_state_publisher's transient-local topic, which `ros2 bag record`
keeps when recorded), so that the tools that read a bag take the arm it was recorded on."""

from mcap.reader import make_reader

from .joint_state_bag import bag_files

TOPIC = "/robot_description"
STRING = "std_msgs/msg/String"


def robot_description(path, topic=TOPIC):
    """The URDF text last recorded on `topic` in the bag at `path` (file or directory), or
    None when the bag has no such message. ValueError when the topic carries another type."""
    from mcap_ros2.decoder import DecoderFactory
    text, stamp = None, None
    for file in bag_files(path):
        with open(file, "rb") as stream:
            for schema, channel, message in make_reader(stream).iter_messages(topics=[topic]):
                if schema is None or schema.name != STRING:
                    raise ValueError(f"{file}: '{topic}' carries "
                                     f"{schema.name if schema else 'no schema'}, not {STRING}")
                if stamp is None or message.log_time >= stamp:
                    decode = DecoderFactory().decoder_for(channel.message_encoding, schema)
                    text, stamp = decode(message.data).data, message.log_time
    return text

"""Joint states recorded in a ROS 2 bag (MCAP, as `ros2 bag record -s mcap` writes it), as
arrays in model joint order, and the velocities and accelerations a check needs from them.

Messages are read with the `mcap` library in the order they lie in the file, their arrays
located in the serialized bytes (cdr_joint_state.py; any message that reader cannot take is
decoded by `mcap-ros2-support` instead), and sorted by header stamp at the end (the log time
when the stamp is zero). Joints are matched by name; a message that does not name every
chain joint, or whose arrays do not match its names, or whose positions or velocities are
not finite, is skipped and counted (an effort that is not finite is kept as NaN: no torque
measured there).
"""

import collections
import os

import numpy as np
from mcap.reader import make_reader

from . import cdr_joint_state
from .state_derivatives import WINDOW, velocities_and_accelerations

JOINT_STATE = "sensor_msgs/msg/JointState"
PROGRESS_EVERY = 20_000            # messages between two progress reports

Recording = collections.namedtuple(
    "Recording", ["times", "positions", "velocities", "efforts", "start_ns", "read",
                  "skipped"])
Recording.__doc__ = """times (N,) [s] from start_ns (the first state's stamp, ns since the
epoch), strictly increasing; positions (N, n) [rad or m]; velocities, efforts (N, n) or None
when the messages do not carry them (an effort NaN where not finite); read: messages on the
topic; skipped: reason → count."""


def bag_files(path):
    """The .mcap files of a bag: the file itself, or those in a rosbag2 directory (sorted)."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".mcap"))
        if not files:
            raise ValueError(f"{path}: a directory without .mcap files")
        return files
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file or directory")
    return [path]


def read_joint_states(path, joint_names, topic="/joint_states", progress=None):
    """Recording of the chain joints `joint_names` from `topic` in the bag at `path` (file or
    directory). progress(done, total) is called every PROGRESS_EVERY messages (total: from the
    bag's summary, None without one) and once at the end with done == total. ValueError with
    the reason when the topic is missing, carries another type, or gives fewer than three
    usable states."""
    files = bag_files(path)
    total = _message_count(files, topic)
    layouts, skipped = {}, collections.Counter()
    read = 0
    for file in files:
        channels, decoders = set(), {}
        with open(file, "rb") as stream:
            for schema, channel, message in make_reader(stream).iter_messages(
                    topics=[topic], log_time_order=False):
                if channel.id not in channels:
                    _check_channel(schema, channel, topic, file)
                    channels.add(channel.id)
                try:
                    stamp, block, count, *arrays = cdr_joint_state.split(message.data)
                except ValueError:
                    stamp, block, count, *arrays = _decode(decoders, schema, message.data)
                if any(len(a) not in (0, 8 * count) for a in arrays) or not arrays[0]:
                    skipped["arrays that do not match the names"] += 1
                else:
                    key = (block, count, bool(arrays[1]), bool(arrays[2]))
                    layout = layouts.get(key)
                    if layout is None:
                        layout = layouts[key] = ([], bytearray(), bytearray(), bytearray())
                    layout[0].append(stamp or message.log_time)
                    layout[1].extend(arrays[0])
                    layout[2].extend(arrays[1])
                    layout[3].extend(arrays[2])
                read += 1
                if progress is not None and read % PROGRESS_EVERY == 0:
                    progress(read, total)
    if progress is not None:
        progress(read, read)              # the last call: done == total
    if read == 0:
        raise ValueError(f"no messages on '{topic}' in {path}")
    return _recording(layouts, joint_names, read, skipped, topic)


def _recording(layouts, joint_names, read, skipped, topic):
    """Recording from the gathered bytes of each name layout (read_joint_states)."""
    parts = []
    for (block, count, has_velocity, has_effort), (stamps, *arrays) in layouts.items():
        names = (list(block) if isinstance(block, tuple)
                 else cdr_joint_state.names_of(block, count))
        if len(set(names)) != len(names) or not set(joint_names) <= set(names):
            skipped["without every chain joint (or with a name twice)"] += len(stamps)
            continue
        index = [names.index(name) for name in joint_names]
        columns = [np.frombuffer(a, dtype="<f8").reshape(-1, count)[:, index] if a else None
                   for a in arrays]
        parts.append((np.array(stamps, dtype=np.int64), *columns))
    if not parts:
        raise ValueError(f"no message on '{topic}' names every chain joint {list(joint_names)}"
                         + _reasons(skipped))
    stamps = np.concatenate([p[0] for p in parts])
    q = np.concatenate([p[1] for p in parts])
    qd, effort = (None if any(p[k] is None for p in parts) else
                  np.concatenate([p[k] for p in parts]) for k in (2, 3))
    order = np.argsort(stamps, kind="stable")
    finite = np.isfinite(q[order]).all(axis=1)   # an effort that is not finite stays NaN:
    if qd is not None:                               # its state still counts (many drivers
        finite &= np.isfinite(qd[order]).all(axis=1)     # publish NaN without sensing)
    if effort is not None:
        effort = np.where(np.isfinite(effort), effort, np.nan)
    skipped["positions or velocities that are not finite"] += int((~finite).sum())
    order = order[finite]
    repeated = np.flatnonzero(np.diff(stamps[order]) <= 0) + 1
    skipped["a stamp already seen"] += len(repeated)
    order = np.delete(order, repeated)
    if len(order) < 3:
        raise ValueError(f"'{topic}' has {len(order)} usable joint states of the chain; at "
                         "least 3 are needed" + _reasons(skipped))
    start = int(stamps[order[0]])
    return Recording((stamps[order] - start) * 1e-9, q[order],
                     None if qd is None else qd[order],
                     None if effort is None else effort[order], start, read,
                     {reason: n for reason, n in skipped.items() if n})


def _reasons(skipped):
    counts = [f"{n} with {reason}" for reason, n in skipped.items() if n]
    return f" (skipped: {', '.join(counts)})" if counts else ""


def derivatives(recording, window=WINDOW):
    """(q̇, q̈), each (N, n), of the recorded states (io/state_derivatives.py): q̇ as
    recorded or from the positions, q̈ across `window` seconds."""
    return velocities_and_accelerations(recording.times, recording.positions,
                                        recording.velocities, window)


def _message_count(files, topic):
    """Messages on `topic` from the files' summaries, or None when one has no statistics."""
    total = 0
    for file in files:
        with open(file, "rb") as stream:
            summary = make_reader(stream).get_summary()
        if summary is None or summary.statistics is None:
            return None
        ids = [i for i, channel in summary.channels.items() if channel.topic == topic]
        total += sum(summary.statistics.channel_message_counts.get(i, 0) for i in ids)
    return total


def _check_channel(schema, channel, topic, file):
    """ValueError unless `channel` carries CDR-encoded JointState."""
    name = schema.name if schema is not None else "(no schema)"
    if name != JOINT_STATE or channel.message_encoding != "cdr":
        raise ValueError(f"{file}: '{topic}' carries {name} ({channel.message_encoding}), "
                         f"not {JOINT_STATE} (cdr)")


def _decode(decoders, schema, data):
    """What cdr_joint_state.split gives, through mcap-ros2-support's general decoder
    (decoders: schema id → decoder, filled on first use)."""
    decode = decoders.get(schema.id)
    if decode is None:
        from mcap_ros2.decoder import DecoderFactory
        decode = decoders[schema.id] = DecoderFactory().decoder_for("cdr", schema)
    msg = decode(data)
    arrays = [np.asarray(getattr(msg, field), dtype="<f8").tobytes()
              for field in ("position", "velocity", "effort")]
    stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    return (stamp, tuple(msg.name), len(msg.name), *arrays)

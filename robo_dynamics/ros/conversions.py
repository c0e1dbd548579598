"""Message ↔ NumPy conversions. Joints are matched by name, never by position."""

import numpy as np

from ..control.trajectory import Trajectory


def seconds(stamp):
    """builtin_interfaces/Time → float seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def order_of(names, reference, what="joint_names"):
    """Indices into `names` giving `reference` order; `names` empty means already in order.

    Raises ValueError unless names holds every reference joint exactly once.
    """
    if len(names) == 0:
        return np.arange(len(reference))
    if len(set(names)) != len(names):
        raise ValueError(f"{what} has duplicates")
    position = {name: k for k, name in enumerate(names)}
    missing = [name for name in reference if name not in position]
    extra = [name for name in names if name not in set(reference)]
    if missing or extra:
        raise ValueError(f"{what} must name every chain joint once: missing {missing}, "
                         f"unknown {extra}")
    return np.array([position[name] for name in reference])


def vector(values, count, what, default_zero=False):
    """A finite float array of length `count` from a message field (empty → zeros if allowed)."""
    array = np.asarray(values, dtype=float)
    if array.size == 0 and default_zero:
        return np.zeros(count)
    if array.shape != (count,):
        raise ValueError(f"{what}: expected {count} values, got {array.size}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what}: values must be finite")
    return array


def trajectory_from_msg(msg, joint_names, now):
    """trajectory_msgs/JointTrajectory → Trajectory in model joint order.

    The trajectory starts at header.stamp, or at `now` when the stamp is zero (the
    JointTrajectoryController convention). Every chain joint must be in msg.joint_names.
    """
    index = order_of(list(msg.joint_names), joint_names, "trajectory joint_names")
    if len(msg.points) == 0:
        raise ValueError("trajectory has no points")
    count = len(msg.joint_names)

    def field(name):
        rows = [getattr(point, name) for point in msg.points]
        if all(len(row) == 0 for row in rows):
            return None
        if any(len(row) != count for row in rows):
            raise ValueError(f"every point needs {count} {name} (or none)")
        return np.array(rows, dtype=float)[:, index]

    positions = field("positions")
    if positions is None:
        raise ValueError("trajectory points need positions")
    times = [seconds(point.time_from_start) for point in msg.points]
    start = seconds(msg.header.stamp) or now
    return Trajectory(start, times, positions, field("velocities"), field("accelerations"))

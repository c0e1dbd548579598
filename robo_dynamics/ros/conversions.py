"""Message ↔ NumPy conversions. Joints are matched by name, never by position."""

import math

import numpy as np

from ..control.joint_order import order_of
from ..control.trajectory import SetPoint, trajectory_from_points
from ..spatial.inertia import inertia_tensor

CONDITION_CAP = 1e300     # what a message carries as the condition number of a singular pose


def seconds(stamp):
    """builtin_interfaces/Time (or Duration) → float seconds, converted as the node's clock
    is (nanoseconds × 1e-9): a stamp equal to the clock's time is then the same number to
    the bit (sec + 1e-9 nanosec differs from it in the last bit for a third of the 2 ms
    steps from 0 s, two thirds from today's wall-clock time)."""
    return (stamp.sec * 1_000_000_000 + stamp.nanosec) * 1e-9


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
    points = [(seconds(point.time_from_start), point.positions, point.velocities,
               point.accelerations) for point in msg.points]
    return trajectory_from_points(list(msg.joint_names), points, joint_names,
                                  seconds(msg.header.stamp) or now)


def payload_from_inertia(msg):
    """geometry_msgs/Inertia → (mass [kg], com [x, y, z] [m], inertia (3, 3) [kg·m²] about
    the centre of mass)."""
    return (msg.m, [msg.com.x, msg.com.y, msg.com.z],
            inertia_tensor(msg.ixx, msg.ixy, msg.ixz, msg.iyy, msg.iyz, msg.izz))


def fill_inertia(msg, mass, com, inertia):
    """Write mass [kg], com (3,) [m] and inertia (3, 3) [kg·m²] about the centre of mass into
    the geometry_msgs/Inertia `msg`."""
    I = np.asarray(inertia, dtype=float)
    msg.m = float(mass)
    msg.com.x, msg.com.y, msg.com.z = (float(c) for c in com)
    (msg.ixx, msg.ixy, msg.ixz, msg.iyy, msg.iyz, msg.izz) = (
        I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])


def set_point_from_msg(msg, joint_names):
    """sensor_msgs/JointState (positions, optional velocities, by name) → SetPoint in model
    joint order; ValueError with the reason."""
    index = order_of(list(msg.name), joint_names, "desired_state name")
    n = len(joint_names)
    q = vector(msg.position, n, "desired_state position")[index]
    qd = vector(msg.velocity, n, "desired_state velocity", True)
    return SetPoint(q, qd[index] if len(msg.velocity) else qd)


def matrix_from_quaternion(q):
    """geometry_msgs/Quaternion → rotation matrix (3, 3); ValueError unless it is finite and
    of unit length within 1e-3 (then normalised)."""
    x, y, z, w = q.x, q.y, q.z, q.w
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if not (math.isfinite(norm) and abs(norm - 1.0) <= 1e-3):
        raise ValueError(f"the orientation must be a unit quaternion, got |q| = {norm:.6g}")
    x, y, z, w = x / norm, y / norm, z / norm, w / norm
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])

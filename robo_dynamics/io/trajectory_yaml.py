"""A joint trajectory from YAML in the trajectory_msgs/JointTrajectory layout, as
`ros2 topic echo --once` prints it (header optional, the `---` after it too; or under a
`trajectory:` key, as in a FollowJointTrajectory goal):

    joint_names: [shoulder_pan_joint, ...]
    points:
      - positions: [0.0, -1.57, ...]        # rad or m, in joint_names order
        velocities: [...]                   # optional (every point or none)
        accelerations: [...]                # optional, with velocities
        time_from_start: {sec: 1, nanosec: 500000000}    # or seconds: 1.5
"""

import math

import yaml

from ..control.trajectory import trajectory_from_points

FIELDS = ("positions", "velocities", "accelerations")


def load_trajectory(path, joint_names):
    """Trajectory in model order (`joint_names`), starting at 0, from the YAML file `path`.
    ValueError naming the point and field when the file does not hold one."""
    try:
        with open(path, encoding="utf-8") as stream:
            documents = [d for d in yaml.safe_load_all(stream) if d is not None]
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    try:
        if len(documents) > 1:     # `ros2 topic echo` without --once: one message each
            raise ValueError(f"{len(documents)} messages (YAML documents between '---'); "
                             "keep one (ros2 topic echo --once)")
        return trajectory_from_document(documents[0] if documents else None, joint_names)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def trajectory_from_document(document, joint_names):
    """Trajectory from the parsed YAML `document` (module docstring)."""
    if isinstance(document, dict) and set(document) == {"trajectory"}:
        document = document["trajectory"]
    if not isinstance(document, dict) or "points" not in document:
        raise ValueError("expected a mapping with joint_names and points (the "
                         "trajectory_msgs/JointTrajectory layout)")
    names = document.get("joint_names") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("joint_names must be a list of names")
    if not isinstance(document["points"], list):
        raise ValueError("points must be a list")
    points = []
    for i, point in enumerate(document["points"]):
        if not isinstance(point, dict):
            raise ValueError(f"points[{i}] must be a mapping")
        unknown = set(point) - set(FIELDS) - {"effort", "time_from_start"}
        if unknown:
            raise ValueError(f"points[{i}]: unknown field(s) {sorted(unknown)}")
        arrays = []
        for field in FIELDS:
            values = point.get(field) or []
            if not isinstance(values, list) or not all(_is_number(v) for v in values):
                raise ValueError(f"points[{i}].{field} must be a list of numbers")
            arrays.append([float(v) for v in values])
        points.append((_seconds(point.get("time_from_start"), i), *arrays))
    return trajectory_from_points(names, points, joint_names)


def _seconds(value, i):
    """time_from_start as seconds: a number, or {sec, nanosec}."""
    if _is_number(value):
        seconds = float(value)
    elif isinstance(value, dict) and set(value) <= {"sec", "nanosec"} and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value.values()):
        seconds = value.get("sec", 0) + value.get("nanosec", 0) * 1e-9
    else:
        raise ValueError(f"points[{i}].time_from_start must be seconds or {{sec, nanosec}}, "
                         f"got {value!r}")
    if not math.isfinite(seconds):
        raise ValueError(f"points[{i}].time_from_start must be finite")
    return seconds


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)

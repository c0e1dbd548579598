"""What rviz2 shows of the node's safety next to a person, rclpy-free: where each safety
plane is drawn, and the colour of a watched point by how near its speed is to the speed a
contact allows (control/contact_safety.py, control/safety_planes.py). dynamics_node's
markers (ros/dynamics_node/markers.py) draw them."""

import numpy as np

PLANE_COLOUR = (1.0, 0.15, 0.15, 0.25)      # red, see-through: the forbidden side's face


def plane_patch(plane, near, reach):
    """(centre (3,) [m], R (3, 3), size (3,) [m]) of the square drawn for `plane`: `reach`
    [m] wide, about the point of the plane nearest to `near` (the tool), its z axis the
    normal (toward the allowed side), a hundredth of the reach thick."""
    n = np.asarray(plane.normal, dtype=float)
    centre = np.asarray(near, dtype=float) - plane.distance(near) * n
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]         # any axis not along n
    x = np.cross(helper, n)
    x /= np.linalg.norm(x)
    R = np.column_stack((x, np.cross(n, x), n))
    return centre, R, np.array([reach, reach, reach / 100.0])


def margin_colour(ratio):
    """RGBA of a point moving at `ratio` × its speed limit: green up to half of it, red
    from 0.95 (where the node slows or damps it), blended between (no yellow: the force a
    Cartesian law commands is yellow at the tip)."""
    w = float(np.clip((ratio - 0.5) / 0.45, 0.0, 1.0))
    green, red = np.array((0.1, 0.8, 0.2)), np.array((1.0, 0.1, 0.1))
    return tuple((1.0 - w) * green + w * red) + (0.8,)

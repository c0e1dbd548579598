"""Cartesian safety planes: half-spaces the tool (and the monitored points) must stay in, as
industrial controllers' safety planes and virtual walls. No ROS here.

A plane is a point c and a unit normal n toward the allowed side (base frame); a point p is
d = n · (p − c) [m] inside it (d < 0: beyond). The rules (controller.py, watchdog.py,
speed_scaling.py, safety_limits.py):
- a desired motion whose path would take the tool or a monitored point further beyond a
  plane than it is now (a trajectory's path, a set-point, a Cartesian target) is refused,
  naming the plane, the point and where;
- a trajectory is slowed where a point approaches a plane faster than the safe hold could
  stop it before the plane: the hold brings velocities down as e^(−λt), so a point moving
  toward the plane at v_n stops within v_n / λ; v_n ≤ λ d is kept (λ: hold_decay_rate);
- a watched sphere found beyond a plane (a push, an overshoot) is a breach
  (safety_limits.py): the stop safety_stop_category asks, naming the plane and by how much.

A monitored point is a sphere of its radius (ContactLimit.radii): its distance to a plane
is its centre's less the radius.
"""

import dataclasses

import numpy as np

from .safety_limits import point_names

PATH_STEP, PATH_SAMPLES = 0.01, 1000    # [s], samples: a trajectory's path as checked


@dataclasses.dataclass(frozen=True)
class Plane:
    """point (3,) [m] on the plane, normal (3,) unit, toward the allowed side; base frame."""
    point: tuple
    normal: tuple

    def distance(self, p):
        """[m] how far point(s) p (..., 3) are inside (negative: beyond)."""
        return (np.asarray(p, dtype=float) - self.point) @ np.asarray(self.normal)


def planes_from(values):
    """The Planes of a safety_planes parameter: 6 numbers per plane (a point x, y, z [m]
    and a normal toward the allowed side, base frame); ValueError with the reason (also a
    plane that leaves the arm's base beyond it)."""
    if not values:
        return ()
    if len(values) % 6:
        raise ValueError(f"safety_planes needs 6 values per plane (a point, a normal), got "
                         f"{len(values)}")
    planes = []
    for k, row in enumerate(np.asarray(values, dtype=float).reshape(-1, 6)):
        size = np.linalg.norm(row[3:])
        if not np.isfinite(row).all() or size < 1e-9:
            raise ValueError(f"safety plane {k}: its values must be finite and its normal "
                             f"not zero, got {row.tolist()}")
        plane = Plane(tuple(row[:3]), tuple(row[3:] / size))
        if plane.distance(np.zeros(3)) < 0.0:
            raise ValueError(f"safety plane {k} leaves the arm's base (base_link's origin) "
                             "on its forbidden side: its normal points toward the side the "
                             "arm may be in")
        planes.append(plane)
    return tuple(planes)


def beyond(planes, points, now_points=None, tolerance=1e-3, radii=0.0):
    """(plane index, point index, sample index, depth [m]) of the deepest crossing, or
    None: spheres of `radii` (k,) [m] about points (k, N, 3) [m] (k named points along N
    samples) further beyond a plane than about `now_points` (k, 3) now (None: than 0), by
    more than `tolerance` [m]."""
    worst = None
    radii = np.broadcast_to(np.asarray(radii, dtype=float), (len(points),))
    for i, plane in enumerate(planes):
        d = plane.distance(points) - radii[:, None]                  # (k, N)
        allowed = -tolerance if now_points is None else np.minimum(
            plane.distance(now_points) - radii, 0.0)[:, None] - tolerance
        excess = allowed - d
        j, n = np.unravel_index(int(np.argmax(excess)), excess.shape)
        if excess[j, n] > 0.0 and (worst is None or -d[j, n] > worst[3]):
            worst = (i, int(j), int(n), float(-d[j, n]))
    return worst


def watched_points(solver, q, contact):
    """(names, positions (k, N, 3) [m], radii (k,) [m]) of the tool and the monitored
    points (contact.points; contact may be None) at joint positions q (N, n)."""
    positions = [np.array([solver.unchecked.tip_pose(x)[1] for x in q])]
    for link, point in (contact.points if contact is not None else ()):
        positions.append(solver.point_jacobian_batch(q, link, point)[0])
    radii = contact.radii if contact is not None else (0.0,)
    return point_names(contact), np.stack(positions), np.asarray(radii, dtype=float)


def motion_fault(motion, solver, q_now, settings):
    """Why `motion` (a Trajectory, TrajectoryGoal, SetPoint or CartesianTarget) would take
    a watched point further beyond a safety plane than it is at q_now (n,), or None: a
    trajectory's path sampled every PATH_STEP (at most PATH_SAMPLES), a set-point's pose, a
    Cartesian target's tool position (its way is a straight line: convex)."""
    planes = settings.planes
    if not planes:
        return None
    contact = settings.contact
    names, now, radii = watched_points(solver, q_now[None], contact)
    path = getattr(motion, "trajectory", motion)
    if motion.mode != "tracking":                                 # a Cartesian target
        names, now, radii = names[:1], now[:1], radii[:1]
        points, times = np.asarray(motion.p_d, dtype=float)[None, None], [None]
    else:
        if hasattr(path, "sample_many"):
            end = float(path.times[-1])
            times = np.linspace(0.0, end, int(min(PATH_SAMPLES, end / PATH_STEP + 2)))
            q = path.sample_many(times)[0]
        else:
            times, q = [None], np.atleast_2d(np.asarray(motion.positions, dtype=float))
        points = watched_points(solver, q, contact)[1]
    found = beyond(planes, points, now[:, 0], radii=radii)
    if found is None:
        return None
    plane, point, sample, depth = found
    when = "" if times[sample] is None else f" at t = {times[sample]:.3g} s"
    return (f"{names[point]} would be {1e3 * depth:.3g} mm beyond safety plane {plane}"
            f"{when}")

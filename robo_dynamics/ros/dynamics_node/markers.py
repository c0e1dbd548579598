"""What the node draws in rviz2, sized by the arm (rviz/scale.ArmScale: its reach and mass):
the mass a person would feel at the tip (an ellipsoid), the links' centres of mass, a
table of the gravity torques beside the base, the safety planes and the watched points by
their speed margin, and in a Cartesian mode the target frame, the stiffness ellipsoid and
the force the law commands. Colours: no two markers that meet
at the tip share one (docs/node.md, "In rviz2"). Frames are URDF link names, so markers
line up with the TF tree that robot_state_publisher broadcasts from the same description."""

import numpy as np
from geometry_msgs.msg import Point, Quaternion, Vector3, WrenchStamped
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from ...algorithms.operational_space import reflected_mass
from ...control.contact_safety import speed_ratio
from ...control.safety_limits import point_states
from ...rviz.safety import PLANE_COLOUR, margin_colour, plane_patch
from ...rviz.scale import arm_scale

NAMESPACE_MASS, NAMESPACE_MASS_NOTE = "reflected_mass", "reflected_mass_note"
NAMESPACE_COM, NAMESPACE_TORQUE = "centre_of_mass", "gravity_torques"
NAMESPACE_TARGET, NAMESPACE_STIFFNESS, NAMESPACE_WRENCH = "cartesian_target", \
    "stiffness_ellipsoid", "cartesian_wrench"
NAMESPACE_PLANES, NAMESPACE_SPEED = "safety_planes", "speed_margin"
COLOURS = {"mass": (0.2, 0.5, 1.0, 0.45), "com": (1.0, 0.5, 0.0, 0.9),
           "text": (1.0, 1.0, 1.0, 1.0), "stiffness": (0.7, 0.3, 0.9, 0.3),
           "force": (1.0, 0.85, 0.0, 1.0)}    # target axes: red, green, blue (x, y, z)


def quaternion_from_matrix(R):
    """Unit quaternion (x, y, z, w) of a rotation matrix (Shepperd's method)."""
    trace = np.trace(R)
    if trace > 0.0:
        s = 2.0 * np.sqrt(trace + 1.0)
        return Quaternion(x=(R[2, 1] - R[1, 2]) / s, y=(R[0, 2] - R[2, 0]) / s,
                          z=(R[1, 0] - R[0, 1]) / s, w=0.25 * s)
    i = int(np.argmax(np.diag(R)))
    j, k = (i + 1) % 3, (i + 2) % 3
    s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
    q = np.empty(4)
    q[i] = 0.25 * s
    q[j] = (R[j, i] + R[i, j]) / s
    q[k] = (R[k, i] + R[i, k]) / s
    q[3] = (R[k, j] - R[j, k]) / s
    return Quaternion(x=q[0], y=q[1], z=q[2], w=q[3])


def _marker(header, namespace, index, kind, color, frame_id=None):
    """A marker with its own copy of the header (frame_id replaced when given)."""
    own = Header(stamp=header.stamp, frame_id=header.frame_id if frame_id is None else frame_id)
    marker = Marker(header=own, ns=namespace, id=index, type=kind, action=Marker.ADD)
    marker.color = ColorRGBA(r=color[0], g=color[1], b=color[2], a=color[3])
    marker.pose.orientation.w = 1.0
    return marker


def reflected_mass_markers(header, tip_position, J_v, M_inv, scale):
    """At the tip (header.frame_id = base link): the ellipsoid of the mass a person would
    feel pushing it, m(u) = 1/(uᵀ J_v M⁻¹ J_vᵀ u), semi-axes along its principal directions,
    scale.metres_per_kg per kg, at most half the reach; where one is clipped (near a
    singularity), a text beside it says so and gives the mass."""
    masses, axes = reflected_mass(J_v, M_inv)
    if np.linalg.det(axes) < 0.0:
        axes[:, 0] = -axes[:, 0]
    marker = _marker(header, NAMESPACE_MASS, 0, Marker.SPHERE, COLOURS["mass"])
    marker.pose.position = _point(tip_position)
    marker.pose.orientation = quaternion_from_matrix(axes)
    cap = 0.5 * scale.reach
    semi = np.minimum(scale.metres_per_kg * masses, cap)
    if J_v.shape[1] < 3:   # flat where fewer joints can never move the tip: its plane or line
        semi[~np.isfinite(masses)] = 0.0
    diameters = np.maximum(2.0 * semi, 1e-3)
    marker.scale = Vector3(x=float(diameters[0]), y=float(diameters[1]), z=float(diameters[2]))
    markers = [marker]
    clipped = scale.metres_per_kg * masses > cap
    if J_v.shape[1] < 3:            # fewer joints than directions: some never move (no note)
        clipped &= np.isfinite(masses)
    if np.any(clipped):
        note = _marker(header, NAMESPACE_MASS_NOTE, 0, Marker.TEXT_VIEW_FACING,
                       COLOURS["text"])
        note.pose.position = _point(np.asarray(tip_position) + [0.0, 0.0, 0.6 * cap])
        heaviest = float(np.max(masses[clipped]))
        note.text = "tip mass clipped:\n" + (
            "singular" if not np.isfinite(heaviest) else f"{heaviest:.0f} kg, near singular")
        note.scale.z = scale.label_height
        markers.append(note)
    return markers


def _point(p):
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def _arrow(header, namespace, index, color, start, end, shaft=0.01):
    marker = _marker(header, namespace, index, Marker.ARROW, color)
    marker.points = [_point(start), _point(end)]
    marker.scale = Vector3(x=shaft, y=2.0 * shaft, z=2.0 * shaft)
    return marker


def cartesian_markers(header, R_d, p_d, K, p_tip, F, lifetime, scale, max_stiffness):
    """In the base frame: the target frame (R_d, p_d [m]) as red, green and blue arrows,
    reach/8 long; the ellipsoid of the stiffness K[:3, :3] at p_d along K's eigenvectors, R/4
    at `max_stiffness` [N/m]; the commanded force F[:3] [N] from the tip p_tip at
    scale.metres_per_newton (at most R/2). Each lasts `lifetime` [s] unless refreshed."""
    R_d, p_d, p_tip = (np.asarray(x, dtype=float) for x in (R_d, p_d, p_tip))
    axis_length, max_size = scale.reach / 8.0, 0.5 * scale.reach
    metres_per_stiffness = 0.25 * scale.reach / max_stiffness
    metres_per_newton = scale.metres_per_newton
    markers = [_arrow(header, NAMESPACE_TARGET, i, color, p_d, p_d + axis_length * R_d[:, i],
                      shaft=scale.reach / 150.0)
               for i, color in enumerate(((1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0),
                                          (0.0, 0.0, 1.0, 1.0)))]
    k, axes = np.linalg.eigh(0.5 * (K[:3, :3] + K[:3, :3].T))
    if np.linalg.det(axes) < 0.0:
        axes[:, 0] = -axes[:, 0]
    ellipsoid = _marker(header, NAMESPACE_STIFFNESS, 0, Marker.SPHERE, COLOURS["stiffness"])
    ellipsoid.pose.position = _point(p_d)
    ellipsoid.pose.orientation = quaternion_from_matrix(axes)
    diameters = np.clip(2.0 * metres_per_stiffness * np.maximum(k, 0.0), 1e-3, 2.0 * max_size)
    ellipsoid.scale = Vector3(x=float(diameters[0]), y=float(diameters[1]),
                              z=float(diameters[2]))
    markers.append(ellipsoid)
    force = metres_per_newton * np.asarray(F[:3], dtype=float)
    length = np.linalg.norm(force)
    if length > max_size:
        force *= max_size / length
    markers.append(_arrow(header, NAMESPACE_WRENCH, 0, COLOURS["force"], p_tip, p_tip + force,
                          shaft=scale.reach / 100.0))
    seconds = int(lifetime)
    for marker in markers:
        marker.lifetime.sec, marker.lifetime.nanosec = seconds, int(1e9 * (lifetime - seconds))
    return markers


def centre_of_mass_markers(header, model, scale, prefix=""):
    """A sphere at every body's centre of mass, in its link's frame (after `prefix`): a tenth
    of the reach for the arm's whole mass, by the cube root, at least a hundredth."""
    markers = []
    for i, link in enumerate(model.body_links):
        marker = _marker(header, NAMESPACE_COM, i, Marker.SPHERE, COLOURS["com"],
                         prefix + link)
        marker.pose.position = _point(model.com[i])
        share = max(float(model.mass[i]), 0.0) / scale.mass
        d = float(np.clip(0.1 * scale.reach * share ** (1.0 / 3.0), scale.reach / 100.0,
                          scale.reach / 10.0))
        marker.scale = Vector3(x=d, y=d, z=d)
        markers.append(marker)
    return markers


def torque_table(header, model, tau, scale):
    """The joints' gravity torques as one text, a line each, its top a fifth of the reach
    below the base, where the arm seldom is (labels at the joints overlap at a wrist)."""
    lines = [f"{name}: {round(float(tau[i]), 2) + 0.0:+.2f} "      # + 0.0: no "-0.00"
             f"{'N' if model.joint_types[i] == 'prismatic' else 'N·m'}"
             for i, name in enumerate(model.joint_names)]
    marker = _marker(header, NAMESPACE_TORQUE, 0, Marker.TEXT_VIEW_FACING, COLOURS["text"])
    marker.text = "gravity torques\n" + "\n".join(lines)
    height = 1.2 * scale.label_height * (len(lines) + 1)          # as rviz2 spaces lines
    marker.pose.position = Point(x=0.0, y=0.0, z=-0.2 * scale.reach - 0.5 * height)
    marker.scale.z = scale.label_height
    return marker


def safety_markers(header, planes, watched, tip_position, scale):
    """In the base frame: each safety plane a see-through red square about the point
    nearest the tip; each watched point (position, speed / its limit) a sphere coloured by
    that ratio (rviz/safety.py)."""
    markers = []
    for i, plane in enumerate(planes):
        centre, R, size = plane_patch(plane, tip_position, scale.reach)
        marker = _marker(header, NAMESPACE_PLANES, i, Marker.CUBE, PLANE_COLOUR)
        marker.pose.position, marker.pose.orientation = _point(centre), quaternion_from_matrix(R)
        marker.scale = Vector3(x=float(size[0]), y=float(size[1]), z=float(size[2]))
        markers.append(marker)
    for i, (position, ratio) in enumerate(watched):
        marker = _marker(header, NAMESPACE_SPEED, i, Marker.SPHERE, margin_colour(ratio))
        marker.pose.position, d = _point(position), scale.reach / 15.0
        marker.scale = Vector3(x=d, y=d, z=d)
        markers.append(marker)
    return markers


def marker_array(header, model, tip_position, J_v, M_inv, tau_gravity, scale, labels=True,
                 cartesian=(), prefix="", safety=()):
    """All markers for one state; header.frame_id: the base link's frame. labels: the table
    of gravity torques; cartesian: cartesian_markers' markers; prefix: frame_prefix;
    safety: safety_markers' markers."""
    markers = reflected_mass_markers(header, tip_position, J_v, M_inv, scale) + list(safety)
    markers += centre_of_mass_markers(header, model, scale, prefix)
    if labels:
        markers.append(torque_table(header, model, tau_gravity, scale))
    return MarkerArray(markers=markers + list(cartesian))


def publish(live, outputs, clock, rate, shown):
    """~/markers and ~/tip_wrench (outputs: the node's Outputs) at the latest state of
    `live` (live.py); clock: the node's rclpy Clock (the stamps); rate [Hz]: marker_rate,
    > 0 (this runs on its timer; the Cartesian markers last three periods); shown:
    {"labels": marker_labels, "max_stiffness": the largest translational
    cartesian.max_stiffness [N/m]}. The dynamics under the lock (the solver is the
    joint-state thread's too); building and publishing the messages outside it, so that a
    joint state never waits for them."""
    with live.lock:
        if live.controller is None or not live.controller.running:
            return
        try:
            (q, qd), model, solver = live.controller.measured_state(), live.model, live.solver
            R_tip, p_tip = solver.tip_pose(q)
            J_v, M_inv = solver.jacobian(q)[:3], solver.mass_matrix_inverse(q)
            wrench = solver.operational_space(q, np.zeros_like(q)).gravity_wrench
            tau_g = solver.gravity(q)
            target = live.controller.cartesian_target()
            F = None if target is None else target.commanded_wrench(
                solver, q, qd, live.controller.last_state_time)
            settings = live.controller.settings
            watched = _watched(solver, q, qd, M_inv, settings.contact)
        except Exception as exc:
            live.failed(exc, "markers")
            return
    try:
        scale = arm_scale(model.urdf_xml)           # cached: the same text, the same scale
        header = Header(stamp=clock.now().to_msg(), frame_id=live.frame(model.base_link))
        cartesian = () if F is None or not np.all(np.isfinite(F)) else cartesian_markers(
            header, target.R_d, target.p_d, target.K, p_tip, F, 3.0 / rate, scale,
            shown["max_stiffness"])
        if np.all(np.isfinite(J_v)) and np.all(np.isfinite(M_inv)):
            outputs.markers.publish(marker_array(
                header, model, p_tip, J_v, M_inv, tau_g, scale, shown["labels"], cartesian,
                live.frame_prefix, safety_markers(header, settings.planes, watched, p_tip,
                                                  scale)))
        force, torque = R_tip.T @ wrench[:3], R_tip.T @ wrench[3:]
        msg = WrenchStamped(header=Header(stamp=header.stamp,
                                          frame_id=live.frame(model.tip_link)))
        (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = force.tolist()
        (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = torque.tolist()
        if np.all(np.isfinite(wrench)):
            outputs.tip_wrench.publish(msg)
    except Exception as exc:
        with live.lock:
            live.failed(exc, "markers")


def _watched(solver, q, qd, M_inv, contact):
    """[(position (3,) [m], speed / the speed allowed)] of the tool and the monitored
    points (none without a contact limit)."""
    if contact is None:
        return []
    return [(p, speed_ratio(J_v, M_inv, qd, contact, i))
            for i, (p, J_v) in enumerate(point_states(solver, q, contact))]

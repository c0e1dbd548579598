"""What the node draws in rviz2: the Λ ellipsoid at the tip, link centres of mass, each
joint's gravity torque, and in a Cartesian mode the target frame, the stiffness ellipsoid
and the wrench the law commands. Frames are URDF link names, so markers line up with the TF tree
that robot_state_publisher broadcasts from the same description."""

import numpy as np
from geometry_msgs.msg import Point, Quaternion, Vector3, WrenchStamped
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

NAMESPACE_LAMBDA, NAMESPACE_COM, NAMESPACE_TORQUE = "lambda_ellipsoid", "centre_of_mass", \
    "gravity_torque"
NAMESPACE_TARGET, NAMESPACE_STIFFNESS, NAMESPACE_WRENCH = "cartesian_target", \
    "stiffness_ellipsoid", "cartesian_wrench"


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


def lambda_ellipsoid(header, tip_position, Lambda, metres_per_kg=0.02, max_axis=1.0):
    """Ellipsoid at the tip (header.frame_id = base link) whose semi-axes lie along the
    eigenvectors of the translational block of Λ, each as long as the effective mass in
    that direction times `metres_per_kg` (capped at max_axis m)."""
    mass, axes = np.linalg.eigh(0.5 * (Lambda[:3, :3] + Lambda[:3, :3].T))
    if np.linalg.det(axes) < 0.0:
        axes[:, 0] = -axes[:, 0]
    marker = _marker(header, NAMESPACE_LAMBDA, 0, Marker.SPHERE, (0.2, 0.6, 1.0, 0.5))
    marker.pose.position = Point(x=float(tip_position[0]), y=float(tip_position[1]),
                                 z=float(tip_position[2]))
    marker.pose.orientation = quaternion_from_matrix(axes)
    diameters = np.clip(2.0 * metres_per_kg * np.maximum(mass, 0.0), 1e-3, 2.0 * max_axis)
    marker.scale = Vector3(x=float(diameters[0]), y=float(diameters[1]), z=float(diameters[2]))
    return marker


def _point(p):
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


def _arrow(header, namespace, index, color, start, end, shaft=0.01):
    marker = _marker(header, namespace, index, Marker.ARROW, color)
    marker.points = [_point(start), _point(end)]
    marker.scale = Vector3(x=shaft, y=2.0 * shaft, z=2.0 * shaft)
    return marker


def cartesian_markers(header, R_d, p_d, K, p_tip, F, lifetime, axis_length=0.1,
                      metres_per_stiffness=2e-4, metres_per_newton=0.01, max_size=1.0):
    """In the base frame (header.frame_id): the target frame (R_d, p_d [m]) as red, green and
    blue arrows `axis_length` long; the ellipsoid of the translational stiffness K[:3, :3]
    at p_d, its semi-axes along K's eigenvectors, each k [N/m] × metres_per_stiffness long;
    the commanded force F[:3] [N] as an arrow from the tip p_tip, metres_per_newton per N
    (sizes capped at max_size m). Each marker disappears after `lifetime` [s] unless
    refreshed, so none outlives the mode."""
    R_d, p_d, p_tip = (np.asarray(x, dtype=float) for x in (R_d, p_d, p_tip))
    markers = [_arrow(header, NAMESPACE_TARGET, i, color, p_d, p_d + axis_length * R_d[:, i])
               for i, color in enumerate(((1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 0.0, 1.0),
                                          (0.0, 0.0, 1.0, 1.0)))]
    k, axes = np.linalg.eigh(0.5 * (K[:3, :3] + K[:3, :3].T))
    if np.linalg.det(axes) < 0.0:
        axes[:, 0] = -axes[:, 0]
    ellipsoid = _marker(header, NAMESPACE_STIFFNESS, 0, Marker.SPHERE, (0.9, 0.3, 0.9, 0.35))
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
    markers.append(_arrow(header, NAMESPACE_WRENCH, 0, (1.0, 0.8, 0.0, 1.0), p_tip,
                          p_tip + force))
    seconds = int(lifetime)
    for marker in markers:
        marker.lifetime.sec, marker.lifetime.nanosec = seconds, int(1e9 * (lifetime - seconds))
    return markers


def centre_of_mass_markers(header, model, metres_per_kg=0.01):
    """A sphere at every body's centre of mass, in that body's link frame, sized by mass."""
    markers = []
    for i, link in enumerate(model.body_links):
        marker = _marker(header, NAMESPACE_COM, i, Marker.SPHERE, (1.0, 0.5, 0.0, 0.9), link)
        c = model.com[i]
        marker.pose.position = Point(x=float(c[0]), y=float(c[1]), z=float(c[2]))
        d = float(np.clip(metres_per_kg * model.mass[i], 0.01, 0.15))
        marker.scale = Vector3(x=d, y=d, z=d)
        markers.append(marker)
    return markers


def torque_markers(header, model, tau):
    """The gravity torque of each joint as text at the joint (its child link's origin)."""
    markers = []
    for i, name in enumerate(model.joint_names):
        link = model.body_links[model.body_joints.index(name)]
        marker = _marker(header, NAMESPACE_TORQUE, i, Marker.TEXT_VIEW_FACING,
                         (1.0, 1.0, 1.0, 1.0), link)
        unit = "N" if model.joint_types[i] == "prismatic" else "N·m"
        marker.text = f"{name}: {tau[i]:+.2f} {unit}"
        marker.scale.z = 0.04
        markers.append(marker)
    return markers


def marker_array(header, model, tip_position, Lambda, tau_gravity, cartesian=()):
    """All markers for one state; header.frame_id must be the base link. cartesian: the
    markers of cartesian_markers, if any."""
    markers = [lambda_ellipsoid(header, tip_position, Lambda)]
    markers += centre_of_mass_markers(header, model)
    markers += torque_markers(header, model, tau_gravity)
    return MarkerArray(markers=markers + list(cartesian))


def publish(live, outputs, clock, rate):
    """~/markers and ~/tip_wrench (outputs: the node's Outputs) at the latest state of
    `live` (live.py); clock: the node's rclpy Clock (the stamps); rate [Hz]: marker_rate,
    > 0 (this runs on its timer; the Cartesian markers last three periods). The dynamics
    under the lock (the solver is the joint-state thread's too); building and publishing
    the messages, most of the time (about half a millisecond), outside it, so that a joint
    state never waits for them."""
    with live.lock:
        if live.controller is None or not live.controller.running:
            return
        try:
            (q, qd), model, solver = live.controller.measured_state(), live.model, live.solver
            R_tip, p_tip = solver.tip_pose(q)
            result = solver.operational_space(q, np.zeros_like(q))
            tau_g = solver.gravity(q)
            target = live.controller.cartesian_target()
            F = None if target is None else target.commanded_wrench(
                solver, q, qd, live.controller.last_state_time)
        except Exception as exc:
            live.failed(exc, "markers")
            return
    try:
        header = Header(stamp=clock.now().to_msg(), frame_id=model.base_link)
        cartesian = () if F is None or not np.all(np.isfinite(F)) else cartesian_markers(
            header, target.R_d, target.p_d, target.K, p_tip, F, lifetime=3.0 / rate)
        if np.all(np.isfinite(result.Lambda)):
            outputs.markers.publish(marker_array(header, model, p_tip, result.Lambda,
                                                      tau_g, cartesian))
        force, torque = R_tip.T @ result.gravity_wrench[:3], R_tip.T @ result.gravity_wrench[3:]
        msg = WrenchStamped(header=Header(stamp=header.stamp, frame_id=model.tip_link))
        (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = force.tolist()
        (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z) = torque.tolist()
        if np.all(np.isfinite(result.gravity_wrench)):
            outputs.tip_wrench.publish(msg)
    except Exception as exc:
        with live.lock:
            live.failed(exc, "markers")

"""Build a RobotModel from a URDF: choose the chain, fold fixed joints, lump inertia.

Joints that are movable but not on the base→tip chain (gripper fingers, side branches) are
locked at q = 0 and their links' inertia is lumped onto the chain body they hang from.
Links above `base_link` do not move and are ignored. Physical checks apply only to the
links whose mass enters the chain's dynamics; the structure of the whole tree is checked.
Mimic joints in the chain follow their master joint, which must be in the chain too.
"""

import warnings

import numpy as np

from ..errors import ModelWarning, URDFError
from ..spatial.inertia import combine, inertia_tensor, rigid_body_problems
from ..spatial.rotations import homogeneous, rpy_to_matrix
from .robot_model import (CONTINUOUS, PRISMATIC, REVOLUTE, STANDARD_GRAVITY, RobotModel,
                          gravity_vector)
from .source import read_description
from .urdf_document import parse_urdf

MOVABLE = (REVOLUTE, CONTINUOUS, PRISMATIC)
UNSUPPORTED = ("floating", "planar")


def load_robot(source, base_link=None, tip_link=None, gravity=STANDARD_GRAVITY,
               strict=False):
    """Load the serial chain base_link → tip_link of a URDF.

    source: URDF XML text, a .urdf path or a .xacro path.
    base_link: default the URDF root. tip_link: default the only leaf link below a movable
    joint (URDFError listing the candidates when there are several).
    gravity: m/s², expressed in the base_link frame (default: z up).
    strict: refuse what is only doubtful (an inertia that breaks the triangle inequality)
    instead of loading it with a ModelWarning (also listed in the model's `warnings`).
    Raises URDFError naming the element and the problem.
    """
    xml_text, where = read_description(source)
    robot, dynamics_xml = parse_urdf(xml_text, where)
    tree = _Tree(robot)
    base_link = base_link or tree.root
    tree.require_link(base_link, "base_link")
    tip_link = tip_link or tree.default_tip(base_link)
    tree.require_link(tip_link, "tip_link")
    path = _chain(tree, base_link, tip_link)
    bodies = [joint for joint in path if joint.type in MOVABLE]
    coupling = _Coupling(tree, bodies)
    columns, members, tip, notes = _body_columns(tree, path, bodies, strict)
    notes = list(coupling.notes) + notes
    _check_every_joint_moves_mass(coupling.coordinates, coupling, columns)
    body_names = {joint.name for joint in bodies}
    locked = tuple(sorted(
        joint.name for joint in tree.joints_below(bodies[0].child)
        if joint.type in MOVABLE and joint.name not in body_names))
    for note in notes:
        warnings.warn(note, ModelWarning, stacklevel=2)
    coordinates = coupling.coordinates
    return RobotModel(
        name=robot.name or "robot",
        base_link=base_link,
        tip_link=tip_link,
        joint_names=tuple(joint.name for joint in coordinates),
        joint_types=tuple(joint.type for joint in coordinates),
        body_links=tuple(joint.child for joint in bodies),
        body_joints=tuple(joint.name for joint in bodies),
        body_types=tuple(joint.type for joint in bodies),
        coupling=coupling.G,
        coupling_offset=coupling.offset,
        tip_rotation=tip[:3, :3],
        tip_translation=tip[:3, 3],
        gravity=gravity_vector(gravity),
        locked_joints=locked,
        body_members=tuple(members),
        warnings=tuple(notes),
        urdf_xml=dynamics_xml,
        **{key: np.array(value, dtype=float) for key, value in columns.items()},
        **_joint_columns(coordinates, bodies, coupling),
    )


def _chain(tree, base_link, tip_link):
    """The joints from base_link to tip_link, each of a type the chain can hold, at least
    one of them movable. URDFError naming the joint otherwise."""
    path = tree.path(base_link, tip_link)
    for joint in path:
        if joint.type in UNSUPPORTED:
            raise URDFError(
                f"joint '{joint.name}' ({joint.type}): only revolute, continuous, prismatic "
                "and fixed joints are supported in the chain")
        if joint.type not in MOVABLE + ("fixed",):
            raise URDFError(f"joint '{joint.name}': unknown joint type '{joint.type}'")
    if not any(joint.type in MOVABLE for joint in path):
        raise URDFError(
            f"no movable joint between base_link '{base_link}' and tip_link '{tip_link}'")
    return path


def _body_columns(tree, path, bodies, strict):
    """Each moving body's joint frame (in the body before it, through the fixed joints on
    the path), axis, and its links' inertials lumped (ModelWarning notes for doubtful
    ones): (columns, the links of each body, the tip's frame in the last body (4, 4),
    notes)."""
    body_names = {joint.name for joint in bodies}
    notes, members = [], []
    columns = {key: [] for key in (
        "origin_rotation", "origin_translation", "axis", "mass", "com", "inertia")}
    T_prev = np.eye(4)  # body i−1 (or base) → current link, through fixed joints on the path
    for joint in path:
        T_origin = origin_transform(joint.origin)
        if joint.type not in MOVABLE:
            T_prev = T_prev @ T_origin
            continue
        T_joint = T_prev @ T_origin
        columns["origin_rotation"].append(T_joint[:3, :3])
        columns["origin_translation"].append(T_joint[:3, 3])
        columns["axis"].append(unit_axis(joint))
        rigid = tree.rigid_links(joint.child, body_names)
        for link, _ in rigid:
            notes += check_inertial(tree.links[link], strict)
        mass, com, inertia = _lump(rigid, tree.links)
        members.append(tuple(link for link, _ in rigid))
        columns["mass"].append(mass)
        columns["com"].append(com)
        columns["inertia"].append(inertia)
        T_prev = np.eye(4)
    return columns, members, T_prev, notes


class _Coupling:
    """The chain's coordinates (its joints that mimic no other) and q_body = G q + offset.

    A mimic of a mimic is followed to the joint that moves by itself, composing the linear
    maps. The master must be in the chain: a mimic of a joint elsewhere in the tree would
    move a branch a serial chain cannot hold. Off-chain joints that mimic a chain joint stay
    locked at 0 like every off-chain joint; that is said in a note.
    """

    def __init__(self, tree, bodies):
        names = {joint.name for joint in bodies}
        maps = [self._resolve(tree, joint, names) for joint in bodies]
        self.coordinates = [joint for joint, (master, _, _) in zip(bodies, maps)
                            if master == joint.name]
        column = {joint.name: j for j, joint in enumerate(self.coordinates)}
        self.G = np.zeros((len(bodies), len(self.coordinates)))
        self.offset = np.zeros(len(bodies))
        for i, (master, multiplier, offset) in enumerate(maps):
            self.G[i, column[master]] = multiplier
            self.offset[i] = offset
        self.notes = []
        for joint in tree.joints_below(bodies[0].parent):
            if joint.name in names or joint.mimic is None:
                continue
            master = joint.mimic.joint
            if master in names:
                self.notes.append(
                    f"joint '{joint.name}' mimics chain joint '{master}' but is not on the "
                    f"chain: it stays locked at 0 and its links' mass is lumped at that pose")

    @staticmethod
    def _resolve(tree, joint, chain_names):
        """(master joint name, multiplier, offset) with q_joint = multiplier·q_master + offset."""
        multiplier, offset, seen, current = 1.0, 0.0, [joint.name], joint
        while current.mimic is not None:
            master = current.mimic.joint
            if master not in tree.joints:
                raise URDFError(f"joint '{current.name}': <mimic joint=\"{master}\">: no "
                                "joint of that name in the robot")
            if master in seen:
                raise URDFError(f"joint '{current.name}': mimic joints form a cycle: "
                                f"{' -> '.join(seen + [master])}")
            m = current.mimic.multiplier if current.mimic.multiplier is not None else 1.0
            o = current.mimic.offset if current.mimic.offset is not None else 0.0
            offset, multiplier = offset + multiplier * o, multiplier * m
            seen.append(master)
            current = tree.joints[master]
            if current.type not in MOVABLE:
                raise URDFError(f"joint '{seen[-2]}': mimics '{master}', a {current.type} "
                                "joint")
        if current.name not in chain_names:
            raise URDFError(
                f"joint '{joint.name}' ({joint.type}): mimics '{current.name}', which is not "
                "on the chain; a serial chain cannot move that joint's branch with it. "
                f"Choose a tip_link below '{current.name}'")
        return current.name, multiplier, offset


def _joint_columns(coordinates, bodies, coupling):
    """Limits of each coordinate (its own URDF joint's) and the damping and friction every
    body joint puts on it: viscous d·q̇_b = d·m·q̇ maps back through m (d m²), Coulomb
    f·sign(m q̇) through |m|."""
    columns = {key: [] for key in ("lower", "upper", "velocity_limit", "effort_limit")}
    for joint in coordinates:
        for key, value in zip(("lower", "upper", "velocity_limit", "effort_limit"),
                              joint_limits(joint)):
            columns[key].append(value)
    damping, friction = np.zeros(len(coordinates)), np.zeros(len(coordinates))
    for i, joint in enumerate(bodies):
        if joint.mimic is not None:
            joint_limits(joint)           # a mimic joint's own <limit> must still be well formed
        d, f = joint_dynamics(joint)
        row = coupling.G[i]
        damping += d * row ** 2
        friction += f * np.abs(row)
    columns = {key: np.array(value, dtype=float) for key, value in columns.items()}
    columns["damping"], columns["friction"] = damping, friction
    return columns


def _check_every_joint_moves_mass(coordinates, coupling, columns):
    """M(q) is singular when a joint carries nothing: no mass and no inertia on or beyond
    the first body it moves."""
    mass, inertia = np.array(columns["mass"]), np.array(columns["inertia"])
    for j, joint in enumerate(coordinates):
        first = int(np.flatnonzero(coupling.G[:, j])[0])
        if mass[first:].sum() == 0.0 and not np.any(inertia[first:]):
            raise URDFError(f"joint '{joint.name}' ({joint.type}): no mass or inertia beyond "
                            "it, so the mass matrix would be singular")


class _Tree:
    """Parent/child look-ups over the parsed URDF."""

    def __init__(self, robot):
        self.links = {link.name: link for link in robot.links}
        self.joints = {joint.name: joint for joint in robot.joints}
        self.parent_joint = {joint.child: joint for joint in robot.joints}
        self.child_joints = {name: [] for name in self.links}
        for joint in robot.joints:
            self.child_joints[joint.parent].append(joint)
        self.root = next(name for name in self.links if name not in self.parent_joint)

    def require_link(self, name, role):
        if name not in self.links:
            raise URDFError(f"{role} '{name}' is not a link of the robot "
                            f"(links: {sorted(self.links)})")

    def joints_below(self, link):
        """Every joint in the subtree under `link`, depth first."""
        stack, out = list(self.child_joints[link]), []
        while stack:
            joint = stack.pop()
            out.append(joint)
            stack.extend(self.child_joints[joint.child])
        return out

    def default_tip(self, base_link):
        """The only leaf below base_link reached through a joint that is not fixed."""
        candidates = []
        for joint in self.joints_below(base_link):
            if self.child_joints[joint.child]:
                continue
            path = self.path(base_link, joint.child)
            if any(j.type != "fixed" for j in path):
                candidates.append(joint.child)
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            raise URDFError(f"no movable joint below base_link '{base_link}'")
        raise URDFError(
            f"tip_link is ambiguous: {len(candidates)} leaf links below base_link "
            f"'{base_link}': {sorted(candidates)}; pass tip_link")

    def path(self, base_link, tip_link):
        """Joints from base_link down to tip_link, in order."""
        joints, link = [], tip_link
        while link != base_link:
            if link not in self.parent_joint:
                raise URDFError(f"tip_link '{tip_link}' is not below base_link '{base_link}'")
            joint = self.parent_joint[link]
            joints.append(joint)
            link = joint.parent
        return joints[::-1]

    def rigid_links(self, body_link, chain_names):
        """[(link name, transform body_link → link)] of body_link and every link rigidly
        attached to it, body_link first: its subtree without crossing a chain joint; joints
        off the chain are taken at q = 0."""
        out, stack = [], [(body_link, np.eye(4))]
        while stack:
            link_name, T_body_link = stack.pop()
            out.append((link_name, T_body_link))
            for joint in self.child_joints[link_name]:
                if joint.name not in chain_names:
                    stack.append((joint.child, T_body_link @ origin_transform(joint.origin)))
        return out


def _lump(rigid_links, links):
    """(mass, com, inertia about com) of rigidly attached links, in the first one's frame;
    rigid_links as from _Tree.rigid_links, links: name → parsed link."""
    mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    for link_name, T_body_link in rigid_links:
        m, c, I = link_inertial(links[link_name])
        R, p = T_body_link[:3, :3], T_body_link[:3, 3]
        mass, com, inertia = combine(mass, com, inertia, m, R @ c + p, R @ I @ R.T)
    return mass, com, inertia


def origin_transform(pose):
    if pose is None:
        return np.eye(4)
    xyz = pose.xyz if pose.xyz is not None else (0.0, 0.0, 0.0)
    rpy = pose.rpy if pose.rpy is not None else (0.0, 0.0, 0.0)
    return homogeneous(rpy_to_matrix(rpy), np.asarray(xyz, dtype=float))


def link_inertial(link):
    """(mass, com, inertia about com) in the link frame; massless if there is no <inertial>."""
    inertial = link.inertial
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    T = origin_transform(inertial.origin)
    i = inertial.inertia
    I_local = inertia_tensor(i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz)
    R = T[:3, :3]
    return float(inertial.mass), T[:3, 3].copy(), R @ I_local @ R.T


def check_inertial(link, strict):
    """Notes (doubts) about a link whose mass enters the chain's dynamics; URDFError for
    what cannot be used (or any doubt, when strict)."""
    inertial = link.inertial
    if inertial is None:
        return []
    if inertial.mass is None:
        raise URDFError(f"link '{link.name}': <inertial> has no <mass value=...>")
    if inertial.inertia is None:
        raise URDFError(f"link '{link.name}': <inertial> has no <inertia>")
    i = inertial.inertia
    entries = (i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz)
    if any(value is None for value in entries):
        raise URDFError(f"link '{link.name}': <inertia> needs all of ixx ixy ixz iyy iyz izz")
    errors, doubts = rigid_body_problems(float(inertial.mass), inertia_tensor(*entries))
    if errors or (strict and doubts):
        raise URDFError(f"link '{link.name}': " + "; ".join(errors + doubts))
    return [f"link '{link.name}': {doubt}; loaded as given (strict=True refuses it)"
            for doubt in doubts]


def unit_axis(joint):
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    norm = np.linalg.norm(axis)
    if norm < 1e-12:
        raise URDFError(f"joint '{joint.name}' ({joint.type}): <axis xyz> is the zero vector")
    return axis / norm


def joint_limits(joint):
    """(lower, upper, velocity, effort); continuous joints have no position limits."""
    limit = joint.limit
    if joint.type == CONTINUOUS:
        velocity = limit.velocity if limit is not None and limit.velocity is not None else np.inf
        effort = limit.effort if limit is not None and limit.effort is not None else np.inf
        lower, upper = -np.inf, np.inf
    else:
        if limit is None or limit.effort is None or limit.velocity is None:
            raise URDFError(f"joint '{joint.name}' ({joint.type}): missing "
                            "<limit effort=... velocity=...>")
        lower = limit.lower if limit.lower is not None else 0.0
        upper = limit.upper if limit.upper is not None else 0.0
        velocity, effort = limit.velocity, limit.effort
        if lower > upper:
            raise URDFError(f"joint '{joint.name}' ({joint.type}): <limit> lower {lower} "
                            f"is above upper {upper}")
    if effort < 0 or velocity < 0:
        raise URDFError(f"joint '{joint.name}' ({joint.type}): <limit> effort and velocity "
                        f"must be >= 0, got effort={effort} velocity={velocity}")
    return float(lower), float(upper), float(velocity), float(effort)


def joint_dynamics(joint):
    dyn = joint.dynamics
    damping = dyn.damping if dyn is not None and dyn.damping is not None else 0.0
    friction = dyn.friction if dyn is not None and dyn.friction is not None else 0.0
    if damping < 0 or friction < 0:
        raise URDFError(f"joint '{joint.name}' ({joint.type}): <dynamics> damping and "
                        f"friction must be >= 0, got damping={damping} friction={friction}")
    return float(damping), float(friction)

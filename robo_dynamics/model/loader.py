"""Build a RobotModel from a URDF: choose the chain, fold fixed joints, lump inertia.

Joints that are movable but not on the base→tip chain (gripper fingers, side branches) are
locked at q = 0 and their links' inertia is lumped onto the chain body they hang from.
Links above `base_link` do not move and are ignored.
"""

import numpy as np

from ..errors import URDFError
from ..spatial.inertia import combine, inertia_tensor, physical_problems
from ..spatial.rotations import homogeneous, rpy_to_matrix
from .robot_model import CONTINUOUS, PRISMATIC, REVOLUTE, RobotModel
from .source import read_description
from .urdf_document import parse_urdf

MOVABLE = (REVOLUTE, CONTINUOUS, PRISMATIC)
UNSUPPORTED = ("floating", "planar")


def load_robot(source, base_link=None, tip_link=None, gravity=(0.0, 0.0, -9.81)):
    """Load the serial chain base_link → tip_link of a URDF.

    source: URDF XML text, a .urdf path or a .xacro path.
    base_link: default the URDF root. tip_link: default the only leaf link below a movable
    joint (URDFError listing the candidates when there are several).
    gravity: m/s², expressed in the base_link frame (default: z up).
    Raises URDFError naming the element and the problem.
    """
    xml_text, where = read_description(source)
    robot = parse_urdf(xml_text, where)
    tree = _Tree(robot)
    base_link = base_link or tree.root
    tree.require_link(base_link, "base_link")
    tip_link = tip_link or tree.default_tip(base_link)
    tree.require_link(tip_link, "tip_link")
    path = tree.path(base_link, tip_link)
    for link in robot.links:
        problems = _inertial_problems(link)
        if problems:
            raise URDFError(f"link '{link.name}': " + "; ".join(problems))

    chain = [joint for joint in path if joint.type in MOVABLE]
    for joint in path:
        if joint.type in UNSUPPORTED:
            raise URDFError(
                f"joint '{joint.name}' ({joint.type}): only revolute, continuous, prismatic "
                "and fixed joints are supported in the chain")
        if joint.type not in MOVABLE + ("fixed",):
            raise URDFError(f"joint '{joint.name}': unknown joint type '{joint.type}'")
        if joint.type in MOVABLE and joint.mimic is not None:
            raise URDFError(
                f"joint '{joint.name}' ({joint.type}): mimic joints are not supported in the "
                f"chain (it mimics '{joint.mimic.joint}'); choose a tip_link before it")
    if not chain:
        raise URDFError(
            f"no movable joint between base_link '{base_link}' and tip_link '{tip_link}'")

    g = np.asarray(gravity, dtype=float).reshape(-1)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise URDFError(f"gravity must be 3 finite numbers (m/s^2), got {gravity!r}")

    chain_names = {joint.name for joint in chain}
    columns = {key: [] for key in (
        "origin_rotation", "origin_translation", "axis", "mass", "com", "inertia",
        "lower", "upper", "velocity_limit", "effort_limit", "damping", "friction")}
    T_prev = np.eye(4)  # body i−1 (or base) → current link, through fixed joints on the path
    for joint in path:
        T_origin = _origin(joint.origin)
        if joint.type not in MOVABLE:
            T_prev = T_prev @ T_origin
            continue
        T_joint = T_prev @ T_origin
        columns["origin_rotation"].append(T_joint[:3, :3])
        columns["origin_translation"].append(T_joint[:3, 3])
        columns["axis"].append(_unit_axis(joint))
        for key, value in zip(("lower", "upper", "velocity_limit", "effort_limit"),
                              _limits(joint)):
            columns[key].append(value)
        damping, friction = _dynamics(joint)
        columns["damping"].append(damping)
        columns["friction"].append(friction)
        mass, com, inertia = tree.lumped_inertia(joint.child, chain_names)
        columns["mass"].append(mass)
        columns["com"].append(com)
        columns["inertia"].append(inertia)
        T_prev = np.eye(4)
    _check_every_joint_moves_mass(chain, columns)
    locked = tuple(sorted(
        joint.name for joint in tree.joints_below(chain[0].child)
        if joint.type in MOVABLE and joint.name not in chain_names))
    return RobotModel(
        name=robot.name or "robot",
        base_link=base_link,
        tip_link=tip_link,
        joint_names=tuple(joint.name for joint in chain),
        joint_types=tuple(joint.type for joint in chain),
        body_links=tuple(joint.child for joint in chain),
        tip_rotation=T_prev[:3, :3],
        tip_translation=T_prev[:3, 3],
        gravity=g,
        locked_joints=locked,
        urdf_xml=xml_text,
        **{key: np.array(value, dtype=float) for key, value in columns.items()},
    )


def _check_every_joint_moves_mass(chain, columns):
    """M(q) is singular when a joint carries nothing: no mass and no inertia outboard."""
    mass, inertia = np.array(columns["mass"]), np.array(columns["inertia"])
    for i, joint in enumerate(chain):
        if mass[i:].sum() == 0.0 and not np.any(inertia[i:]):
            raise URDFError(f"joint '{joint.name}' ({joint.type}): no mass or inertia beyond "
                            "it, so the mass matrix would be singular")


class _Tree:
    """Parent/child look-ups over the parsed URDF."""

    def __init__(self, robot):
        self.links = {link.name: link for link in robot.links}
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

    def lumped_inertia(self, body_link, chain_names):
        """(mass, com, inertia about com) of body_link and all links rigidly attached to it.

        Walks the subtree of body_link without crossing a chain joint; joints off the chain
        are taken at q = 0. Result in body_link's frame.
        """
        mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        stack = [(body_link, np.eye(4))]
        while stack:
            link_name, T_body_link = stack.pop()
            m, c, I = _link_inertial(self.links[link_name])
            R, p = T_body_link[:3, :3], T_body_link[:3, 3]
            mass, com, inertia = combine(mass, com, inertia, m, R @ c + p, R @ I @ R.T)
            for joint in self.child_joints[link_name]:
                if joint.name not in chain_names:
                    stack.append((joint.child, T_body_link @ _origin(joint.origin)))
        return mass, com, inertia


def _origin(pose):
    if pose is None:
        return np.eye(4)
    xyz = pose.xyz if pose.xyz is not None else (0.0, 0.0, 0.0)
    rpy = pose.rpy if pose.rpy is not None else (0.0, 0.0, 0.0)
    return homogeneous(rpy_to_matrix(rpy), np.asarray(xyz, dtype=float))


def _link_inertial(link):
    """(mass, com, inertia about com) in the link frame; massless if there is no <inertial>."""
    inertial = link.inertial
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    T = _origin(inertial.origin)
    i = inertial.inertia
    I_local = inertia_tensor(i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz)
    R = T[:3, :3]
    return float(inertial.mass), T[:3, 3].copy(), R @ I_local @ R.T


def _inertial_problems(link):
    inertial = link.inertial
    if inertial is None:
        return []
    if inertial.mass is None:
        return ["<inertial> has no <mass value=...>"]
    if inertial.inertia is None:
        return ["<inertial> has no <inertia>"]
    i = inertial.inertia
    entries = (i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz)
    if any(value is None for value in entries):
        return ["<inertia> needs all of ixx ixy ixz iyy iyz izz"]
    return physical_problems(float(inertial.mass), inertia_tensor(*entries))


def _unit_axis(joint):
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    norm = np.linalg.norm(axis)
    if norm < 1e-12:
        raise URDFError(f"joint '{joint.name}' ({joint.type}): <axis xyz> is the zero vector")
    return axis / norm


def _limits(joint):
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


def _dynamics(joint):
    dyn = joint.dynamics
    damping = dyn.damping if dyn is not None and dyn.damping is not None else 0.0
    friction = dyn.friction if dyn is not None and dyn.friction is not None else 0.0
    if damping < 0 or friction < 0:
        raise URDFError(f"joint '{joint.name}' ({joint.type}): <dynamics> damping and "
                        f"friction must be >= 0, got damping={damping} friction={friction}")
    return float(damping), float(friction)

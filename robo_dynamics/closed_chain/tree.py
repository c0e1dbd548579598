"""The spanning tree of a closed mechanism: every movable joint a coordinate.

A closed linkage is described as a tree (a URDF is one) plus closures that join two of its
links again (closures.py). Unlike the serial chain of model/, the tree branches: body i
hangs from body `parent[i]` (−1: the base link), and every movable joint of the tree is a
coordinate q_i, actuated or passive. Links fixed to a body are lumped into it.

Frames as in model/robot_model.py: the base frame is the root link's, gravity is expressed in
it; body i's frame is its child link's frame; (origin_rotation[i], origin_translation[i]) is
the constant transform from body parent[i] (or the base) to joint i's frame at q = 0, and the
joint moves about/along axis[i] (unit vector, joint frame). Bodies are numbered so that a
parent comes before its children.
"""

import dataclasses

import numpy as np

from ..errors import URDFError
from ..model.loader import (MOVABLE, check_inertial, joint_dynamics, joint_limits,
                            link_inertial, origin_transform, unit_axis)
from ..model.joint_limits import JointLimits
from ..model.robot_model import PRISMATIC, STANDARD_GRAVITY, gravity_vector
from ..model.source import read_description
from ..model.urdf_document import parse_urdf
from ..spatial.inertia import combine

BASE = -1      # the parent index of a body hanging from the base link


@dataclasses.dataclass(frozen=True, eq=False)
class KinematicTree(JointLimits):
    """A kinematic tree; n = len(joint_names) bodies and coordinates (SI units).

    parent (n,) int: the body each body hangs from (BASE: the base link).
    origin_rotation (n, 3, 3), origin_translation (n, 3) [m]: parent body → joint frame.
    axis (n, 3): joint axis, unit, joint frame. is_prismatic (n,) bool.
    mass (n,) [kg], com (n, 3) [m, body frame], inertia (n, 3, 3) [kg·m², about the COM,
    body axes]: each body with the links fixed to it.
    link_frames: link name → (body index or BASE, R (3, 3), p (3,)): where each link's frame
    is; a point x of the link's frame is R x + p in the body's (or the base's) frame.
    lower, upper [rad or m], velocity_limit, effort_limit, damping, friction: per joint, as
    the URDF gives them. gravity (3,) [m/s², base frame].
    path (n, n): 1 where joint j is on the way from the base to body i (j = i included),
    else 0; a sum over each body's joints is `path @ x`, over each body's subtree `path.T @ x`.
    """

    name: str
    base_link: str
    joint_names: tuple
    joint_types: tuple
    body_links: tuple
    parent: np.ndarray
    origin_rotation: np.ndarray
    origin_translation: np.ndarray
    axis: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    link_frames: dict
    gravity: np.ndarray
    warnings: tuple = ()

    def __post_init__(self):
        prismatic = np.array([t == PRISMATIC for t in self.joint_types], dtype=bool)
        object.__setattr__(self, "is_prismatic", prismatic)
        path = np.zeros((len(self.parent), len(self.parent)))
        for i in range(len(self.parent)):       # parents come first: their rows are done
            path[i, i] = 1.0
            if self.parent[i] != BASE:
                path[i] += path[self.parent[i]]
        object.__setattr__(self, "path", path)

    @property
    def dof(self):
        """Number of coordinates n (the tree's movable joints, actuated and passive)."""
        return len(self.joint_names)

    def joint_index(self, name):
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"joint '{name}' is not a movable joint of the mechanism "
                           f"{list(self.joint_names)}") from None

    def link_frame(self, link):
        """(body index or BASE, R, p) of `link`; KeyError naming the links if unknown."""
        try:
            return self.link_frames[link]
        except KeyError:
            raise KeyError(f"link '{link}' is not a link of the mechanism "
                           f"{sorted(self.link_frames)}") from None


class TreeBuilder:
    """Collects a tree's bodies (parents first) and links, then builds the KinematicTree.
    Each format's reader (a URDF here, an SDF model in sdf.py) feeds it."""

    def __init__(self, name, base_link):
        self.name, self.base_link = name, base_link
        self.columns = {key: [] for key in ("names", "types", "links", "parent", "R", "p",
                                            "axis", "limits", "dynamics")}
        self.link_frames = {base_link: (BASE, np.eye(3), np.zeros(3))}
        self.inertials = {}          # link → (mass, com, inertia) in the link's frame

    def add_body(self, joint, kind, link, parent, R, p, axis, limits, dynamics):
        """Body moved by joint `joint` (kind: revolute, continuous or prismatic) about/along
        unit `axis` (joint frame), hanging from body `parent` (or BASE) at (R, p): parent body
        → joint frame at q = 0. limits (lower, upper, velocity, effort), dynamics (damping,
        friction). `link` is the body's own link (its frame the joint frame); None for a
        massless body between the axes of a ball joint. Returns the body's index."""
        c = self.columns
        index = len(c["names"])
        for key, value in (("names", joint), ("types", kind), ("links", link),
                           ("parent", parent), ("R", R), ("p", p), ("axis", axis),
                           ("limits", limits), ("dynamics", dynamics)):
            c[key].append(value)
        return index

    def add_link(self, link, body, R, p, inertial):
        """Link `link` fixed to `body` (or BASE) at (R, p) (a point x of the link's frame is
        R x + p in the body's); inertial: (mass, com, inertia about the COM) in its frame."""
        self.link_frames[link] = (body, np.asarray(R, dtype=float), np.asarray(p, dtype=float))
        self.inertials[link] = inertial

    def build(self, gravity, warnings=()):
        c = self.columns
        n = len(c["names"])
        if n == 0:
            raise URDFError(f"{self.name}: no movable joint: nothing moves")
        mass, com, inertia = np.zeros(n), np.zeros((n, 3)), np.zeros((n, 3, 3))
        for link, (m, c_link, I) in self.inertials.items():
            body, R, p = self.link_frames[link]
            if body != BASE:
                mass[body], com[body], inertia[body] = combine(
                    mass[body], com[body], inertia[body], m, R @ c_link + p, R @ I @ R.T)
        limits = np.array(c["limits"], dtype=float)
        dynamics = np.array(c["dynamics"], dtype=float)
        return KinematicTree(
            name=self.name, base_link=self.base_link, joint_names=tuple(c["names"]),
            joint_types=tuple(c["types"]), body_links=tuple(c["links"]),
            parent=np.array(c["parent"], dtype=int), origin_rotation=np.array(c["R"]),
            origin_translation=np.array(c["p"]), axis=np.array(c["axis"], dtype=float),
            mass=mass, com=com, inertia=inertia, link_frames=dict(self.link_frames),
            lower=limits[:, 0], upper=limits[:, 1], velocity_limit=limits[:, 2],
            effort_limit=limits[:, 3], damping=dynamics[:, 0], friction=dynamics[:, 1],
            gravity=gravity_vector(gravity), warnings=tuple(warnings))


def load_tree(source, gravity=STANDARD_GRAVITY, strict=False, mimics=None):
    """The whole URDF as a KinematicTree: every revolute, continuous and prismatic joint a
    coordinate, fixed joints folded, every link's inertia lumped into the body it is fixed to.

    source: URDF text, a .urdf or a .xacro path. mimics: a dict that receives each mimic
    joint's (master, multiplier, offset), its joint a coordinate like the others (the loops
    are to determine it: load_closed_chain); None: a mimic joint is refused. Raises
    URDFError naming the element for what cannot be used: a floating or planar joint.
    """
    xml_text, where = read_description(source)
    robot, _ = parse_urdf(xml_text, where)
    links = {link.name: link for link in robot.links}
    children = {name: [] for name in links}
    parents = {joint.child for joint in robot.joints}
    for joint in robot.joints:
        children[joint.parent].append(joint)
        if joint.type not in MOVABLE + ("fixed",):
            raise URDFError(f"joint '{joint.name}' ({joint.type}): a closed mechanism's tree "
                            "takes revolute, continuous, prismatic and fixed joints")
        if joint.mimic is not None:
            if mimics is None:
                raise URDFError(f"joint '{joint.name}': a mimic joint cannot be part of a "
                                "closed mechanism's tree; describe the coupling as a loop "
                                "closure")
            mimics[joint.name] = (joint.mimic.joint, 1.0 if joint.mimic.multiplier is None
                                  else joint.mimic.multiplier,
                                  0.0 if joint.mimic.offset is None else joint.mimic.offset)
    root = next(name for name in links if name not in parents)
    builder = TreeBuilder(robot.name, root)
    notes = check_inertial(links[root], strict)
    stack = [(joint, BASE, np.eye(4)) for joint in reversed(children[root])]
    while stack:               # depth first: a body is numbered before its children
        joint, body, T_body_parent = stack.pop()
        T = T_body_parent @ origin_transform(joint.origin)
        link = links[joint.child]
        notes += check_inertial(link, strict)
        if joint.type == "fixed":
            builder.add_link(joint.child, body, T[:3, :3], T[:3, 3], link_inertial(link))
            stack += [(j, body, T) for j in reversed(children[joint.child])]
            continue
        index = builder.add_body(joint.name, joint.type, joint.child, body, T[:3, :3],
                                 T[:3, 3], unit_axis(joint), joint_limits(joint),
                                 joint_dynamics(joint))
        builder.add_link(joint.child, index, np.eye(3), np.zeros(3), link_inertial(link))
        stack += [(j, index, np.eye(4)) for j in reversed(children[joint.child])]
    return builder.build(gravity, notes)

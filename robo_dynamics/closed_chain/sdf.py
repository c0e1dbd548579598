"""A closed mechanism from an SDF model, the format Gazebo users describe loops in.

Read: <model> with <link> (pose, <inertial>), <joint> of type revolute, continuous,
prismatic, ball or fixed (parent, child, pose, <axis> with xyz, limit, dynamics: damping,
spring_stiffness and spring_reference act, closed_chain/springs.py; a friction is not
modelled: refused), <frame>; every <pose> with `relative_to` (SDFormat 1.7+: a link's
default is the model frame, a joint's its child link, a frame's the frame it is attached
to), in radians or degrees, Euler or quaternion. A joint to `world` fixes the mechanism
there; without one the first link is the base. What else a model may hold that changes
the dynamics (a gearbox, revolute2, screw or universal joint, a nested model) is refused by
name.

The joint graph has loops. The spanning tree grows from the base through revolute,
prismatic and fixed joints first; the joints left over (and those named in `cut_joints`)
are cut and become closures: ball → point, revolute → revolute, fixed → weld. A ball joint
the tree needs (a Delta's rods) becomes three revolute coordinates about its frame's x, y, z
(`<name>_x`, `_y`, `_z`; singular where the middle angle is ±90°).
"""

import math
import pathlib
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import URDFError
from ..model.robot_model import STANDARD_GRAVITY
from ..spatial.inertia import inertia_tensor
from ..spatial.rotations import rpy_to_matrix
from .closures import Closure
from .mechanism import ClosedChain
from .springs import JointSprings
from .tree import BASE, TreeBuilder

TREE_TYPES = ("revolute", "continuous", "prismatic", "fixed")
CUT_KINDS = {"ball": "point", "revolute": "revolute", "continuous": "revolute",
             "fixed": "weld"}
UNSUPPORTED = ("gearbox", "revolute2", "screw", "universal")
WORLD, MODEL = "world", "__model__"
UNLIMITED = 1e16          # SDF's default position limit: no limit


def load_sdf(source, actuated_joints=(), cut_joints=(), gravity=STANDARD_GRAVITY):
    """ClosedChain of the SDF model in `source` (its text or a .sdf path). actuated_joints:
    the joints with motors (names); cut_joints: where to cut the loops (default: chosen as
    above). URDFError naming the element for what cannot be used."""
    model = _model(source)
    frames = _Frames(model)
    joints = {j.get("name"): j for j in model.findall("joint")}
    for name in cut_joints:
        if name not in joints:
            raise URDFError(f"cut_joints: '{name}' is not a joint of the model {sorted(joints)}")
    base = (WORLD if any(_text(j, "parent") == WORLD for j in joints.values())
            else model.find("link").get("name"))
    builder = TreeBuilder(model.get("name"), base)
    if base != WORLD:
        builder.add_link(base, BASE, np.eye(3), np.zeros(3), _inertial(model, base))
    placed = {base: (BASE, np.eye(4))}       # link → (body, T body → link)
    springs = {}                              # tree joint → (stiffness, reference, damping)
    body_pose = {BASE: frames.pose(base) if base != WORLD else np.eye(4)}
    remaining = [j for j in joints.values() if j.get("name") not in cut_joints]
    while True:
        edge = _next_edge(remaining, placed)
        if edge is None:
            break
        joint, inward = edge
        remaining.remove(joint)
        _attach(builder, frames, model, joint, inward, placed, body_pose, springs)
    links = [link.get("name") for link in model.findall("link")]
    unreached = [name for name in links if name not in placed]
    if unreached:
        raise URDFError(f"links {unreached} are not connected to '{base}' by any joint")
    tree = builder.build(gravity)
    cuts = remaining + [joints[name] for name in cut_joints]
    closures = tuple(_closure(frames, joint) for joint in cuts)
    per_joint = np.array([springs.get(name, (0.0, 0.0, 0.0)) for name in tree.joint_names])
    return ClosedChain(tree, closures, tuple(actuated_joints), springs=JointSprings(
        per_joint[:, 0], per_joint[:, 1], per_joint[:, 2]))


def _model(source):
    text = source
    if not (isinstance(source, str) and source.lstrip().startswith("<")):
        path = pathlib.Path(source)
        if not path.is_file():
            raise URDFError(f"SDF file not found: {path}")
        text = path.read_text(encoding="utf-8")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise URDFError(f"SDF: not well-formed XML: {exc}") from None
    models = root.findall("model") if root.tag == "sdf" else []
    if len(models) != 1:
        raise URDFError(f"SDF: expected <sdf> holding one <model>, found <{root.tag}> with "
                        f"{len(models)}")
    model = models[0]
    for element in model:
        if element.tag == "model" or element.tag == "include":
            raise URDFError(f"SDF model '{model.get('name')}': nested <{element.tag}> "
                            "is not supported")
    for joint in model.findall("joint"):
        kind = joint.get("type")
        if kind in UNSUPPORTED or kind not in TREE_TYPES + ("ball",):
            raise URDFError(f"SDF joint '{joint.get('name')}': type '{kind}' is not supported "
                            "(revolute, continuous, prismatic, ball, fixed)")
        for tag in ("parent", "child"):
            if _text(joint, tag) is None:
                raise URDFError(f"SDF joint '{joint.get('name')}': no <{tag}>")
    return model


def _text(element, tag):
    child = element.find(tag)
    return None if child is None or child.text is None else child.text.strip()


def _numbers(text, count, owner):
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = []
    if len(values) != count or not all(math.isfinite(x) for x in values):
        raise URDFError(f"SDF {owner}: expected {count} finite numbers, got '{text}'")
    return values


def pose_matrix(element, owner):
    """4×4 transform of a <pose> element (None: identity)."""
    T = np.eye(4)
    if element is None or not (element.text or "").strip():
        return T
    form = element.get("rotation_format", "euler_rpy")
    if form == "quat_xyzw":
        x, y, z, qx, qy, qz, qw = _numbers(element.text, 7, f"{owner} <pose>")
        norm = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
        qx, qy, qz, qw = (v / norm for v in (qx, qy, qz, qw))
        T[:3, :3] = [[1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
                     [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
                     [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)]]
    elif form == "euler_rpy":
        x, y, z, roll, pitch, yaw = _numbers(element.text, 6, f"{owner} <pose>")
        if element.get("degrees", "false").lower() == "true":
            roll, pitch, yaw = (math.radians(a) for a in (roll, pitch, yaw))
        T[:3, :3] = rpy_to_matrix((roll, pitch, yaw))
    else:
        raise URDFError(f"SDF {owner} <pose>: rotation_format '{form}' is not supported")
    T[:3, 3] = (x, y, z)
    return T


class _Frames:
    """Every frame of the model (links, joints, <frame>s) in the model frame, at the pose
    the model is drawn in (all joints at zero)."""

    def __init__(self, model):
        self.defaults, self.elements = {MODEL: None, WORLD: None}, {}
        for link in model.findall("link"):
            self.elements[link.get("name")] = (link, MODEL)
        for joint in model.findall("joint"):
            self.elements[joint.get("name")] = (joint, _text(joint, "child"))
        for frame in model.findall("frame"):
            self.elements[frame.get("name")] = (frame, frame.get("attached_to") or MODEL)
        self.cache = {MODEL: np.eye(4), WORLD: np.eye(4)}

    def pose(self, name, visiting=()):
        """T model → frame `name`."""
        if name in self.cache:
            return self.cache[name]
        if name not in self.elements:
            raise URDFError(f"SDF: pose relative_to '{name}': no such frame")
        if name in visiting:
            raise URDFError(f"SDF: the poses of {list(visiting)} refer to each other in a cycle")
        element, default = self.elements[name]
        pose = element.find("pose")
        relative = (pose.get("relative_to") if pose is not None else None) or default
        T = self.pose(relative, visiting + (name,)) @ pose_matrix(pose, f"'{name}'")
        self.cache[name] = T
        return T

    def axis(self, joint):
        """The joint's unit axis in the joint frame (<xyz expressed_in> honoured)."""
        name = joint.get("name")
        xyz = joint.find("axis/xyz")
        if xyz is None:
            return np.array([0.0, 0.0, 1.0])
        axis = np.array(_numbers(xyz.text or "", 3, f"joint '{name}' <axis><xyz>"))
        if np.linalg.norm(axis) < 1e-12:
            raise URDFError(f"SDF joint '{name}': <axis><xyz> is the zero vector")
        frame = xyz.get("expressed_in")
        if joint.find("axis/use_parent_model_frame") is not None and (
                joint.find("axis/use_parent_model_frame").text or "").strip() in ("1", "true"):
            frame = MODEL
        if frame:
            R = self.pose(name)[:3, :3].T @ self.pose(frame)[:3, :3]
            axis = R @ axis
        return axis / np.linalg.norm(axis)


def _inertial(model, link_name):
    """(mass, com, inertia about the COM) in the link's frame."""
    link = next(l for l in model.findall("link") if l.get("name") == link_name)
    inertial = link.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    owner = f"link '{link_name}' <inertial>"
    T = pose_matrix(inertial.find("pose"), owner)
    mass = float(_numbers(_text(inertial, "mass") or "", 1, f"{owner} <mass>")[0])
    values = {k: _numbers(_text(inertial, f"inertia/{k}") or "0", 1, f"{owner} <{k}>")[0]
              for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    I = inertia_tensor(**values)
    R = T[:3, :3]
    return mass, T[:3, 3].copy(), R @ I @ R.T


def _limits(joint):
    """(lower, upper, velocity, effort) from <axis><limit>; SDF's 'no limit' as ±inf."""
    def value(tag, default):
        text = _text(joint, f"axis/limit/{tag}")
        return default if text is None else _numbers(text, 1, f"joint '{joint.get('name')}' "
                                                               f"<{tag}>")[0]
    lower, upper = value("lower", -np.inf), value("upper", np.inf)
    lower = -np.inf if lower <= -UNLIMITED or joint.get("type") == "continuous" else lower
    upper = np.inf if upper >= UNLIMITED or joint.get("type") == "continuous" else upper
    velocity, effort = value("velocity", np.inf), value("effort", np.inf)
    return (lower, upper, velocity if velocity >= 0 else np.inf,
            effort if effort >= 0 else np.inf)


def _dynamics_value(joint, tag):
    """<axis><dynamics><tag> of `joint` (0 if absent)."""
    text = _text(joint, f"axis/dynamics/{tag}")
    return 0.0 if text is None else _numbers(text, 1, f"joint '{joint.get('name')}' <{tag}>")[0]


def _dynamics(joint):
    """(damping, friction) from <axis><dynamics>."""
    return _dynamics_value(joint, "damping"), _dynamics_value(joint, "friction")


def _spring(joint):
    """(spring_stiffness, spring_reference) from <axis><dynamics>; (0, 0) if none. URDFError
    for a negative stiffness or damping (they would feed energy in) and for a friction,
    which is not modelled."""
    for tag in ("spring_stiffness", "damping"):
        value = _dynamics_value(joint, tag)
        if value < 0.0:
            raise URDFError(f"joint '{joint.get('name')}' <{tag}> {value:g}: must be ≥ 0")
    friction = _dynamics_value(joint, "friction")
    if friction != 0.0:
        raise URDFError(f"joint '{joint.get('name')}' <friction> {friction:g}: joint friction "
                        "is not modelled in a closed mechanism; remove it or set it to 0")
    return (_dynamics_value(joint, "spring_stiffness"),
            _dynamics_value(joint, "spring_reference"))


def _next_edge(joints, placed):
    """(joint, inward) of the first joint that reaches a new link from the tree: revolute,
    prismatic and fixed joints before ball joints; inward: the tree holds its child."""
    for wanted in (TREE_TYPES, ("ball",)):
        for joint in joints:
            if joint.get("type") not in wanted:
                continue
            parent, child = _text(joint, "parent"), _text(joint, "child")
            if parent in placed and child not in placed:
                return joint, False
            if child in placed and parent not in placed and parent != WORLD:
                return joint, True
    return None


def _attach(builder, frames, model, joint, inward, placed, body_pose, springs):
    """Add the link `joint` reaches to the tree: its body (or bodies: a ball joint's three)
    and its frame; its spring and damper into `springs`. A joint met from its child moves
    its parent: about the opposite axis."""
    name, kind = joint.get("name"), joint.get("type")
    parent, child = _text(joint, "parent"), _text(joint, "child")
    old, new = (child, parent) if inward else (parent, child)
    body, _ = placed[old]
    T_joint = frames.pose(name)
    T_in_body = np.linalg.inv(body_pose[body]) @ T_joint      # body frame → joint frame
    if kind == "fixed":
        T_link = T_in_body @ np.linalg.inv(T_joint) @ frames.pose(new)
        builder.add_link(new, body, T_link[:3, :3], T_link[:3, 3], _inertial(model, new))
        placed[new] = (body, T_link)
        return
    if kind == "ball":
        axes = [(f"{name}_x", np.array([1.0, 0, 0])), (f"{name}_y", np.array([0, 1.0, 0])),
                (f"{name}_z", np.array([0, 0, 1.0]))]
        limits, dynamics = (-np.inf, np.inf, np.inf, np.inf), (0.0, 0.0)
        kind = "continuous"
    else:
        axes = [(name, frames.axis(joint) * (-1.0 if inward else 1.0))]
        limits, dynamics = _limits(joint), _dynamics(joint)
        # met from its child, the coordinate is still the joint's own angle (the parent
        # turns about the opposite axis by it): its limits and spring reference as written
        stiffness, reference = _spring(joint)
        springs[name] = (stiffness, reference, dynamics[0])
    R, p = T_in_body[:3, :3], T_in_body[:3, 3]
    for k, (coordinate, axis) in enumerate(axes):
        last = k == len(axes) - 1
        body = builder.add_body(coordinate, kind, new if last else None, body, R, p, axis,
                                limits, dynamics)
        R, p = np.eye(3), np.zeros(3)
        body_pose[body] = T_joint
    T_link = np.linalg.inv(T_joint) @ frames.pose(new)
    builder.add_link(new, body, T_link[:3, :3], T_link[:3, 3], _inertial(model, new))
    placed[new] = (body, T_link)


def axis_frame(z):
    """A rotation whose z column is the unit vector z (x and y completing it)."""
    x = np.cross(z, [1.0, 0, 0]) if abs(z[0]) < 0.9 else np.cross(z, [0, 1.0, 0])
    x /= np.linalg.norm(x)
    return np.column_stack((x, np.cross(z, x), z))


def _closure(frames, joint):
    """The Closure a cut joint becomes: its frame on the parent and on the child link."""
    name, kind = joint.get("name"), joint.get("type")
    if kind not in CUT_KINDS:
        raise URDFError(f"SDF joint '{name}' ({kind}): a loop cannot be cut there; name "
                        "another joint of the loop in cut_joints")
    T_joint = frames.pose(name)
    parent, child = _text(joint, "parent"), _text(joint, "child")
    if kind in ("revolute", "continuous"):      # the closure's z: the joint's axis
        T_joint = T_joint.copy()
        T_joint[:3, :3] = T_joint[:3, :3] @ axis_frame(frames.axis(joint))
    sides = []
    for link in (parent, child):
        T = np.linalg.inv(frames.pose(link) if link != WORLD else np.eye(4)) @ T_joint
        sides.append((link, T[:3, :3], T[:3, 3]))
    (link_a, R_a, p_a), (link_b, R_b, p_b) = sides
    return Closure(name, CUT_KINDS[kind], link_a, R_a, p_a, link_b, R_b, p_b)

"""Parse URDF XML into urdf_parser_py objects, with errors that name the element.

urdf_parser_py accepts much that is not a usable robot (unknown parent links, cycles, two
parents for one link), reports bad numbers as a bare ValueError and refuses whole files for
elements dynamics never reads (a <texture> without a file name, a ROS 1 <transmission>).
This module checks the raw XML first, hands the parser a copy that keeps only what the
dynamics read (links with their <inertial>, joints), then checks the kinematic tree, so
every problem becomes one URDFError whose message starts with the element it is about.
"""

import math
import xml.etree.ElementTree as ET

from ..errors import URDFError

# (element tag, attribute) → number of floats expected; only what the model uses.
_NUMERIC_ATTRIBUTES = {
    ("origin", "xyz"): 3,
    ("origin", "rpy"): 3,
    ("axis", "xyz"): 3,
    ("mass", "value"): 1,
    ("inertia", "ixx"): 1, ("inertia", "ixy"): 1, ("inertia", "ixz"): 1,
    ("inertia", "iyy"): 1, ("inertia", "iyz"): 1, ("inertia", "izz"): 1,
    ("limit", "lower"): 1, ("limit", "upper"): 1,
    ("limit", "effort"): 1, ("limit", "velocity"): 1,
    ("dynamics", "damping"): 1, ("dynamics", "friction"): 1,
    ("mimic", "multiplier"): 1, ("mimic", "offset"): 1,
}
# What the dynamics read. Everything else (<visual>, <collision>, <material>, <texture>,
# <transmission>, <gazebo>, <ros2_control>, <sensor>, unknown elements) is dropped before
# the document reaches the parser: never read, never validated, never a reason to refuse.
_LINK_KEEPS = {"inertial"}
_JOINT_KEEPS = {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic"}


def parse_urdf(xml_text, where="robot_description"):
    """Return (the urdf_parser_py `URDF` object, the XML text it was parsed from: links with
    their <inertial> and joints only) for `xml_text`, or raise URDFError."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise URDFError(f"{where}: not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"{where}: the root element is <{root.tag}>, expected <robot>")
    dynamics_only = _dynamics_elements(root)
    for child in dynamics_only:
        _check_numbers(child, f"{child.tag} '{child.get('name', '?')}'")

    from urdf_parser_py import urdf
    from urdf_parser_py.xml_reflection import core

    warnings = []
    previous = core.on_error
    core.on_error = warnings.append  # urdf_parser_py would print unknown tags to stderr
    try:
        dynamics_xml = ET.tostring(dynamics_only, encoding="unicode")
        robot = urdf.URDF.from_xml_string(dynamics_xml)
    except core.ParseError as exc:
        message = " ".join(str(exc).split())
        raise URDFError(f"{where}: {message}") from None
    except Exception as exc:  # urdf_parser_py raises plain errors for some malformed input
        raise URDFError(f"{where}: URDF parser failed: {type(exc).__name__}: {exc}") from None
    finally:
        core.on_error = previous
    check_tree(robot, where)
    return robot, dynamics_xml


def locked_elsewhere(urdf_xml, chain_joints):
    """The URDF text with every movable joint outside `chain_joints` made fixed at q = 0,
    as the in-house model locks them: how another engine (Pinocchio, MuJoCo) is given the
    same chain. (Pinocchio's buildReducedModel does the same but fails when a link and a
    joint share a name.)"""
    root = ET.fromstring(urdf_xml)
    for joint in root.findall("joint"):
        if joint.get("type") != "fixed" and joint.get("name") not in chain_joints:
            joint.set("type", "fixed")
            for mimic in joint.findall("mimic"):
                joint.remove(mimic)
    return ET.tostring(root, encoding="unicode")


def _dynamics_elements(root):
    """A copy of <robot> with its <link> and <joint> children, keeping in each only the
    elements the dynamics read."""
    robot = ET.Element("robot", root.attrib)
    for child in root:
        keep = {"link": _LINK_KEEPS, "joint": _JOINT_KEEPS}.get(child.tag)
        if keep is None:
            continue
        element = ET.SubElement(robot, child.tag, child.attrib)
        element.extend(sub for sub in child if sub.tag in keep)
    return robot


def _check_numbers(element, owner):
    """Raise URDFError on a numeric attribute that is not the right count of finite floats."""
    for sub in element.iter():
        for attribute, text in sub.attrib.items():
            count = _NUMERIC_ATTRIBUTES.get((sub.tag, attribute))
            if count is None:
                continue
            fields = text.split()
            problem = None
            if len(fields) != count:
                problem = f"expected {count} number(s), got {len(fields)}"
            else:
                try:
                    values = [float(f) for f in fields]
                except ValueError:
                    problem = "not a number"
                else:
                    if not all(math.isfinite(v) for v in values):
                        problem = "not finite"
            if problem:
                raise URDFError(f"{owner}: <{sub.tag} {attribute}=\"{text}\">: {problem}")


def check_tree(robot, where="robot_description"):
    """Raise URDFError unless links and joints form one tree with unique names."""
    link_names = [link.name for link in robot.links]
    if not link_names:
        raise URDFError(f"{where}: the robot has no <link>")
    _check_unique(link_names, "link", where)
    _check_unique([joint.name for joint in robot.joints], "joint", where)
    known = set(link_names)
    parent_of = {}
    for joint in robot.joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in known:
                raise URDFError(f"joint '{joint.name}': {role} link '{link}' is not defined")
        if joint.child in parent_of:
            raise URDFError(
                f"link '{joint.child}' has two parent joints: "
                f"'{parent_of[joint.child].name}' and '{joint.name}'")
        parent_of[joint.child] = joint
    roots = [name for name in link_names if name not in parent_of]
    if not roots:
        raise URDFError(f"{where}: the joints form a cycle (every link has a parent)")
    if len(roots) > 1:
        raise URDFError(f"{where}: more than one root link: {sorted(roots)}")
    for name in link_names:  # walk up from every link; a cycle never reaches the root
        seen, link = set(), name
        while link in parent_of:
            if link in seen:
                raise URDFError(f"link '{link}': the joints above it form a cycle")
            seen.add(link)
            link = parent_of[link].parent


def _check_unique(names, kind, where):
    seen = set()
    for name in names:
        if name in seen:
            raise URDFError(f"{where}: duplicate {kind} name '{name}'")
        seen.add(name)

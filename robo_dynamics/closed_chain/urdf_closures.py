"""What a URDF says about its loops and motors beyond its tree.

Loops: URDF cannot express a loop; the common ROS workaround writes the missing joint as SDF
inside a <gazebo> element (no `reference`), as Gazebo reads it:

    <gazebo>
      <joint name="rod_end" type="ball">
        <parent>coupler</parent> <child>follower</child>
        <pose>0.4 0 0 0 0 0</pose>          <!-- in the child link's frame -->
      </joint>
    </gazebo>

ball → a point closure, revolute or continuous (its <axis><xyz>, joint frame) → revolute,
fixed → weld; any other type is refused by name. The joint's frame on the parent link is
where it is at the reference pose (q = 0, the URDF as drawn).

Motors: the joints named in a <transmission> or in a <ros2_control> block with an effort
command interface.
"""

import xml.etree.ElementTree as ET

import numpy as np

from ..errors import URDFError
from .closures import Closure
from .sdf import CUT_KINDS, axis_frame, pose_matrix
from .tree_dynamics import frame_pose, tree_kinematics


def gazebo_closures(xml_text, tree):
    """The Closures the URDF's <gazebo> joints describe, for its KinematicTree."""
    root = ET.fromstring(xml_text)
    kin = tree_kinematics(tree, np.zeros(tree.dof))
    out = []
    for gazebo in root.findall("gazebo"):
        if gazebo.get("reference") is not None:
            continue
        for joint in gazebo.findall("joint"):
            out.append(_closure(joint, tree, kin))
    return tuple(out)


def _closure(joint, tree, kin):
    name, kind = joint.get("name"), joint.get("type")
    if kind not in CUT_KINDS:
        raise URDFError(f"<gazebo> joint '{name}': type '{kind}' cannot close a loop here "
                        f"(one of {sorted(CUT_KINDS)})")
    links = []
    for tag in ("parent", "child"):
        element = joint.find(tag)
        link = None if element is None or element.text is None else element.text.strip()
        if link not in tree.link_frames:
            raise URDFError(f"<gazebo> joint '{name}': <{tag}> '{link}' is not a link of the "
                            "robot")
        links.append(link)
    parent, child = links
    pose = joint.find("pose")
    relative = pose.get("relative_to") if pose is not None else None
    if relative not in (None, child):
        raise URDFError(f"<gazebo> joint '{name}': <pose relative_to='{relative}'>: only the "
                        "child link's frame is supported")
    T_child_joint = pose_matrix(pose, f"<gazebo> joint '{name}'")
    if kind in ("revolute", "continuous"):
        xyz = joint.find("axis/xyz")
        axis = np.array([0.0, 0.0, 1.0]) if xyz is None else np.array(
            [float(x) for x in xyz.text.split()])
        if axis.shape != (3,) or np.linalg.norm(axis) < 1e-12:
            raise URDFError(f"<gazebo> joint '{name}': <axis><xyz> must be 3 numbers, not zero")
        T_child_joint[:3, :3] = T_child_joint[:3, :3] @ axis_frame(axis / np.linalg.norm(axis))
    sides = []
    for link in (parent, child):
        _, R, p = frame_pose(tree, kin, link)
        T_model_link = np.eye(4)
        T_model_link[:3, :3], T_model_link[:3, 3] = R, p
        sides.append(T_model_link)
    T_model_joint = sides[1] @ T_child_joint
    T_parent_joint = np.linalg.inv(sides[0]) @ T_model_joint
    return Closure(name, CUT_KINDS[kind], parent, T_parent_joint[:3, :3],
                   T_parent_joint[:3, 3], child, T_child_joint[:3, :3], T_child_joint[:3, 3])


def transmission_joints(xml_text):
    """Joints with a motor: named in a <transmission> (<joint name=...>) or in a
    <ros2_control> block's <joint> with an effort <command_interface>; in document order."""
    root = ET.fromstring(xml_text)
    names = []
    for transmission in root.findall("transmission"):
        names += [j.get("name") for j in transmission.findall("joint")]
    for block in root.findall("ros2_control"):
        for joint in block.findall("joint"):
            if any(c.get("name") == "effort" for c in joint.findall("command_interface")):
                names.append(joint.get("name"))
    return tuple(dict.fromkeys(name for name in names if name))

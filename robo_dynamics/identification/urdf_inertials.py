"""A URDF with new inertials and joint friction for a chain, the rest of the document kept
(comments, other links and joints, attribute order)."""

import io
import xml.etree.ElementTree as ET

import numpy as np


def corrected_urdf(urdf_xml, model, bodies, friction):
    """The URDF text `urdf_xml` with each chain body's <inertial> replaced and each chain
    joint's <dynamics damping friction> set. A body is its link and every link lumped into
    it (model.body_members: a flange, a hand and its fingers): the body link carries the
    whole body's inertial and the other members lose theirs (they would count twice).

    model: the RobotModel of the chain (no mimic joints, no payloads); bodies: per body
    (mass [kg], com (3,) [m], inertia (3, 3) [kg·m²] about the centre of mass), in the
    link's frame (the <inertial> then has rpy 0); friction (n, ≥ 2): viscous [N·m·s/rad]
    and Coulomb [N·m] per joint, model order."""
    if model.is_coupled or len(model.payloads):
        raise ValueError("a corrected URDF needs a chain without mimic joints or payloads")
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(urdf_xml, parser=parser)
    links = {link.get("name"): link for link in root.iter("link")}
    joints = {joint.get("name"): joint for joint in root.iter("joint")}
    for members in model.body_members:
        for member in members[1:]:
            old = links[member].find("inertial")
            if old is not None:
                links[member].remove(old)
    for name, (mass, com, inertia) in zip(model.body_links, bodies):
        link = links[name]
        old = link.find("inertial")
        inertial = ET.Element("inertial")
        ET.SubElement(inertial, "origin", xyz=_numbers(com), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=_numbers([mass]))
        I = np.asarray(inertia, dtype=float)
        ET.SubElement(inertial, "inertia", **{
            key: _numbers([I[i, j]]) for key, (i, j) in (
                ("ixx", (0, 0)), ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyy", (1, 1)),
                ("iyz", (1, 2)), ("izz", (2, 2)))})
        if old is None:
            link.insert(0, inertial)
        else:
            inertial.tail = old.tail
            link[list(link).index(old)] = inertial
    for name, (viscous, coulomb) in zip(model.joint_names, np.asarray(friction)[:, :2]):
        joint = joints[name]
        dynamics = joint.find("dynamics")
        if dynamics is None:
            dynamics = ET.SubElement(joint, "dynamics")
        dynamics.set("damping", _numbers([max(viscous, 0.0)]))
        dynamics.set("friction", _numbers([max(coulomb, 0.0)]))
    out = io.StringIO()
    ET.ElementTree(root).write(out, encoding="unicode", xml_declaration=True)
    return out.getvalue()


def _numbers(values):
    return " ".join(f"{float(v):.9g}" for v in values)

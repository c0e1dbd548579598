"""A plant that is not the URDF: the same arm with every chain link's inertials perturbed,
as a vendor's CAD inertials differ from the arm built (whole-arm identification's tests and
demo phase). No ROS here."""

import xml.etree.ElementTree as ET

import numpy as np


def perturbed_urdf(urdf, robot, rng, share=0.2):
    """The URDF file at `urdf` (a path) with each link of robot's chain given its mass and inertia
    scaled by 1 ± share and its centre of mass moved by up to share × (|c| + 2 cm) per
    axis, drawn from `rng`."""
    root = ET.parse(urdf).getroot()
    for link in root.iter("link"):
        if link.get("name") not in robot.body_links:
            continue
        inertial = link.find("inertial")
        mass, origin, inertia = (inertial.find(k) for k in ("mass", "origin", "inertia"))
        mass.set("value", repr(float(mass.get("value")) * rng.uniform(1 - share, 1 + share)))
        c = np.array([float(x) for x in origin.get("xyz").split()])
        c += rng.uniform(-share, share, 3) * (np.abs(c) + 0.02)
        origin.set("xyz", " ".join(repr(float(x)) for x in c))
        scale = rng.uniform(1 - share, 1 + share)
        for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
            inertia.set(k, repr(float(inertia.get(k)) * scale))
    return ET.tostring(root, encoding="unicode")

"""The arm's scale as rviz2 shows it, from its URDF: its reach and mass, which size every
marker and arrow (dynamics_node's markers, the config the launch file writes)."""

import dataclasses
import functools
import xml.etree.ElementTree as ET

import numpy as np

STANDARD_GRAVITY = 9.81


@dataclasses.dataclass(frozen=True)
class ArmScale:
    """reach [m]: the longest path of joint offsets from the root to a leaf; mass [kg]: the
    links' total. Every size in rviz follows from them (docs/node.md, "In rviz2"):

    - a force equal to the arm's weight draws half the reach: metres_per_newton;
    - a moment of that weight at the reach draws half the reach: metres_per_newton_metre;
    - a mass equal to the arm's draws a quarter of the reach: metres_per_kg;
    - labels are reach / 30 high."""

    reach: float
    mass: float

    @property
    def metres_per_newton(self):
        return 0.5 * self.reach / (self.mass * STANDARD_GRAVITY)

    @property
    def metres_per_newton_metre(self):
        return 0.5 / (self.mass * STANDARD_GRAVITY)

    @property
    def metres_per_kg(self):
        return 0.25 * self.reach / self.mass

    @property
    def label_height(self):
        return self.reach / 30.0


@functools.lru_cache(maxsize=8)
def arm_scale(urdf_xml):
    """ArmScale of a URDF's text (joint offsets and link masses; xacro already expanded);
    kept for the last texts asked (the node asks at every marker period)."""
    robot = ET.fromstring(urdf_xml)
    children, mass = {}, 0.0
    for joint in robot.findall("joint"):
        origin = joint.find("origin")
        xyz = [float(x) for x in origin.get("xyz", "0 0 0").split()] if origin is not None \
            else [0.0, 0.0, 0.0]
        children.setdefault(joint.find("parent").get("link"), []).append(
            (joint.find("child").get("link"), float(np.linalg.norm(xyz))))
    for m in robot.iter("mass"):
        mass += float(m.get("value"))

    def longest(link):
        return max((length + longest(child) for child, length in children.get(link, [])),
                   default=0.0)
    return ArmScale(reach=max(longest(root_link(urdf_xml)), 0.1), mass=max(mass, 0.1))


def root_link(urdf_xml):
    """The URDF's root link: the one no joint has as its child."""
    robot = ET.fromstring(urdf_xml)
    child = {j.find("child").get("link") for j in robot.findall("joint")}
    (root,) = [link.get("name") for link in robot.findall("link")
               if link.get("name") not in child]
    return root



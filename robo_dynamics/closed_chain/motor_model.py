"""A closed linkage's motors as a controller sees them (MotorModel): what the serial chain's
RobotModel gives the control layer (names, limits, friction, the tool link, the bodies to
draw), for the motors of a ClosedChain, which it carries for the solvers made from it
(backends/closed_chain_backend.py)."""

import dataclasses

import numpy as np

from ..errors import ArgumentError
from ..model.joint_limits import JointLimits
from .mimics import motor_names


@dataclasses.dataclass(frozen=True, eq=False)
class MotorModel(JointLimits):
    """The motors of a closed mechanism as a controller sees them: names, limits and
    friction per motor (the URDF's), the tool link, gravity [m/s², base frame]; the
    mechanism itself (`mechanism`, a ClosedChain) and its URDF, from which solvers are made;
    every body's link, joint, mass [kg] and centre of mass [m, its link's frame] as drawn."""

    name: str
    base_link: str
    tip_link: str
    joint_names: tuple
    joint_types: tuple
    gravity: np.ndarray
    passive_joints: tuple
    mechanism: object
    urdf_xml: str
    body_links: tuple
    body_joints: tuple
    mass: np.ndarray
    com: np.ndarray
    warnings: tuple = ()
    mimic_joints: tuple = ()
    payloads: tuple = ()          # none: a linkage's payload belongs in its URDF (not yet)
    is_coupled: bool = False

    @property
    def dof(self):
        return len(self.joint_names)

    @property
    def armature(self):
        return np.zeros(self.dof)

    def joint_index(self, name):
        return self.joint_names.index(name)

    def with_payload(self, link, mass, com, inertia):
        raise ValueError("a payload on a closed linkage is not supported yet: put its mass "
                         "into the URDF's tool link")

    def payload_frame(self, link):
        raise ValueError("payload identification on a closed linkage is not written yet")

    def with_armature(self, armature):
        raise ValueError("armature on a closed linkage is not supported yet")


def motor_model(chain, tip_link, urdf_xml=""):
    """The MotorModel of `chain`'s motors with `tip_link` (a link of the mechanism) as the
    tool; urdf_xml the mechanism's URDF text. ArgumentError naming the links if `tip_link`
    is not one."""
    tree = chain.tree
    if tip_link not in tree.link_frames:
        raise ArgumentError(f"tip_link '{tip_link}' is not a link of the mechanism "
                            f"{sorted(tree.link_frames)}")
    motors = motor_names(chain)
    rows = [tree.joint_index(name) for name in motors]
    passive = tuple(name for i, name in enumerate(tree.joint_names) if i not in rows)
    drawn = [i for i, link in enumerate(tree.body_links) if link is not None]   # not the
    # massless bodies between the axes of a ball joint
    return MotorModel(
        name=tree.name, base_link=tree.base_link, tip_link=tip_link,
        joint_names=tuple(motors),
        joint_types=tuple(tree.joint_types[i] for i in rows), **tree.limits_of(rows),
        gravity=np.array(tree.gravity), passive_joints=passive,
        mechanism=chain, urdf_xml=urdf_xml, body_links=tuple(tree.body_links[i] for i in drawn),
        body_joints=tuple(tree.joint_names[i] for i in drawn), mass=tree.mass[drawn],
        com=tree.com[drawn],
        warnings=tuple(tree.warnings))

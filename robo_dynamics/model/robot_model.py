"""The immutable serial-chain model every algorithm reads.

Frames: the base frame is the frame of `base_link`; gravity is expressed in it. Body i is
the child link of movable joint i with every link rigidly attached to it lumped in. Its
frame is that child link's frame (the joint frame moved by q_i).

For joint i the constant transform from body i−1 (the base for i = 0) to the joint frame
at q = 0 is (origin_rotation[i], origin_translation[i]); fixed joints between movable joints
are already folded into it. The joint moves the body about/along `axis[i]` (unit vector,
joint frame): revolute R = Rot(axis, q), prismatic p = axis · q.
"""

import collections
import dataclasses

import numpy as np

from ..errors import URDFError
from ..spatial.inertia import combine, physical_problems

Payload = collections.namedtuple("Payload", [
    "link",        # link it is attached to, as requested
    "body",        # index of the chain body carrying it
    "mass",        # kg
    "com",         # (3,) m, centre of mass in the body frame
    "inertia",     # (3, 3) kg·m², about the centre of mass, body axes
])

REVOLUTE = "revolute"
CONTINUOUS = "continuous"
PRISMATIC = "prismatic"


def _frozen(array):
    array = np.array(array, dtype=float)
    array.setflags(write=False)
    return array


@dataclasses.dataclass(frozen=True, eq=False)
class RobotModel:
    """Constants of a serial chain from `base_link` to `tip_link`; n = len(joint_names).

    Arrays (SI units, read-only):
      origin_rotation (n, 3, 3), origin_translation (n, 3) [m]: body i−1 → joint i frame.
      axis (n, 3): joint axis, unit, joint frame.
      mass (n,) [kg], com (n, 3) [m, body frame], inertia (n, 3, 3) [kg·m², about the COM,
      body axes]: lumped inertial parameters of each body.
      tip_rotation (3, 3), tip_translation (3,) [m]: body n−1 → tip_link frame.
      gravity (3,) [m/s², base frame].
      lower, upper [rad or m], velocity_limit [rad/s or m/s], effort_limit [N·m or N],
      damping [N·m·s/rad or N·s/m], friction [N·m or N]: per joint, from the URDF.
    payloads: the Payloads added by with_payload, already included in mass/com/inertia.
    """

    name: str
    base_link: str
    tip_link: str
    joint_names: tuple
    joint_types: tuple
    body_links: tuple
    origin_rotation: np.ndarray
    origin_translation: np.ndarray
    axis: np.ndarray
    mass: np.ndarray
    com: np.ndarray
    inertia: np.ndarray
    tip_rotation: np.ndarray
    tip_translation: np.ndarray
    gravity: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    locked_joints: tuple = ()
    payloads: tuple = ()
    urdf_xml: str = dataclasses.field(default="", repr=False)

    def __post_init__(self):
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, field.name, _frozen(value))
        prismatic = np.array([t == PRISMATIC for t in self.joint_types], dtype=bool)
        prismatic.setflags(write=False)
        object.__setattr__(self, "is_prismatic", prismatic)

    @property
    def dof(self):
        """Number of movable joints n in the chain."""
        return len(self.joint_names)

    def joint_index(self, name):
        """Index of joint `name` in model order; KeyError naming the known joints if absent."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"joint '{name}' is not in the chain {list(self.joint_names)}") from None

    def with_gravity(self, gravity):
        """A copy of this model with another gravity vector (m/s², base frame)."""
        g = np.asarray(gravity, dtype=float).reshape(-1)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ValueError(f"gravity must be 3 finite numbers (m/s^2), got {gravity!r}")
        return dataclasses.replace(self, gravity=g)

    def with_payload(self, link, mass, com, inertia):
        """A copy of this model carrying a rigid payload at `link`.

        link: a chain body link (`body_links`) or `tip_link`. mass [kg] ≥ 0; com (3,) [m]
        in the link frame; inertia (3, 3) [kg·m²] about the payload's centre of mass, link
        axes. Raises URDFError for an unknown link or an unphysical payload.
        """
        com = np.asarray(com, dtype=float).reshape(-1)
        inertia = np.asarray(inertia, dtype=float)
        if com.shape != (3,) or inertia.shape != (3, 3) or not np.all(np.isfinite(com)):
            raise URDFError("payload: com must be 3 finite numbers and inertia 3x3")
        problems = physical_problems(float(mass), inertia)
        if problems:
            raise URDFError(f"payload at '{link}': " + "; ".join(problems))
        if link in self.body_links:
            body, R, p = self.body_links.index(link), np.eye(3), np.zeros(3)
        elif link == self.tip_link:
            body, R, p = self.dof - 1, self.tip_rotation, self.tip_translation
        else:
            raise URDFError(f"payload link '{link}' is not a moving link of the chain; "
                            f"choose one of {list(self.body_links) + [self.tip_link]}")
        c_body, I_body = R @ com + p, R @ inertia @ R.T
        mass_all, com_all, inertia_all = (np.array(self.mass), np.array(self.com),
                                          np.array(self.inertia))
        mass_all[body], com_all[body], inertia_all[body] = combine(
            self.mass[body], self.com[body], self.inertia[body], float(mass), c_body, I_body)
        payload = Payload(link, body, float(mass), c_body, I_body)
        return dataclasses.replace(self, mass=mass_all, com=com_all, inertia=inertia_all,
                                   payloads=self.payloads + (payload,))

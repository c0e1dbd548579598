"""The immutable serial-chain model every algorithm reads.

Frames: the base frame is the frame of `base_link`; gravity is expressed in it. Body i is
the child link of movable joint i with every link rigidly attached to it lumped in. Its
frame is that child link's frame (the joint frame moved by q_i).

For joint i the constant transform from body i−1 (the base for i = 0) to the joint frame
at q = 0 is (origin_rotation[i], origin_translation[i]); fixed joints between movable joints
are already folded into it. The joint moves the body about/along `axis[i]` (unit vector,
joint frame): revolute R = Rot(axis, q), prismatic p = axis · q.
"""

import dataclasses

import numpy as np

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

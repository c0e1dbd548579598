"""The immutable serial-chain model every algorithm reads.

Frames: the base frame is the frame of `base_link`; gravity is expressed in it. Body i is
the child link of movable joint i with every link rigidly attached to it lumped in. Its
frame is that child link's frame (the joint frame moved by q_i).

For joint i the constant transform from body i−1 (the base for i = 0) to the joint frame
at q = 0 is (origin_rotation[i], origin_translation[i]); fixed joints between movable joints
are already folded into it. The joint moves the body about/along `axis[i]` (unit vector,
joint frame): revolute R = Rot(axis, q), prismatic p = axis · q.

Mimic joints. The model's coordinates q (n = dof, `joint_names`) are the independent joints
of the chain. Each body is moved by one joint (`body_joints`, n_b ≥ n of them) whose
position is q_body = coupling @ q + coupling_offset, the URDF's q_m = multiplier·q_s +
offset. Without mimic joints the coupling is the identity and bodies and joints coincide.
The algorithms work on bodies; the solvers give every quantity of the coupled system.
"""

import collections
import dataclasses

import numpy as np

from ..errors import ArgumentError, URDFError
from ..spatial.inertia import combine, physical_problems
from .joint_limits import JointLimits

STANDARD_GRAVITY = (0.0, 0.0, -9.81)
"""Gravity [m/s²] in the base frame of an arm standing on the floor, z up."""


def gravity_vector(gravity):
    """gravity as a (3,) float array [m/s², base frame]; ArgumentError unless 3 finite
    numbers. The one check of a gravity vector (loader, node parameters, simulator)."""
    g = np.asarray(gravity, dtype=float).reshape(-1)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise ArgumentError(f"gravity must be 3 finite numbers (m/s^2), got {list(gravity)!r}")
    return g


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
class RobotModel(JointLimits):
    """Constants of a serial chain from `base_link` to `tip_link`; n = len(joint_names)
    coordinates, n_b = len(body_links) bodies (n_b = n without mimic joints).

    Per body (SI units, read-only arrays):
      body_links, body_joints, body_types: the body's link, the joint that moves it, its type.
      origin_rotation (n_b, 3, 3), origin_translation (n_b, 3) [m]: body i−1 → joint i frame.
      axis (n_b, 3): joint axis, unit, joint frame. is_prismatic (n_b,) bool.
      mass (n_b,) [kg], com (n_b, 3) [m, body frame], inertia (n_b, 3, 3) [kg·m², about the
      COM, body axes]: lumped inertial parameters of each body.
      body_members: per body, the links lumped into it (its link first, then those fixed to
      it or below the chain, taken at q = 0).
      coupling (n_b, n), coupling_offset (n_b,): q_body = coupling @ q + coupling_offset.
    Per coordinate (the independent joints, `joint_names`, `joint_types`):
      lower, upper [rad or m], velocity_limit [rad/s or m/s], effort_limit [N·m or N]: the
      joint's own URDF limits; damping [N·m·s/rad or N·s/m], friction [N·m or N]: its own
      plus those of the joints mimicking it, seen at this coordinate (d + Σ m² d_m,
      f + Σ |m| f_m for multipliers m).
      armature (n,) [kg·m² or kg]: rotor inertia reflected through the drive, J_rotor N²
      for a gear ratio N (not in URDF: with_armature, from a datasheet); it adds
      diag(armature) to M(q) and armature·q̈ to τ (zeros unless set).
    tip_rotation (3, 3), tip_translation (3,) [m]: last body → tip_link frame.
    gravity (3,) [m/s², base frame].
    payloads: the Payloads added by with_payload, already included in mass/com/inertia.
    warnings: what the loader accepted but a user should know (e.g. an inertia that breaks
    the triangle inequality), one sentence each, naming the link or joint.
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
    body_joints: tuple = ()        # default: joint_names (no mimic joints)
    body_types: tuple = ()         # default: joint_types
    coupling: np.ndarray = None    # default: identity
    coupling_offset: np.ndarray = None   # default: zeros
    locked_joints: tuple = ()
    body_members: tuple = ()       # default: each body its own link
    payloads: tuple = ()
    armature: np.ndarray = None    # default: zeros
    warnings: tuple = ()
    urdf_xml: str = dataclasses.field(default="", repr=False)

    def __post_init__(self):
        n, n_b = len(self.joint_names), len(self.body_links)
        defaults = {"body_joints": self.joint_names, "body_types": self.joint_types,
                    "coupling": np.eye(n_b, n), "coupling_offset": np.zeros(n_b),
                    "body_members": tuple((link,) for link in self.body_links),
                    "armature": np.zeros(n)}
        for name, default in defaults.items():
            value = getattr(self, name)
            if value is None or (isinstance(value, tuple) and not value):
                object.__setattr__(self, name, default)
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, field.name, _frozen(value))
        prismatic = np.array([t == PRISMATIC for t in self.body_types], dtype=bool)
        prismatic.setflags(write=False)
        object.__setattr__(self, "is_prismatic", prismatic)
        coupled = n_b != n or not (np.array_equal(self.coupling, np.eye(n_b, n))
                                   and not np.any(self.coupling_offset))
        object.__setattr__(self, "is_coupled", coupled)

    @property
    def dof(self):
        """Number of coordinates n: the independent movable joints of the chain."""
        return len(self.joint_names)

    @property
    def body_count(self):
        """Number of moving bodies n_b of the chain (n plus the mimic joints in it)."""
        return len(self.body_links)

    @property
    def mimic_joints(self):
        """Joints of the chain that follow another joint (not coordinates)."""
        return tuple(name for name in self.body_joints if name not in self.joint_names)

    def bodies(self):
        """This chain with every body's joint as a coordinate (no coupling): the model the
        algorithms of robo_dynamics.algorithms work on; equal to self without mimic joints.
        Limits, damping and friction of a mimic joint are its master's."""
        if not self.is_coupled:
            return self
        per_body = self.limits_of(np.argmax(np.abs(self.coupling), axis=1))   # masters
        return dataclasses.replace(
            self, joint_names=self.body_joints, joint_types=self.body_types,
            coupling=np.eye(self.body_count), coupling_offset=np.zeros(self.body_count),
            armature=np.zeros(self.body_count), **per_body)

    def joint_index(self, name):
        """Index of joint `name` in model order; KeyError naming the known joints if absent."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"joint '{name}' is not in the chain {list(self.joint_names)}") from None

    def payload_frame(self, link):
        """(body index, R (3, 3), p (3,)) of a link that can carry a payload: a chain body
        link (R = I, p = 0) or the tip link (its rotation and origin in the last body's
        frame); a point x of the link's frame is R x + p in the body's. URDFError otherwise."""
        if link in self.body_links:
            return self.body_links.index(link), np.eye(3), np.zeros(3)
        if link == self.tip_link:
            return (self.body_count - 1, np.asarray(self.tip_rotation, dtype=float),
                    np.asarray(self.tip_translation, dtype=float))
        raise URDFError(f"payload link '{link}' is not a moving link of the chain; choose "
                        f"one of {list(self.body_links) + [self.tip_link]}")

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
        body, R, p = self.payload_frame(link)
        c_body, I_body = R @ com + p, R @ inertia @ R.T
        mass_all, com_all, inertia_all = (np.array(self.mass), np.array(self.com),
                                          np.array(self.inertia))
        mass_all[body], com_all[body], inertia_all[body] = combine(
            self.mass[body], self.com[body], self.inertia[body], float(mass), c_body, I_body)
        payload = Payload(link, body, float(mass), c_body, I_body)
        return dataclasses.replace(self, mass=mass_all, com=com_all, inertia=inertia_all,
                                   payloads=self.payloads + (payload,))

    def with_armature(self, armature):
        """A copy of this model with rotor armature (n,) [kg·m² or kg], each ≥ 0 and finite
        (one value: the same for every joint). ArgumentError otherwise, and on a chain with
        mimic joints (their drives' inertia is not modelled)."""
        values = np.asarray(armature, dtype=float).reshape(-1)
        if values.shape == (1,):
            values = np.full(self.dof, values[0])
        if values.shape != (self.dof,) or not np.all(np.isfinite(values) & (values >= 0.0)):
            raise ArgumentError(f"armature needs {self.dof} finite values >= 0 (or one), got "
                                f"{np.asarray(armature).tolist()}")
        if self.is_coupled and np.any(values):
            raise ArgumentError("armature on a chain with mimic joints is not supported")
        return dataclasses.replace(self, armature=values)

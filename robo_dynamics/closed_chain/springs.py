"""Springs and dampers at a mechanism's joints, as an SDF model gives them (<axis><dynamics>:
spring_stiffness, spring_reference, damping) or a params file beside a URDF (joint_springs:
joints, stiffness, reference, damping): the generalized force they exert,

    τ_s(q, q̇) = −K (q − q_ref) − D q̇        (n,) [N·m or N]

K, D diagonal (per joint: [N·m/rad] and [N·m·s/rad], or [N/m] and [N·s/m] for a prismatic
joint). It is applied like the motors' torques: M q̈ + h = Sᵀτ + τ_s + Φ_qᵀλ. Joint friction
is not modelled.
"""

import math

import numpy as np

from ..errors import ArgumentError


class JointSprings:
    """stiffness, reference, damping: (n,) each, in the tree's joint order."""

    def __init__(self, stiffness, reference, damping):
        self.stiffness, self.reference, self.damping = (
            np.array(x, dtype=float) for x in (stiffness, reference, damping))
        for name, x in (("stiffness", self.stiffness), ("damping", self.damping)):
            if not np.all(np.isfinite(x)) or np.any(x < 0.0):
                raise ValueError(f"joint springs: {name} must be finite and ≥ 0, got {x}")
        if not np.all(np.isfinite(self.reference)):
            raise ValueError(f"joint springs: reference must be finite, got {self.reference}")

    @property
    def any(self):
        """Whether some joint has a spring or a damper."""
        return bool(np.any(self.stiffness) or np.any(self.damping))

    def torque(self, q, qd=None):
        """τ_s (n,) at (q, q̇); q̇ None: at rest."""
        tau = -self.stiffness * (np.asarray(q, dtype=float) - self.reference)
        if qd is not None:
            tau -= self.damping * np.asarray(qd, dtype=float)
        return tau


def springs_from_parameters(tree, section):
    """JointSprings of `tree` from a params file's joint_springs section: {joints: [names],
    stiffness: [N·m/rad or N/m], reference: [rad or m] (default 0), damping: [N·m·s/rad or
    N·s/m] (default 0)}, one value per joint named; None for no section. ArgumentError
    naming what is wrong."""
    if not section or not section.get("joints"):
        return None
    names = list(section["joints"])
    unknown = [name for name in names if name not in tree.joint_names]
    if unknown:
        raise ArgumentError(f"joint_springs.joints: {unknown} are not movable joints of the "
                            f"mechanism {list(tree.joint_names)}")
    if len(set(names)) != len(names):
        raise ArgumentError(f"joint_springs.joints: a joint named twice in {names}")
    values = {}
    for field in ("stiffness", "reference", "damping"):
        given = section.get(field)
        given = [0.0] * len(names) if not given and field != "stiffness" else list(given or [])
        if len(given) != len(names) or not all(math.isfinite(v) for v in given):
            raise ArgumentError(f"joint_springs.{field}: {len(names)} finite values, one per "
                                f"joint of joint_springs.joints, got {given}")
        if field != "reference" and any(v < 0.0 for v in given):
            raise ArgumentError(f"joint_springs.{field}: must be ≥ 0, got {given}")
        values[field] = np.zeros(tree.dof)
        values[field][[tree.joint_index(name) for name in names]] = given
    return JointSprings(values["stiffness"], values["reference"], values["damping"])

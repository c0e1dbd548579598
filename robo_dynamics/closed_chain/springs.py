"""Springs and dampers at a mechanism's joints, as an SDF model gives them (<axis><dynamics>:
spring_stiffness, spring_reference, damping): the generalized force they exert,

    τ_s(q, q̇) = −K (q − q_ref) − D q̇        (n,) [N·m or N]

K, D diagonal (per joint: [N·m/rad] and [N·m·s/rad], or [N/m] and [N·s/m] for a prismatic
joint). It is applied like the motors' torques: M q̈ + h = Sᵀτ + τ_s + Φ_qᵀλ. Joint friction
is not modelled.
"""

import numpy as np


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

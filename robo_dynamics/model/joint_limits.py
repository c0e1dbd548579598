"""The per-joint record every model of an arm carries (RobotModel, a closed linkage's
KinematicTree and MotorModel): position range, velocity and effort limits, and the joint's
damping and friction, as the URDF gives them."""

import dataclasses

import numpy as np

LIMIT_FIELDS = ("lower", "upper", "velocity_limit", "effort_limit", "damping", "friction")


@dataclasses.dataclass(frozen=True, eq=False)
class JointLimits:
    """Each (n,), in the model's joint order: lower, upper [rad or m] (±inf: none),
    velocity_limit [rad/s or m/s], effort_limit [N·m or N] (inf: none), damping
    [N·m·s/rad or N·s/m], friction [N·m or N] (Coulomb)."""

    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    damping: np.ndarray
    friction: np.ndarray

    @property
    def limited(self):
        """(n,) bool: the joints with a position range (finite, upper > lower); a
        continuous joint (±inf) or one whose URDF gives lower = upper has none."""
        return np.isfinite(self.lower) & np.isfinite(self.upper) & (self.upper > self.lower)

    def limits_of(self, rows):
        """{field: its values at `rows`} (indices into this model's joints): the record of
        those joints, for a model of them (dataclasses.replace or a constructor)."""
        return {key: np.asarray(getattr(self, key))[rows] for key in LIMIT_FIELDS}

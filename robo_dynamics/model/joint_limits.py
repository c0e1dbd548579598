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

    def with_limits(self, effort_limit=None, velocity_limit=None):
        """A copy with these effort [N·m or N] and velocity [rad/s or m/s] limits (n,) in
        place of the URDF's (None: kept)."""
        changes = {key: np.asarray(value, dtype=float) for key, value in (
            ("effort_limit", effort_limit), ("velocity_limit", velocity_limit))
            if value is not None}
        return dataclasses.replace(self, **changes) if changes else self

    def zero_limits(self, field):
        """The joint names whose `field` ("effort_limit", "velocity_limit") is 0 or less:
        a URDF that leaves it unsaid."""
        return [name for name, value in zip(self.joint_names, getattr(self, field))
                if not value > 0.0]

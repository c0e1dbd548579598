"""A person's hand in the tool's way, as ISO/TS 15066:2016 Annex A models a body region in a
contact: a spring of the region's effective spring constant k in front of its effective
mass m_H. No ROS here; SimulatedArm steps it with the arm.

The hand's face starts at `point` [m] (base frame), the tool meeting it along `axis` (unit,
base axes: the direction the tool comes from toward the hand). Pressed in by
d = (p − face) · axis > 0 (p: the tool's origin) the spring pushes back on the tool with
F = −k d axis (compression only: it never pulls). Free (transient contact), the hand is
pushed away: m_H ẍ = k d, the face moving with it; clamped (against a wall), the face
stays. The spring's largest force is what Annex A limits: twice the region's quasi-static
force in a transient contact, the force itself when clamped.
"""

import numpy as np


class HandStandIn:
    """The hand of the module docstring: `point` (3,) [m], `axis` (3,) (made unit), the
    region's effective spring constant `spring` [N/m] and mass `mass` [kg] (the callers
    take them from control/contact_safety.REGIONS), clamped or free."""

    def __init__(self, point, axis, spring, mass, clamped=False):
        axis = np.asarray(axis, dtype=float)
        size = np.linalg.norm(axis)
        if not (np.all(np.isfinite(point)) and np.isfinite(size) and size > 1e-9):
            raise ValueError("a hand stand-in needs a finite point and a non-zero axis")
        self.point, self.axis = np.asarray(point, dtype=float), axis / size
        self.spring, self.mass, self.clamped = float(spring), float(mass), bool(clamped)
        self.x, self.v = 0.0, 0.0      # [m], [m/s]: how far the hand has been pushed along
        self.force = 0.0               # [N] the spring's force now (≥ 0)
        self.peak = 0.0                # [N] its largest so far

    def press(self, p):
        """The force on the tool at its origin p (3,) [m] (base axes, [N]); remembers the
        spring's force (`force`, `peak`)."""
        depth = float((np.asarray(p, dtype=float) - self.point) @ self.axis) - self.x
        self.force = self.spring * max(depth, 0.0)
        self.peak = max(self.peak, self.force)
        return -self.force * self.axis

    def step(self, h):
        """The hand moved over a step h [s] under the spring's force now (semi-implicit
        Euler); a clamped hand stays."""
        if not self.clamped:
            self.v += self.force / self.mass * h
            self.x += self.v * h

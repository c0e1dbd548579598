"""The Cartesian safety limits at each joint state: the watched points (the tool, then the
monitored points, contact_safety.ContactLimit) against the safety planes and their speed
limits, the brake that keeps a guided arm within them, and how a breach stops the arm. No
ROS here.

- A breach: a watched sphere beyond a safety plane (its centre less than its radius inside;
  one that was beyond it when the desired motion was admitted: deeper than it was by
  TOLERANCE, or than it has come back to since, so the motion can bring it back), or a
  point faster than its limit (the contact's v_max at the reflected mass it carries
  along its motion, within its cap; contact_safety.py). It starts the safe hold (a
  controlled stop), naming the point and by how much.
- safety_stop_category, as IEC 60204-1 (§9.2.2) names stops: 2, a controlled stop with
  power kept (the safe hold goes on holding the arm); 1, a controlled stop, then power
  removed: once every joint is below STANDSTILL of its velocity bound the command stream
  stops, the arm's brakes hold it, until a new desired motion.
- The brake: in gravity compensation (hand guiding) and the Cartesian modes, the point
  furthest past HEADROOM of its limit is damped, F = −c (|v| − HEADROOM v_max) u at it,
  τ = J_vᵀ F, with c = m_R(u) / (2 T) the strongest damping the loop holds at the control
  period T [s] (the excess speed halves each period, one period late); 0 below, so
  continuous there.
"""

import math

import numpy as np

from .contact_safety import HEADROOM, along_motion

STOP_CATEGORIES = (1, 2)
STANDSTILL = 0.01     # of each joint's velocity bound: the arm at rest (a category-1 stop)
TOLERANCE = 1e-3      # [m] a sphere an admitted motion started beyond a plane may go deeper


def point_names(contact):
    """How events name the watched points: the tool, then each monitored point."""
    return ["the tool"] + [f"the monitored point on '{link}'"
                           for link, _ in (contact.points if contact is not None else ())]


def point_states(solver, q, contact):
    """[(p (3,) [m], J_v (3, n))]: each watched point's position and linear Jacobian at q,
    base axes (contact may be None: the tool alone)."""
    u = solver.unchecked
    states = [(u.tip_pose(q)[1], u.jacobian(q)[:3])]
    for link, point in (contact.points if contact is not None else ()):
        states.append(u.point_jacobian(q, link, point))
    return states


def category_one_at_rest(qd, settings):
    """Whether a category-1 stop may remove power now: safety_stop_category 1 and every
    joint with a velocity bound below STANDSTILL of it."""
    return settings.stop_category == 1 and bool(
        np.all(np.abs(qd) <= STANDSTILL * settings.velocity_bound))


class LimitWatch:
    """The limits at one joint state (module docstring): `breach` first, then `brake` on
    the same state's points."""

    def __init__(self):
        self._state = None     # [q, q̇, M⁻¹ or None, the points' states, their speeds [m/s]]
        #                        at the last breach check
        self.allowed = None    # (planes, points) [m] how far beyond each plane each sphere
        #                        may be (≤ 0): 0, or where an admitted motion started

    def admit(self, solver, q, settings):
        """A desired motion admitted at q: a sphere already beyond a plane may stay as deep
        (the motion brings it back: the allowance shrinks as it comes)."""
        self.allowed = np.minimum(self._insides(point_states(solver, q, settings.contact),
                                                settings), 0.0)

    def breach(self, solver, q, qd, settings):
        """Why the watched points break a plane or a speed limit at (q, q̇), or None."""
        contact, planes = settings.contact, settings.planes
        self._state = None
        if contact is None and not planes:
            return None
        states = point_states(solver, q, contact)
        speeds = [math.sqrt(v @ v) for v in (J_v @ qd for _, J_v in states)]
        self._state = [q, qd, None, states, speeds]
        if planes:
            inside = self._insides(states, settings)
            allowed = (np.zeros_like(inside) if self.allowed is None
                       or self.allowed.shape != inside.shape else self.allowed)
            over = np.where(allowed < 0.0, allowed - TOLERANCE, 0.0) - inside
            k, i = np.unravel_index(int(np.argmax(over)), over.shape)
            if over[k, i] > 0.0:
                return (f"{point_names(contact)[i]} is {-1e3 * inside[k, i]:.3g} mm beyond "
                        f"safety plane {k}")
            self.allowed = np.maximum(allowed, np.minimum(inside, 0.0))
        if contact is None:
            return None
        for i, (_, J_v) in enumerate(states):
            if speeds[i] <= contact.floors[i]:             # M⁻¹ only when it may matter
                continue
            speed, _, m_R = along_motion(J_v, self._inverse(solver), qd)
            limit = float(contact.speed_limit(m_R, i))
            if speed > limit:
                return (f"{point_names(contact)[i]} moves at {speed:.4g} m/s, over the "
                        f"{limit:.4g} m/s allowed (reflected mass {m_R:.3g} kg)")
        return None

    def brake(self, solver, contact, period):
        """τ (n,) [N·m or N] damping the watched point furthest past HEADROOM of its limit
        at the state `breach` saw (module docstring), or 0.0."""
        if contact is None or period is None or self._state is None:
            return 0.0
        _, qd, _, states, speeds = self._state
        worst, torque = 0.0, 0.0
        for i, (_, J_v) in enumerate(states):
            if speeds[i] <= HEADROOM * contact.floors[i]:
                continue
            speed, w, m_R = along_motion(J_v, self._inverse(solver), qd)
            limit = HEADROOM * float(contact.speed_limit(m_R, i))
            if speed - limit > worst * limit:
                worst = (speed - limit) / limit
                torque = w * (-m_R / (2.0 * period) * (speed - limit))
        return torque

    @staticmethod
    def _insides(states, settings):
        """(planes, points) [m]: how far each watched sphere is inside each plane."""
        contact = settings.contact
        radii = np.asarray(contact.radii if contact is not None else (0.0,))
        centres = np.array([p for p, _ in states])
        return np.array([plane.distance(centres) for plane in settings.planes]).reshape(
            -1, len(centres)) - radii

    def _inverse(self, solver):
        """M(q)⁻¹ at the watched state, computed once."""
        state = self._state
        if state[2] is None:
            state[2] = solver.unchecked.mass_matrix_inverse(state[0])
        return state[2]

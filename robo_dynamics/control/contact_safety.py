"""Power and force limiting from the arm's dynamics (ISO/TS 15066:2016, Annex A; now
ISO 10218-2:2025): how fast a point of the arm may move toward a person, from the mass
it carries into the contact. No ROS here.

A point moving at v along u carries the reflected mass m_R(u) = 1/(uᵀ J_v M⁻¹ J_vᵀ u)
(Khatib, "Inertial properties in robotic manipulation", 1995; algorithms/operational_space.
reflected_mass), M with the drives' armature and the payload the model carries. Against a
body region of effective mass m_H and spring constant k:

- transient contact (the person can move away): the two-body reduced mass
  μ = (1/m_H + 1/m_R)⁻¹ meets the region's spring with energy E = ½ μ v², which peaks the
  force at F = v √(μ k); allowed up to twice the region's quasi-static force, so
  v_max = 2 F_qs / √(μ k) (E ≤ (2 F_qs)² / (2 k));
- clamped contact (the person cannot move away, against a fixture): μ = m_R and the
  quasi-static force itself, v_max = F_qs / √(m_R k).

REGIONS: the body regions the standard lists for these (Table A.2: maximum permissible
quasi-static force and effective spring constant; Table A.3: effective mass), head and
face left out by design: no contact there is acceptable.
"""

import dataclasses
import math

import numpy as np

from ..algorithms.operational_space import reflected_mass


@dataclasses.dataclass(frozen=True)
class Region:
    """A body region: quasi-static force [N], effective spring constant [N/m], effective
    mass [kg]."""
    force: float
    spring: float
    mass: float


HEADROOM = 0.95   # the node keeps a point's speed this far below v_max (slows, damps)

REGIONS = {   # ISO/TS 15066:2016 Tables A.2 and A.3
    "hand": Region(140.0, 75e3, 0.6),
    "forearm": Region(160.0, 40e3, 2.0),
    "upper_arm": Region(150.0, 30e3, 3.0),
    "chest": Region(140.0, 25e3, 40.0),
    "abdomen": Region(110.0, 10e3, 40.0),
    "back_shoulders": Region(210.0, 35e3, 40.0),
}


def reduced_mass(m_R, m_H):
    """[kg] μ = (1/m_H + 1/m_R)⁻¹; m_R may be inf (then m_H)."""
    return m_H if math.isinf(m_R) else 1.0 / (1.0 / m_H + 1.0 / m_R)


def transient_speed_limit(m_R, region):
    """[m/s] the largest speed at which a point of reflected mass m_R [kg] may meet
    `region` in a transient contact: 2 F_qs / √(μ k)."""
    return 2.0 * region.force / math.sqrt(reduced_mass(m_R, region.mass) * region.spring)


def clamped_speed_limit(m_R, region):
    """[m/s] the same for a clamped contact: F_qs / √(m_R k) (0 where m_R is inf)."""
    return 0.0 if math.isinf(m_R) else region.force / math.sqrt(m_R * region.spring)


@dataclasses.dataclass(frozen=True)
class ContactLimit:
    """The speed limits of the watched points, the tool first (index 0), then the
    monitored points: (link, point (3,) [m] in the link's frame) each
    (monitored_points). regions: the body regions a person may put in the arm's way (names
    of REGIONS; (): no power-and-force limiting, the caps alone), clamped: whether a contact
    may clamp them (against a fixture). caps: per watched point, a speed it never passes
    [m/s] (inf: none; (): none at all). radii: per watched point, a sphere's radius [m]
    kept inside the safety planes ((): points)."""
    regions: tuple = tuple(REGIONS)
    clamped: bool = False
    points: tuple = ()
    caps: tuple = ()
    radii: tuple = ()

    def __post_init__(self):
        table = [(REGIONS[name].force, REGIONS[name].spring, REGIONS[name].mass)
                 for name in self.regions]
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_columns", np.array(table).reshape(-1, 3).T)   # F, k, m_H
        count = 1 + len(self.points)
        object.__setattr__(self, "caps", tuple(self.caps) or (math.inf,) * count)
        object.__setattr__(self, "radii", tuple(self.radii) or (0.0,) * count)
        object.__setattr__(self, "floors", tuple(self.speed_limit(math.inf, k)
                                                 for k in range(count)))
        object.__setattr__(self, "floor", self.floors[0])

    def speed_limit(self, m_R, point=0):
        """[m/s] v_max of watched point `point` (0: the tool) at reflected mass(es) m_R
        [kg] (a float or an array; inf: a direction the point cannot move in): the most
        restrictive region's, within the point's cap. `floors`: each point's least value at
        any mass (m_R → inf), below which no check is needed; `floor`, the tool's."""
        cap = self.caps[point]
        if np.ndim(m_R) == 0:                   # one mass: the hot path, no arrays
            m_R = float(m_R)
            if not self._table:
                return cap
            if self.clamped:
                return min([cap] + [F / math.sqrt(m_R * k) for F, k, _ in self._table])
            return min([cap] + [2.0 * F / math.sqrt(k * reduced_mass(m_R, m_H))
                                for F, k, m_H in self._table])
        m_R = np.asarray(m_R, dtype=float)
        if not self._table:
            return np.full(m_R.shape, cap)
        F, k, m_H = self._columns
        m_R = m_R[..., None]
        with np.errstate(divide="ignore"):
            if self.clamped:
                limit = np.min(F / np.sqrt(m_R * k), axis=-1)
            else:
                limit = np.min(2.0 * F / np.sqrt(k / (1.0 / m_H + 1.0 / m_R)), axis=-1)
        return np.minimum(limit, cap)


def monitored_points(model, links, offsets):
    """ContactLimit.points for `links` (moving links of the chain, or of a closed linkage's
    mechanism) at `offsets` (3 per link [m], in each link's frame; None: their origins);
    ValueError naming what cannot be monitored."""
    if not links:
        return ()
    offsets = np.zeros((len(links), 3)) if offsets is None else np.asarray(offsets, float)
    if offsets.size != 3 * len(links):
        raise ValueError(f"monitored_offsets needs 3 values per monitored link "
                         f"({3 * len(links)}), got {offsets.size}")
    mechanism = getattr(model, "mechanism", None)
    if mechanism is None and getattr(model, "is_coupled", True):
        raise ValueError("monitored_links: not on a chain with mimic joints (its points "
                         "are not monitored yet)")
    moving = ([link for link in mechanism.tree.link_frames if link != model.base_link]
              if mechanism is not None else list(model.body_links) + [model.tip_link])
    for link in links:
        if link not in moving:
            raise ValueError(f"monitored_links: link '{link}' is not a moving link of the "
                             f"chain; choose one of {moving}")
    return tuple((link, tuple(float(x) for x in offset))
                 for link, offset in zip(links, offsets.reshape(-1, 3)))


def most_restrictive(m_R, regions=REGIONS, clamped=False):
    """(name, v_max [m/s]) of the region that allows the least speed at m_R."""
    limit = clamped_speed_limit if clamped else transient_speed_limit
    return min(((name, limit(m_R, region)) for name, region in regions.items()),
               key=lambda item: item[1])


@dataclasses.dataclass(frozen=True)
class PointLimit:
    """What the limit says of one point at one state: its speed [m/s] and direction
    (unit, base axes; the worst direction, the largest m_R, when it is at rest), the mass
    it carries along it [kg], the region and the speed allowed [m/s], and the margin
    v_max − speed [m/s] (negative: too fast)."""
    speed: float
    direction: np.ndarray
    mass: float
    region: str
    v_max: float

    @property
    def margin(self):
        return self.v_max - self.speed


def point_limit(J_v, M_inv, qd, contact=None, point=0):
    """PointLimit of watched point `point` (0: the tool) whose linear Jacobian is J_v (3, n)
    [base axes] at the state (M_inv = M(q)⁻¹, q̇ (n,)), against `contact` (None: every
    region, transient, as if enforced); a cap below the regions' speed is named "cap"."""
    v = J_v @ qd
    speed = float(np.linalg.norm(v))
    if speed > 1e-9:
        u = v / speed
        m_R = float(reflected_mass(J_v, M_inv, u)[0])
    else:
        masses, axes = reflected_mass(J_v, M_inv)
        k = int(np.argmax(np.where(np.isfinite(masses), masses, -1.0)))
        u, m_R = axes[:, k], float(masses[k])
    regions = REGIONS if contact is None else {name: REGIONS[name] for name in contact.regions}
    name, v_max = (most_restrictive(m_R, regions, contact is not None and contact.clamped)
                   if regions else ("", math.inf))
    cap = math.inf if contact is None else contact.caps[point]
    if cap < v_max:
        name, v_max = "cap", cap
    return PointLimit(speed, u, m_R, name, v_max)


def along_motion(J_v, M_inv, qd):
    """(speed [m/s], w = J_vᵀ u (n,), m_R(u) [kg]) of the point of linear Jacobian J_v
    (3, n) moving at J_v q̇ along u; (0, None, inf) at rest."""
    v = J_v @ qd
    speed = math.sqrt(v @ v)
    if speed < 1e-9:
        return 0.0, None, math.inf
    w = J_v.T @ (v / speed)
    return speed, w, 1.0 / float(w @ M_inv @ w)


def speed_ratio(J_v, M_inv, qd, contact, point=0):
    """speed / v_max of watched point `point` (0: the tool), of linear Jacobian J_v (3, n),
    at q̇ (n,) for `contact` (0 at rest)."""
    speed, _, m_R = along_motion(J_v, M_inv, qd)
    return 0.0 if speed == 0.0 else speed / float(contact.speed_limit(m_R, point))

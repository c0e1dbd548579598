"""The controller's Settings (gains and bounds), and how parameter values (dynamics_node's,
validated) give them: each default that depends on the arm is applied here, once. No ROS
here.

`values` is a dict, parameter name → value (None: unset), as ros/parameters.py reads them;
per-joint parameters hold 1 value (for every joint) or n, in model joint order, SI units.
"""

import dataclasses
import math

import numpy as np

from .contact_safety import REGIONS, ContactLimit, monitored_points
from .limits import effort_bounds, velocity_bounds
from .safety_planes import planes_from
from .momentum_observer import DEFAULT_THRESHOLDS


@dataclasses.dataclass(frozen=True)
class Settings:
    """Gains and bounds, each (n,) in model joint order, SI units.

    kp [1/s²], kd [1/s]: computed-torque gains. effort_bound [N·m or N]: |τ| ≤ bound.
    max_torque_rate [N·m/s]. start_tolerance, max_tracking_error [rad or m].
    velocity_bound [rad/s or m/s] (inf: none). hold_decay_rate λ [1/s]: the safe hold
    brings every joint's velocity down as e^(−λt) (hold.hold_law). hold_damping D [N·m·s/rad]
    (None: the model's law; given: g − D q̇ instead).
    stale_timeout [s]. hold_timeout [s]: how long the hold may take to bring every joint
    below the velocity bound before the stream stops. viscous, coulomb: the joints'
    friction model (None: none); with friction_compensation it is added to the commands
    and the observer models it (without, the node models no friction).
    observer_gain K_O [1/s] (None: no external-torque estimate). contact_threshold,
    collision_threshold [N·m or N]: per-joint levels of |τ_ext|. collision_reaction: 'none'
    or 'hold'. torque_constants [N·m/A] (None: JointState.effort is the joint torque; else
    it is the motor current, τ_m = k ⊙ i, gear ratio included).
    hardware_compensates_gravity: the drives add g(q) themselves (Franka, UR direct torque
    control): the command sent leaves g(q) out; every bound applies to the full torque.
    hold_push_force [N]: a person's push at the tool that the hold yields to at no more than
    hold.HOLD_YIELD of the velocity bound (hold.hold_rates; 0: hold_decay_rate alone).
    contact: the contact_safety.ContactLimit the watched points' speeds are kept within
    (None: none). planes: the safety_planes.Plane the tool and the monitored spheres stay
    in (() none). stop_category: how a breach of either stops the arm (safety_limits.py).
    """
    kp: np.ndarray
    kd: np.ndarray
    effort_bound: np.ndarray
    max_torque_rate: np.ndarray
    start_tolerance: np.ndarray
    max_tracking_error: np.ndarray
    velocity_bound: np.ndarray
    hold_damping: np.ndarray
    stale_timeout: float
    hold_decay_rate: float = 20.0
    hold_timeout: float = 0.5
    viscous: np.ndarray = None
    coulomb: np.ndarray = None
    friction_compensation: bool = False
    observer_gain: np.ndarray = None
    contact_threshold: np.ndarray = None
    collision_threshold: np.ndarray = None
    collision_reaction: str = "none"
    torque_constants: np.ndarray = None
    hardware_compensates_gravity: bool = False
    hold_push_force: float = 50.0
    contact: ContactLimit = None
    planes: tuple = ()
    stop_category: int = 2

    def observer_thresholds(self):
        """(contact, collision) thresholds as lists, for momentum_observer.contact_levels."""
        if self.contact_threshold is None:
            return None, None
        return self.contact_threshold.tolist(), self.collision_threshold.tolist()


def per_joint(values, dof, name):
    """A per-joint list from a parameter: n values, or 1 value for all; None when unset."""
    if values is None:
        return None
    values = list(values)
    if len(values) == 1:
        values = values * dof
    if len(values) != dof:
        raise ValueError(f"{name} needs 1 or {dof} values, got {len(values)}")
    return values


def thresholds(contact, collision, effort_limit):
    """(contact, collision) thresholds [N·m or N] per joint: the values given, or the
    defaults, DEFAULT_THRESHOLDS of each joint's effort limit."""
    return tuple(np.array(given, dtype=float) if given is not None else fraction * effort_limit
                 for given, fraction in zip((contact, collision), DEFAULT_THRESHOLDS))


def controller_settings(values, model):
    """Settings for `model` (its limits, damping and friction) from parameter values."""
    n = model.dof

    def joint_values(name):
        given = per_joint(values[name], n, name)
        return None if given is None else np.array(given, dtype=float)
    viscous, coulomb = joint_values("viscous_friction"), joint_values("coulomb_friction")
    hold = joint_values("hold_damping")
    gain = joint_values("observer_gain")
    contact, collision = thresholds(joint_values("contact_thresholds"),
                                    joint_values("collision_thresholds"), model.effort_limit)
    return Settings(
        kp=joint_values("kp"), kd=joint_values("kd"),
        effort_bound=effort_bounds(model.effort_limit, values["torque_limit_scale"]),
        max_torque_rate=joint_values("max_torque_rate"),
        start_tolerance=joint_values("start_tolerance"),
        max_tracking_error=joint_values("max_tracking_error"),
        velocity_bound=velocity_bounds(model.velocity_limit, values["velocity_limit_scale"]),
        hold_damping=hold, hold_decay_rate=values["hold_decay_rate"],
        stale_timeout=values["stale_timeout"], hold_timeout=values["hold_timeout"],
        viscous=viscous if viscous is not None else model.damping,
        coulomb=coulomb if coulomb is not None else model.friction,
        friction_compensation=bool(values["friction_compensation"]),
        observer_gain=gain if gain.any() else None,
        contact_threshold=contact, collision_threshold=collision,
        collision_reaction=values["collision_reaction"],
        torque_constants=(joint_values("torque_constants")
                          if values["effort_source"] == "current" else None),
        hardware_compensates_gravity=values["hardware_compensates_gravity"],
        hold_push_force=values["hold_push_force"],
        contact=contact_limit(values, model), planes=planes_from(values.get("safety_planes")),
        stop_category=values.get("safety_stop_category", 2))


def contact_limit(values, model):
    """The ContactLimit the parameters ask for (unset: every region, transient, the tool
    alone), or None (no limit on any point); ValueError for a monitored link `model` does
    not have, or a radius or speed limit per link that does not fit."""
    points = monitored_points(model, values.get("monitored_links"),
                              values.get("monitored_offsets"))
    radii = per_link(values.get("monitored_radii"), len(points), "monitored_radii", 0.0)
    caps = per_link(values.get("monitored_speed_limits"), len(points),
                    "monitored_speed_limits", 0.0)
    caps = [x if x > 0.0 else math.inf for x in [values.get("tool_speed_limit") or 0.0] + caps]
    regions = (tuple(values.get("body_regions") or REGIONS)
               if values.get("power_force_limiting", True) else ())
    if not regions and not points and math.isinf(caps[0]):
        return None
    return ContactLimit(regions, values.get("contact_type", "transient") == "clamped",
                        points, tuple(caps), (0.0,) + tuple(radii))


def per_link(values, count, name, unset):
    """`count` values from a per-monitored-link parameter: 1 for all or 1 per link (unset:
    `unset` each); ValueError otherwise."""
    values = list(values or ())
    if not values:
        return [unset] * count
    if len(values) == 1:
        return values * count
    if len(values) != count:
        raise ValueError(f"{name} needs 1 value or 1 per monitored link ({count}), got "
                         f"{len(values)}")
    return values


def friction_beyond_reach(model, mass_matrix, settings):
    """Sentences, one per joint whose modelled Coulomb friction f_c the tracking cannot
    overcome: uncompensated, it holds joint i up to f_c / (M_ii kp_i) off a path (computed
    torque's stiffness is M_ii kp_i), warned beyond half of max_tracking_error. mass_matrix:
    M [kg·m² or kg] at a pose the arm works in. None of them with friction_compensation."""
    if settings.friction_compensation or settings.coulomb is None:
        return []
    offset = settings.coulomb / (np.diag(mass_matrix) * settings.kp)       # [rad or m]
    units = [("m", "N", "kg") if kind == "prismatic" else ("rad", "N·m", "kg·m²")
             for kind in model.joint_types]
    return [f"joint '{name}': the Coulomb friction the model gives it ({f:.3g} {u[1]}) would "
            f"hold it up to {e:.3g} {u[0]} off a path at kp {kp:g} (its inertia {m:.2g} "
            f"{u[2]}), beyond half of max_tracking_error {bound:g}: a safe hold on the first "
            "motion; compensate the friction (in the drive, or friction_compensation) or "
            "check the URDF's <dynamics friction>"
            for name, f, e, kp, m, bound, u in zip(
                model.joint_names, settings.coulomb, offset, settings.kp,
                np.diag(mass_matrix), settings.max_tracking_error, units)
            if e > 0.5 * bound]


def working_pose(model):
    """The middle of each joint's range (0 for a joint without limits): a pose to judge
    the arm by before any joint state."""
    limited = model.limited
    return 0.5 * (np.where(limited, model.lower, 0.0) + np.where(limited, model.upper, 0.0))

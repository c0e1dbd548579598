"""External joint torques from measured joint torques: the generalized-momentum observer.

Convention (the one of the whole package, stated in docs/node.md and the messages):

    M(q) q̈ + C(q, q̇) q̇ + g(q) + τ_f(q̇) = τ_m + τ_ext

τ_m the measured motor torques, τ_f the friction the node models, τ_ext what the external
forces do at the joints [N·m or N]. With p = M q̇ and Ṁ = C + Cᵀ (the Christoffel form),

    ṗ = τ_m − τ_f + τ_ext − β,   β(q, q̇) = g(q) − C(q, q̇)ᵀ q̇,

and the residual r = K_O (p − ∫ (τ_m − τ_f − β + r) dt − p(0)) obeys ṙ = K_O (τ_ext − r):
each r_i follows τ_ext,i through a first-order lag of bandwidth K_O,i [1/s], without joint
accelerations (De Luca & Mattone, "Sensorless robot collision detection and hybrid
force/motion control", ICRA 2005; Haddadin, De Luca & Albu-Schäffer, "Robot collisions: a
survey on detection, isolation, and identification", IEEE T-RO 33(6), 2017, §IV).

Discrete form, one update per joint state at its measurement time t_k: the motor torque
measured at t_k is taken as the torque over (t_{k−1}, t_k] (a torque command held over the
control period, as a digital drive applies it; the trapezoidal rule would read a ramp of
the command at rate τ̇ as an external torque of Δt τ̇ / 2), the smooth β(q, q̇) − τ_f(q̇)
is integrated with the trapezoidal rule, and r implicitly (stable for any K_O Δt):

    s⁻ = s_{k−1} + Δt (τ_k − (w_k + w_{k−1}) / 2),   w = β + τ_f
    r_k = K_O (p_k − s⁻) / (1 + K_O Δt),               s_k = s⁻ + Δt r_k

s is the momentum the known torques predict. Joint i's residual uses only joint i's
measured torque: a joint whose torque is unknown (NaN) has no estimate (NaN), and starts
again from r = 0 when its torque comes back.
"""

import collections
import math

import numpy as np

NONE, CONTACT, COLLISION, UNKNOWN = 0, 1, 2, 3
"""Per-joint contact levels (robo_dynamics_interfaces/ContactState)."""

DEFAULT_THRESHOLDS = (0.03, 0.06)
"""Contact and collision thresholds when none are given: fractions of each joint's effort
limit. Above the residual of an arm whose model lacks its friction and rotor inertia and
whose torque sensors are noisy (the demo's plant); a real arm's should be set from the
residuals it shows in normal motion."""


class MomentumObserver:
    """r ≈ τ_ext (n,) from (p, β, τ_m, τ_f) at successive times; see the module docstring.

    gain: K_O (n,) [1/s], each > 0.
    """

    def __init__(self, gain):
        self.gain = [float(k) for k in gain]
        n = len(self.gain)
        self.residual = np.full(n, np.nan)    # r [N·m or N]; NaN: no estimate
        self.predicted = [0.0] * n            # s [N·m·s]
        self.smooth = [0.0] * n               # w = β + τ_f of the last update
        self.time = None                      # [s] of the last update; None: not started
        self.known = [False] * n              # per joint: has an estimate

    def reset(self):
        """Forget everything: the next update starts from r = 0."""
        self.residual = np.full(len(self.gain), np.nan)
        self.time = None
        self.known = [False] * len(self.gain)

    def update(self, t, p, beta, tau_m, tau_f=0.0):
        """One state at time t [s]: momentum p = M q̇ (n,), β = g − Cᵀ q̇ (n,), the measured
        motor torques τ_m (n,; NaN where unknown) and the modelled friction τ_f (n,, or 0).
        Returns the residual r (n,), NaN where τ_m is unknown. A first update, or one whose
        time is before the last, (re)starts from r = 0; one at the same time as the last
        changes nothing. (Plain Python per joint: for a handful of joints cheaper than
        NumPy's per-call overhead.)"""
        dt = None if self.time is None else t - self.time
        if dt == 0.0:                  # the same measurement again: nothing new
            return self.residual
        self.time = t
        restart = dt is None or not dt > 0.0
        w = (beta + tau_f).tolist()
        measured, momentum = tau_m.tolist(), p.tolist()
        known, predicted, smooth = self.known, self.predicted, self.smooth
        r = [0.0] * len(w)
        for i, k in enumerate(self.gain):
            tau = measured[i]
            if tau != tau:                                   # unknown: no estimate
                r[i] = math.nan
                known[i] = False
            elif restart or not known[i]:                    # (re)start: r = 0, s = p
                predicted[i] = momentum[i]
                known[i] = True
            else:
                s_i = predicted[i] + dt * (tau - 0.5 * (w[i] + smooth[i]))
                r[i] = k * (momentum[i] - s_i) / (1.0 + k * dt)
                predicted[i] = s_i + dt * r[i]
        self.smooth = w
        self.residual = np.array(r)
        return self.residual


def contact_levels(residual, contact, collision):
    """Per-joint level (list of n ints): COLLISION where |r| > collision, else CONTACT where
    |r| > contact, else NONE; UNKNOWN where r is NaN. residual (n,) array; thresholds: lists
    of n floats [N·m or N]. Plain Python: cheaper than NumPy for a handful of joints."""
    return [UNKNOWN if r != r else COLLISION if abs(r) > high else CONTACT if abs(r) > low
            else NONE for r, low, high in zip(residual.tolist(), contact, collision)]


def external_wrench(J, tau_ext, damping):
    """F_ext (6,) [force (N); torque (N·m)] with τ_ext ≈ Jᵀ F_ext: the wrench at the tip that
    explains the external joint torques, by the damped least squares
    F = (J Jᵀ + λ² I)⁻¹ J τ_ext (finite at singular poses; λ = damping, 0: plain least
    squares). J (6, n) in the frame the wrench is wanted in (base axes at the tip origin:
    LOCAL_WORLD_ALIGNED). The wrench the environment applies to the robot; a contact
    away from the tip gives the tip wrench with the same joint torques, where one exists."""
    if damping == 0.0:
        return np.linalg.lstsq(J.T, tau_ext, rcond=None)[0]
    return np.linalg.solve(J @ J.T + damping ** 2 * np.eye(6), J @ tau_ext)


External = collections.namedtuple("External", ["torque", "levels"])
External.__doc__ = """The momentum observer's estimate at one joint state: torque τ_ext (n,)
[N·m or N], NaN for joints without a measured effort; levels (list of n ints), per joint
NONE, CONTACT, COLLISION or UNKNOWN."""


def estimate(observer, solver, q, qd, g, friction, t, measured, stale_timeout, thresholds):
    """One update of `observer` at measurement time t [s] from the state (q, q̇), g(q), the
    friction torque and the measured torques (n,) (NaN: unknown) → External; `thresholds`
    (contact, collision) as contact_levels takes them."""
    if observer.time is not None and t - observer.time > stale_timeout:
        observer.reset()               # a gap: the momentum balance does not span it
    if all(x != x for x in measured.tolist()):   # no efforts (many drivers): nothing to do
        observer.reset()
        return External(np.full(len(measured), np.nan), [UNKNOWN] * len(measured))
    p, coriolis_t = solver.unchecked.momentum_terms(q, qd)             # M q̇, Cᵀ q̇
    r = observer.update(t, p, g - coriolis_t, measured, friction)
    return External(r, contact_levels(r, *thresholds))


def collision_sentence(external, names, collision_threshold):
    """What collided: the joints at COLLISION with their τ_ext and thresholds."""
    r = external.torque
    what = ", ".join(f"'{names[i]}' {r[i]:+.3g} (threshold {collision_threshold[i]:.3g})"
                     for i, level in enumerate(external.levels) if level == COLLISION)
    return f"collision: external torque at {what} N·m"


def as_contact(external):
    """The same estimate with its collisions counted as contacts (a push a Cartesian mode
    yields to: cartesian.CartesianTarget.yields_to)."""
    return External(external.torque, [CONTACT if level == COLLISION else level
                                      for level in external.levels])


def push_or_model_error(external, names, collision_threshold):
    """What keeps an arm moving in the safe hold, as far as the observer can tell: an
    external force (joints at COLLISION now), else a model error; `external` None: no
    observer, either."""
    if external is None:
        return "a model error, e.g. a wrong payload, or an external force (no observer)?"
    if COLLISION in external.levels:
        return ("an external force keeps pushing the arm: "
                + collision_sentence(external, names, collision_threshold))
    return ("no external force beyond the collision thresholds: a model error, e.g. a wrong "
            "payload or friction?")


class ExternalWatch:
    """The momentum observer of one arm (observer None: observer_gain 0) with its
    thresholds: each joint state's external torques, and whether a collision starts."""

    def __init__(self, settings):
        self.observer = self._observer(settings.observer_gain)
        self.thresholds = settings.observer_thresholds()
        self.colliding = False         # a joint's |τ_ext| is beyond its collision threshold

    @staticmethod
    def _observer(gain):
        return None if gain is None else MomentumObserver(gain)

    def configure(self, old, settings):
        """New thresholds; a new gain (old: the settings before) restarts the observer."""
        self.thresholds = settings.observer_thresholds()
        a, b = old.observer_gain, settings.observer_gain
        if (a is None) != (b is None) or (a is not None and not np.array_equal(a, b)):
            self.observer = self._observer(b)

    def restart(self):
        """Re-zero the estimate (a gap in the states, a stream that stops)."""
        if self.observer is not None:
            self.observer.reset()

    def update(self, solver, q, qd, g, friction, t, measured, settings, target):
        """(External, the collision's sentence where one starts now, else None) at
        measurement time t [s]; target: the admitted CartesianTarget or None (a push it
        yields to is a contact)."""
        external = estimate(self.observer, solver, q, qd, g, friction, t, measured,
                            settings.stale_timeout, self.thresholds)
        if target is not None:
            external = target.judged(solver, q, external, settings.collision_threshold)
        colliding, was = COLLISION in external.levels, self.colliding
        self.colliding = colliding
        if colliding and not was:
            return external, collision_sentence(external, solver.model.joint_names,
                                                settings.collision_threshold)
        return external, None

"""The command stream of one arm: a control law inside a safety envelope. No ROS here.

Each joint state gives at most one command (model joint order, N·m or N):

    mode      target                                              while
    gravity   g(q) (+ friction) (+ the brake: contact_safety.py)   no desired motion
    tracking  RNEA(q, q̇, a) (+ friction) (+ the motion's         an admitted joint motion
              feed-forward), a = q̈_d + K_p (q_d − q) + K_d (q̇_d − q̇)
    cartesian_impedance, operational_space: the law of a          an admitted Cartesian
              CartesianTarget (cartesian.py) (+ friction)         target
    hold      M(q)(−λ ⊙ q̇) + C q̇ + g(q): joint i's velocity      after a fault, until a new
              decays as e^(−λ_i t) (hold.hold_law)                desired motion is admitted

Next to a person (settings.contact) trajectories are slowed (speed_scaling.py); a breached
plane or speed limit stops the arm (safety_limits.py). The target is clamped to the effort
bounds, then rate-limited (rate_limit.py): every change of source is a ramp (Cartesian: a
straight one). With hardware_compensates_gravity the command sent is that minus g(q). The
envelope: admission (start, limits, velocity), watchdogs (velocity bound, tracking error →
hold; stale joint states → no command; a linkage's unclosed states → rejected, then the
hold: closure_watch.py), the observer's collisions (→ hold) and the hold's own timeout (→
stream stopped, latched); the rules and defaults: docs/node.md, "Safety envelope".

Computed torque: Lynch & Park, Modern Robotics, §11.4.1 (τ is the inverse dynamics at the
commanded acceleration: one Newton–Euler recursion, Craig, Introduction to Robotics, §6.5).
"""

import time

import numpy as np

from ..algorithms.friction import friction_torque
from ..errors import UnclosedState
from .closure_watch import ClosureWatch
from .computed_torque import commanded_acceleration
from .cycle_outputs import ERROR, INFO, WARN, Cycle, Event, Rest
from .limits import clamp_effort
from .momentum_observer import ExternalWatch, push_or_model_error
from .rate_limit import TorqueRateLimiter
from .hold import hold_law
from .safety_limits import LimitWatch, category_one_at_rest
from .trajectory import SetPoint
from .watchdog import admission_fault, tracking_fault, velocity_fault

GRAVITY, TRACKING, HOLD = "gravity", "tracking", "hold"
COLLISION_REACTIONS = ("none", "hold")
NO_EVENTS = ()


class Controller:
    """The command stream of one arm (module docstring). solver: a DynamicsSolver (its fast
    path on the merger's validated arrays); merger: a JointStateMerger; settings: Settings."""

    def __init__(self, solver, merger, settings):
        self.solver, self.merger, self.settings = solver, merger, settings
        model = solver.model
        self.names, self.lower, self.upper = model.joint_names, model.lower, model.upper
        self.mode, self.motion = GRAVITY, None   # the admitted desired motion (or None)
        self.hold_reason, self.hold_kind = "", ""   # why held; the event kind that caused it
        self.hold_since = None         # [s] the first held joint state (None: not yet)
        self.halted = ""               # why the hold failed and the stream stopped ("": no)
        self.at_effort_bound = False   # the last command was at the effort bound
        self.external = ExternalWatch(settings)   # the momentum observer, collisions
        self.observer_seconds = 0.0    # [s] the observer's part of the last step (0: none)
        self.limiter = TorqueRateLimiter(settings.max_torque_rate)
        self.running = False           # a command stream is going (False: next one ramps)
        self.inactive = ""             # why no motion is admitted now (a managed node), or ""
        # the last command's time, the receipt of the previous complete joint state
        self.last_command_time = self.last_state_time = -np.inf
        self.period = None             # [s] between the last two complete joint states
        self.counts = dict.fromkeys(("commands", "clamped", "rate_limited", "refused",
                                     "faults", "stale", "collisions"), 0)
        self.last_event, self.closure = None, ClosureWatch()   # a linkage's unclosed states
        self.limits = LimitWatch()     # the planes and the points' speed limits (breach)

    # -- configuration (called from the node's other thread, under its lock) ---------------
    def configure(self, settings):
        """New gains and bounds (the command ramps; a new observer gain restarts it)."""
        old, self.settings = self.settings, settings
        self.limiter.rate = settings.max_torque_rate
        self.external.configure(old, settings)

    def reset_observer(self):
        """Re-zero the observer; leave a hold a collision caused (for gravity compensation)."""
        if self.external.observer is None:
            return self.refuse("no external-torque observer (observer_gain is 0)")
        self.external.restart()
        self.external.colliding = False
        left = ""
        if self.mode == HOLD and self.hold_kind == "collision":
            left = f"; left the hold ({self.hold_reason}) for gravity compensation"
            self.mode, self.hold_reason, self.hold_kind = GRAVITY, "", ""
        return self._event(INFO, "observer_reset", f"external-torque observer reset{left}")

    def measured_torque(self):
        """τ_m (n,) [N·m or N] of the last joint states, NaN where unknown (JointState.effort,
        times the torque constants for currents)."""
        effort, k = self.merger.effort, self.settings.torque_constants
        return effort if k is None else effort * k

    def replace_solver(self, solver, reason):
        """Swap in a solver for a changed model (a payload): its Event; the command ramps."""
        self.solver = solver
        return self._event(INFO, "model", reason)

    def desire(self, motion, now):
        """Admit a desired motion (Trajectory or SetPoint, model order) or refuse it.

        Returns the Event: kind 'tracking' when admitted (it replaces any previous motion
        and leaves the hold), 'refused' with the reason otherwise (nothing changes)."""
        reason = self.inactive or admission_fault(motion, now, self.merger, self.settings,
                                                  self.solver, self.period)
        if reason is not None:
            return self.refuse(f"desired motion refused: {reason}")
        left = f" (leaving the hold: {self.hold_reason})" if self.mode == HOLD else ""
        if self.motion is not None:
            self.motion.ended("replaced by a new desired motion", replaced=True)
        self.motion, self.mode, self.hold_reason, self.hold_kind = motion, motion.mode, "", ""
        motion.begin(self.solver, self.merger.q, now, self.settings)
        self.limits.admit(self.solver, self.merger.q, self.settings)
        if self.halted:                # the stream starts again, as a ramp
            self.halted, self.running = "", False
        what = ("tracking a new desired motion" + motion.slowed() if motion.mode == TRACKING
                else f"{motion.mode}: a new target")
        return self._event(INFO, "tracking", f"{what}{left}")

    def desired_state(self, now):
        """(q_d, q̇_d, q̈_d) now: the tracked motion's, else the measured pose at rest; None
        before a complete joint state."""
        if self.mode == TRACKING:
            return tuple(np.array(x, dtype=float) for x in self.motion.sample(now))
        q = self.merger.q.copy() if self.merger.complete() else None
        return None if q is None else (q, np.zeros_like(q), np.zeros_like(q))

    def refuse(self, reason):
        """Count a refused desired motion (or message): its Event. Nothing else changes."""
        self.counts["refused"] += 1
        return self._event(WARN, "refused", reason)

    # -- what the node reads (under its lock) -----------------------------------------------
    def measured_state(self):
        """(q, q̇): copies of the last complete joint state (model order, SI), or None."""
        merger = self.merger
        return (merger.q.copy(), merger.qd.copy()) if merger.complete() else None

    def input_age(self, now):
        """[s] age at `now` of the oldest joint's state (inf before a complete state)."""
        return self.merger.age(now) if self.merger.complete() else np.inf

    def cartesian_target(self):
        """The admitted Cartesian target (cartesian.CartesianTarget), or None."""
        return self.motion if self.mode not in (GRAVITY, TRACKING, HOLD) else None

    @property
    def rejected(self):
        """How many joint states were rejected so far."""
        return self.merger.rejected + self.closure.rejected

    # -- a managed node's activation (control/activation.py) ---------------------------------
    def observe(self, names, positions, velocities, efforts, now, stamp=0.0):
        """A joint state merged without commanding (a node not active: the next stream ramps)."""
        rejected = self.merger.update(names, positions, velocities, now, efforts, stamp)
        self.running = False
        self.external.restart()
        return Cycle(rejected, None, None, NO_EVENTS, None)

    def hold_for(self, reason):
        """The safe hold on purpose (not a fault): a desired motion ends, with `reason`."""
        if self.motion is not None:
            self.motion.ended(reason)
        self.motion, self.mode, self.hold_reason, self.hold_kind = None, HOLD, reason, "stop"
        self.hold_since = None
        return self._event(INFO, "safe_hold", f"safe hold: {reason}")

    def stop_commanding(self, reason):
        """End the command stream on purpose: no command until states are stepped again
        (then a ramp from the measured effort). → Event."""
        self.running = False
        return self._event(INFO, "stopped", f"command stream stopped: {reason}")

    # -- the hot path -------------------------------------------------------------------------
    def step(self, names, positions, velocities, efforts, now, stamp=0.0):
        """One joint state (the JointState fields; `now` its receipt time [s], `stamp` its
        measurement time [s] if known, else 0) → Cycle. In turn: the state taken (merged,
        closed, the stream started), the envelope watched (the observer, the faults, the
        hold's timeout), the mode's law, the command sent (clamped, rate-limited)."""
        taken = self._take(names, positions, velocities, efforts, now, stamp)
        if isinstance(taken, Cycle):
            return taken
        q, qd, g, unclosed, events = taken
        s = self.settings
        friction = (friction_torque(qd, s.viscous, s.coulomb)
                    if s.friction_compensation and s.viscous is not None else 0.0)
        external = None
        if self.external.observer is not None and unclosed is None:   # its cost, measured
            started = time.perf_counter()
            external, starting = self.external.update(
                self.solver, q, qd, g, friction, stamp if stamp > 0.0 else now,
                self.measured_torque(), s, self.cartesian_target())
            if starting is not None:
                events += self._collision(starting)
            self.observer_seconds = time.perf_counter() - started
        desired, found = self._supervise(q, qd, now)
        events += found
        if self.mode == HOLD:
            halted = self._hold_timed_out(qd, now, external) or self._stopped(qd)
            if halted is not None:
                return Cycle(None, None, None, events + (halted,), external)
        target, at_bound = self._law(q, qd, g, friction, desired, now)
        return self._send(target, at_bound, q, g, g + friction, events, external, now)

    def _take(self, names, positions, velocities, efforts, now, stamp):
        """The state merged and closed: (q, q̇, g(q), why unclosed or None, events), or the
        Cycle that ends the step (rejected, incomplete, halted, stale, (re)starting)."""
        merger, s = self.merger, self.settings
        rejected = merger.update(names, positions, velocities, now, efforts, stamp)
        if rejected is not None:
            return Cycle(rejected, None, None, NO_EVENTS, None)
        if not merger.complete() or self.halted:
            return Cycle(None, None, None, NO_EVENTS, None)
        previous, self.last_state_time = self.last_state_time, now
        age = merger.age(now)
        if age > s.stale_timeout:
            return Cycle(None, None, None, self._stop(now, age), None)
        q, qd, unclosed = merger.q, merger.qd, None
        try:
            g = self.solver.unchecked.gravity(q)
            self.closure.closed(q, g)
        except UnclosedState as exc:          # a closed linkage's loops (closure_watch.py)
            held = self.closure.unclosed(now, s.stale_timeout)
            if held is None:
                return Cycle(f"{exc}", None, None, NO_EVENTS, None)
            (q, g), unclosed = held, f"{exc}, for {now - self.closure.since:.3g} s"
        if 0.0 < now - previous <= s.stale_timeout:
            self.period = now - previous
        events = NO_EVENTS
        gap = now - self.last_command_time
        if not self.running or gap > s.stale_timeout:
            if not 0.0 <= now - previous <= s.stale_timeout:
                return Cycle(None, None, None, NO_EVENTS, None)   # (re)start on the next
            events = self._resume(now, gap, previous)
        if unclosed is not None and self.mode != HOLD:
            events += (self._hold(unclosed),)
        return q, qd, g, unclosed, events

    def _supervise(self, q, qd, now):
        """The watchdogs (velocity bound; a tracked motion's error and its own judgement):
        (the tracked motion's (q_d, q̇_d, q̈_d) now or None, events)."""
        s, events = self.settings, NO_EVENTS
        if self.mode != HOLD:
            fault = velocity_fault(qd, s.velocity_bound, self.names)
            breach = fault is None and self.limits.breach(self.solver, q, qd, s)
            if fault or breach:
                events += (self._hold(fault or breach, "fault" if fault else "limit"),)
        if self.mode != TRACKING:
            return None, events
        q_d, qd_d, qdd_d = self.motion.sample(now)
        fault = tracking_fault(q, q_d, s.max_tracking_error, self.names)
        if fault is not None:
            return None, events + (self._hold(fault),)
        off_path = self.motion.judge(now, q, qd, q_d, qd_d)
        if off_path is not None:               # hold here: computed torque to this pose
            events += (self._hold_here(q, off_path),)
            q_d, qd_d, qdd_d = self.motion.sample(now)
        return (q_d, qd_d, qdd_d), events

    def _hold_timed_out(self, qd, now, external):
        """hold_failed: a joint still beyond its velocity bound hold_timeout in, else None."""
        s = self.settings
        if self.hold_since is None:
            self.hold_since = now
        elif now - self.hold_since > s.hold_timeout:
            fault = velocity_fault(qd, s.velocity_bound, self.names)
            return None if fault is None else self._halt(fault, external)
        return None

    def _law(self, q, qd, g, friction, desired, now):
        """The mode's target torque (module docstring) and whether the hold's command was
        held at an effort bound: (τ (n,), at_bound)."""
        s, solver = self.settings, self.solver
        if self.mode == TRACKING:
            a = commanded_acceleration(q, qd, *desired, s.kp, s.kd)
            target = solver.unchecked.inverse_dynamics(q, qd, a) + friction
            extra = self.motion.feed_forward(now)
            return (target if extra is None else target + extra), False
        if self.mode == HOLD:                  # friction helps stop, not compensated
            return hold_law(solver, q, qd, g, s, self.period,
                            self.limiter.reach(now, s.effort_bound))
        # a person guiding the tool, a spring's pull: damped beyond the contact's limit
        brake = self.limits.brake(solver, s.contact, self.period) + friction
        if self.mode == GRAVITY:
            return g + brake, False
        return self.motion.torque(solver, q, qd, now) + brake, False   # cartesian.py

    def _send(self, target, at_bound, q, g, gravity, events, external, now):
        """The command: `target` clamped to the effort bounds, then rate-limited; counted."""
        s = self.settings
        target, clamped = clamp_effort(target, s.effort_bound)  # raises if not finite
        self.at_effort_bound = clamped = clamped or at_bound   # (the hold's: at_bound)
        command, limited = self.limiter.limit(target, now, self.cartesian_target() is not None)
        counts = self.counts
        counts["commands"] += 1
        counts["clamped"] += clamped
        counts["rate_limited"] += limited
        self.last_command_time = now
        if s.hardware_compensates_gravity:     # every check above was on the full torque
            command = command - g
        return Cycle(None, command, gravity, events, external,
                     Rest(self.solver, q.copy(), gravity, external, s))

    def _collision(self, reason):
        """The events of a collision starting."""
        self.counts["collisions"] += 1
        if self.settings.collision_reaction == "hold" and self.mode != HOLD:
            return (self._hold(reason, "collision"),)
        reaction = ("already in the hold" if self.mode == HOLD
                    else "collision_reaction none: no reaction")
        return (self._event(WARN, "collision", f"{reason} ({reaction})"),)

    def watch(self, now):
        """Between joint states (a timer, `now` [s]): the Events of the stream stopping stale."""
        age = self.merger.age(now) if self.merger.complete() else 0.0
        if not self.running or age <= self.settings.stale_timeout:
            return NO_EVENTS
        return self._stop(now, age)

    # -- transitions ----------------------------------------------------------------------------
    def _stop(self, now, age):
        """Joint states went stale: no command; a desired motion is abandoned."""
        self.external.restart()
        if not self.running:
            return NO_EVENTS
        self.running = False
        self.counts["stale"] += 1
        stale = self.merger.stale_joints(now, self.settings.stale_timeout)
        events = (self._event(WARN, "stale", f"joint states of {stale} are {age:.3g} s old "
                                             f"(stale_timeout {self.settings.stale_timeout:g} "
                                             "s): command stream stopped"),)
        if self.motion is not None:
            events += (self._hold("joint states went stale during the desired motion"),)
        return events

    def _resume(self, now, gap, previous):
        """(Re)start the command stream, ramping from the measured effort where known and
        plausible (the drives' torque since `previous`, the state before, taken as the
        previous command: a sensor's noise is not the first command), else the last one."""
        known = self.limiter.resume(self.measured_torque(), self.settings.effort_bound,
                                    previous, now)
        first = self.counts["commands"] == 0
        source = (f"measured effort of {known} of {len(self.names)} joints"
                  if known else "the last command" if not first else "zero")
        events = ()
        if self.running and self.motion is not None:   # a gap without a stale joint state
            events = (self._hold(f"no joint state for {gap:.3g} s during the desired "
                                 "motion"),)
        self.running = True
        kind, what = ("started", "command stream started") if first else (
            "resumed", f"command stream resumed after {gap:.3g} s")
        return (self._event(INFO, kind, f"{what} in mode '{self.mode}', ramping from "
                                        f"{source}"),) + events

    def _hold(self, reason, kind="fault"):
        """Abandon the desired motion: gravity compensation + damping, latched."""
        if self.motion is not None:
            self.motion.ended(f"safe hold: {reason}")
        self.motion, self.mode, self.hold_reason, self.hold_kind = None, HOLD, reason, kind
        self.hold_since = None
        self.counts["faults"] += 1
        return self._event(ERROR, "safe_hold", f"safe hold: {reason}")

    def _hold_here(self, q, reason):
        """The motion asked to be left (e.g. a goal's path tolerance): track the measured pose
        at rest instead (the arm stops there, held by computed torque)."""
        self.motion = SetPoint(q.copy(), np.zeros_like(q))
        return self._event(WARN, "held_here", f"{reason}: holding the arm where it is")

    def _halt(self, fault, external):
        """The hold did not stop the arm: stop the command stream (latched), saying why."""
        s = self.settings
        cause = push_or_model_error(external, self.names, s.collision_threshold)
        limits = ("the joint torque limits cannot stop it: the hold's command is at the "
                  "effort bound" if self.at_effort_bound else "the hold cannot stop it")
        self.halted = f"{fault} {s.hold_timeout:g} s into the hold ({limits}; {cause})"
        self.running = False
        self.counts["faults"] += 1
        return self._event(ERROR, "hold_failed", f"safe hold failed: {self.halted}: command "
                                                 "stream stopped, the arm's own watchdog must "
                                                 "brake it; a new desired motion restarts it "
                                                 "once the arm is below the velocity bound")

    def _stopped(self, qd):
        """The stopped Event of a category-1 stop (safety_limits.py), latched, or None."""
        if self.hold_kind == "limit" and category_one_at_rest(qd, self.settings):
            self.halted, self.running = f"category-1 stop: {self.hold_reason}", False
            return self._event(WARN, "stopped", f"{self.halted}: at rest, no command (its "
                                                "brakes hold it) until a new desired motion")
        return None

    def _event(self, level, kind, message):
        self.last_event = Event(level, kind, message)
        return self.last_event

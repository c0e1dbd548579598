"""What a joint state gives: its Cycle (the command, the Events) and the Rest of its outputs,
computed only when someone asks, after the command has gone out: the gravity torques clamped
like a command, Λ at the tip, and the tip wrench that explains the external torques. No ROS
here.

Controller.step returns a Rest with each Cycle that has a command; it holds the state
(checked on the way in, so the solvers' fast path is used) and the settings of that step.
J, M⁻¹ and Λ are about half of a joint state's time: the node asks for them only while
they have a subscriber.
"""

import collections

import numpy as np

from ..algorithms.jacobian import LOCAL_WORLD_ALIGNED
from ..algorithms.operational_space import operational_space
from .limits import clamp_effort
from .momentum_observer import external_wrench


INFO, WARN, ERROR = "info", "warn", "error"

Event = collections.namedtuple("Event", ["level", "kind", "message"])
Event.__doc__ = """Something the operator should know: level (info|warn|error), kind (started,
resumed, stale, tracking, refused, safe_hold, held_here, hold_failed, model, collision,
observer_reset; the node's clock_stopped, clock_resumed), a sentence naming joints and values."""

Cycle = collections.namedtuple("Cycle", ["rejected", "command", "gravity", "events",
                                         "external", "rest"], defaults=(None,))
Cycle.__doc__ = """What one joint state gave: rejected (the reason, or None), command (n,)
to send (None: send nothing), gravity (n,) g(q) (+ friction) for information (None when no
command), events (tuple of Event), external (External, or None: no observer update), rest
(cycle_outputs.Rest: the other outputs, computed when asked; None when no command)."""


class Rest:
    """The rest of one joint state's outputs. solver: the step's; q (n,) the state [rad or
    m]; gravity (n,) g(q) (+ friction) [N·m or N]; external: the observer's External or
    None; settings: the step's Settings (effort bounds, contact and collision thresholds)."""

    __slots__ = ("solver", "q", "gravity", "external", "settings")

    def __init__(self, solver, q, gravity, external, settings):
        self.solver, self.q, self.gravity = solver, q, gravity
        self.external, self.settings = external, settings

    def clamped_gravity(self):
        """g(q) (+ friction) clamped to the effort bounds (n,), as a command is."""
        return clamp_effort(self.gravity, self.settings.effort_bound)[0]

    def tip(self, want_lambda, want_wrench, wrench_damping):
        """(operational_space result or None, wrench (6,) or None): Λ when `want_lambda`;
        the external wrench [force (N); torque (N·m)] at tip_link's origin, base axes, when
        `want_wrench` and every joint has an external-torque estimate
        (momentum_observer.external_wrench with `wrench_damping`)."""
        external = self.external
        want_wrench = (want_wrench and external is not None
                       and not np.isnan(external.torque).any())
        if not (want_lambda or want_wrench):
            return None, None
        fast, q = self.solver.unchecked, self.q
        J = fast.jacobian(q, LOCAL_WORLD_ALIGNED)
        result = (operational_space(J, M_inv=fast.mass_matrix_inverse(q))
                  if want_lambda else None)
        wrench = external_wrench(J, external.torque, wrench_damping) if want_wrench else None
        return result, wrench

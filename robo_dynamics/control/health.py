"""The node's health as /diagnostics reports it: the input rate, timing percentiles, and the
status level with its one-line message; and a simulated clock that stops. No ROS here:
ros/dynamics_node/diagnostics.py turns these into a DiagnosticStatus.
"""

import collections
import math

import numpy as np

from . import controller as core

OK, WARN, ERROR = "ok", "warn", "error"


class NodeHealth:
    """What a node counts and times for its diagnostics."""

    def __init__(self, window=2000):
        self.received = 0            # accepted joint-state messages
        self.rejected_reason = ""    # of the last rejected one
        self.errors = 0              # computations that raised (counted, never fatal)
        self.input_rate = InputRate()
        # the last `window` joint-state callbacks: their times [s], the observer's part,
        # and from their start to the command's publication
        self.callback_seconds = collections.deque(maxlen=window)
        self.observer_seconds = collections.deque(maxlen=window)
        self.command_seconds = collections.deque(maxlen=window)
        # Λ⁻¹'s condition number at the latest state and whether Λ is bounded there, and
        # when they were computed [s, node clock]
        self.condition, self.near_singular, self.condition_at = math.nan, False, -math.inf

    def singularity(self, result, now):
        """Keep the condition number and near_singular of an operational_space result."""
        self.condition, self.near_singular = result.condition_number, result.near_singular
        self.condition_at = now


class InputRate:
    """Receipt times [s] of accepted messages; how many arrived within the last second."""

    def __init__(self, capacity=20_000):
        self._times = collections.deque(maxlen=capacity)

    def received(self, now):
        self._times.append(now)

    def per_second(self, now):
        times = self._times
        if times and now < times[-1]:          # the clock went back: a new timeline
            times.clear()
        while times and now - times[0] > 1.0:
            times.popleft()
        return len(times)


def percentiles(what, seconds):
    """{what_p50_us, what_p99_us, what_max_us, what_samples} (text) of durations [s]; {}
    when there are none."""
    if not len(seconds):
        return {}
    times = np.sort(np.asarray(seconds, dtype=float)) * 1e6
    rank = times[np.minimum(len(times) - 1, (np.array([0.5, 0.99]) * len(times)).astype(int))]
    return {f"{what}_p50_us": f"{rank[0]:.1f}", f"{what}_p99_us": f"{rank[1]:.1f}",
            f"{what}_max_us": f"{times[-1]:.1f}", f"{what}_samples": str(len(times))}


def status(controller, now, disagreement, tolerance, near_singular, model_warnings):
    """(level, message) of a configured node, the most serious first: the backends disagree
    (`disagreement`, the cross-check's largest relative difference, beyond `tolerance`), the
    hold failed, a safe hold, joint states missing or stale, near a singularity, else OK."""
    merger, timeout = controller.merger, controller.settings.stale_timeout
    stale = merger.stale_joints(now, timeout)
    if disagreement > tolerance:
        return ERROR, (f"backends disagree: relative difference {disagreement:.3g} > "
                       f"{tolerance:g}")
    if controller.halted:
        return ERROR, f"commands stopped: safe hold failed: {controller.halted}"
    if controller.mode == core.HOLD:
        return ERROR, f"safe hold: {controller.hold_reason}"
    if not merger.complete():
        return WARN, f"waiting for joint states of {stale}"
    if stale:
        return WARN, f"stale joint states (> {timeout} s) for {stale}: commands stopped"
    if near_singular:
        return WARN, "near a singularity"
    message = f"publishing ({controller.mode})"
    if model_warnings:
        message += (f"; {model_warnings} warning(s) about the robot description "
                    "(model_warning_*)")
    return OK, message


def observer_line(controller, joint_names):
    """One line on the external-torque observer: off, or on and which joints have no
    estimate (no effort in their joint states)."""
    if controller.external.observer is None:
        return "off (observer_gain 0)"
    missing = [name for name, tau in zip(joint_names, controller.measured_torque())
               if math.isnan(tau)]
    if missing:
        return f"on; no estimate for {missing}: no effort in their joint states"
    return f"on; collision_reaction {controller.settings.collision_reaction}"


class ClockWatch:
    """A simulated clock (/clock) that stops: the node's time not advancing for `patience`
    seconds of wall time (a simulation paused, stopped or gone), and its coming back."""

    def __init__(self, patience=2.0):
        self.patience = patience
        self.last = self.since = None      # the clock's last value [s], and when it changed
        self.stopped = False

    def update(self, now, wall, waiting_for=None):
        """`now`: the node's clock [s]; `wall`: a monotonic clock [s]; `waiting_for`: the
        time [s] of a model change the node itself holds the loop for, or None → Event or
        None."""
        if self.last is None or now != self.last:
            event = (core.Event(core.INFO, "clock_resumed",
                                f"the simulated clock runs again, from t = {self.last:.3f} s "
                                f"(it stood for {wall - self.since:.1f} s of wall time)")
                     if self.stopped else None)
            self.last, self.since, self.stopped = now, wall, False
            return event
        if not self.stopped and wall - self.since >= self.patience:
            self.stopped = True
            if now == 0.0:             # no /clock yet: a simulation not started, not a fault
                return core.Event(core.INFO, "clock_stopped",
                                  f"waiting for the simulated clock: no /clock for "
                                  f"{self.patience:g} s of wall time (use_sim_time is true)")
            if waiting_for is not None:    # this node holds the loop: its own doing
                return core.Event(core.INFO, "clock_stopped",
                                  f"the simulated clock stands at t = {now:.3f} s while the "
                                  f"model change due at t = {waiting_for:.3f} s is prepared "
                                  "(the loop waits, so that it lands on the same state on "
                                  "every machine)")
            return core.Event(core.WARN, "clock_stopped",
                              f"the simulated clock (/clock) has stood at t = {now:.3f} s for "
                              f"{self.patience:g} s of wall time: no joint state, no command, "
                              "and nothing on that clock can go stale")
        return None

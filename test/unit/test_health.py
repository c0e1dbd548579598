"""control/health.py without ROS: the input rate, the timing percentiles and the order in
which /diagnostics names what is wrong."""

import types

import numpy as np

from robo_dynamics.control import controller as core
from robo_dynamics.control import health


def test_input_rate_counts_the_last_second_and_restarts_when_the_clock_goes_back():
    rate = health.InputRate()
    for k in range(2000):                 # 1 kHz for 2 s
        rate.received(k * 1e-3)
    assert rate.per_second(1.9995) == 1000
    assert rate.per_second(5.0) == 0
    for k in range(10):
        rate.received(100.0 + k * 0.01)
    assert rate.per_second(0.5) == 0      # simulated time restarted: a new timeline
    rate.received(0.6)
    assert rate.per_second(0.6) == 1


def test_percentiles_of_known_durations():
    seconds = np.random.default_rng(3).permutation(np.arange(1, 101)) * 1e-6   # 1..100 µs
    values = health.percentiles("callback", seconds)
    assert values == {"callback_p50_us": "51.0", "callback_p99_us": "100.0",
                      "callback_max_us": "100.0", "callback_samples": "100"}
    assert health.percentiles("command", []) == {}


class _Merger:
    def __init__(self, complete=True, stale=()):
        self._complete, self._stale = complete, list(stale)

    def stale_joints(self, now, timeout):
        return self._stale

    def complete(self):
        return self._complete


def _controller(mode=core.GRAVITY, halted="", merger=None):
    return types.SimpleNamespace(mode=mode, halted=halted, hold_reason="velocity fault",
                                 merger=merger or _Merger(),
                                 settings=types.SimpleNamespace(stale_timeout=0.1))


def test_the_most_serious_condition_is_named_first():
    everything = dict(disagreement=1e-3, tolerance=1e-6, near_singular=True,
                      model_warnings=2)
    cases = [   # (controller, arguments) → level, start of the message
        (_controller(core.HOLD, "still moving", _Merger(False, ["a"])), everything,
         health.ERROR, "backends disagree"),
        (_controller(core.HOLD, "still moving"), {**everything, "disagreement": 0.0},
         health.ERROR, "commands stopped: safe hold failed"),
        (_controller(core.HOLD), {**everything, "disagreement": 0.0},
         health.ERROR, "safe hold: velocity fault"),
        (_controller(merger=_Merger(False, ["a"])), {**everything, "disagreement": 0.0},
         health.WARN, "waiting for joint states of ['a']"),
        (_controller(merger=_Merger(True, ["a"])), {**everything, "disagreement": 0.0},
         health.WARN, "stale joint states (> 0.1 s) for ['a']"),
        (_controller(), {**everything, "disagreement": 0.0}, health.WARN,
         "near a singularity"),
        (_controller(core.TRACKING), {**everything, "disagreement": 0.0,
                                      "near_singular": False},
         health.OK, "publishing (tracking); 2 warning(s)"),
    ]
    for controller, arguments, level, message in cases:
        got = health.status(controller, 0.0, **arguments)
        assert got[0] == level and got[1].startswith(message), (got, message)


def test_a_simulated_clock_that_stands_still_is_reported_once_and_its_return_too():
    watch = health.ClockWatch(patience=2.0)
    assert watch.update(5.0, 100.0) is None                # first look
    assert watch.update(5.0, 101.9) is None                # standing, not for 2 s yet
    event = watch.update(5.0, 102.0)
    assert (event.level, event.kind) == (core.WARN, "clock_stopped")
    assert "t = 5.000 s for 2 s of wall time" in event.message
    assert watch.update(5.0, 150.0) is None                # said once
    event = watch.update(5.002, 160.0)
    assert (event.level, event.kind) == (core.INFO, "clock_resumed")
    assert "from t = 5.000 s (it stood for 60.0 s" in event.message
    for k in range(1, 100):                                 # running: nothing to say
        assert watch.update(5.002 + k * 0.002, 160.0 + k * 3.0) is None


def test_a_clock_that_has_not_started_is_waited_for_not_warned_about():
    """use_sim_time before any /clock: the node's time is 0; after the patience an INFO
    that it waits, not a WARN that the clock stopped; then the clock's start is reported."""
    watch = health.ClockWatch(patience=2.0)
    assert watch.update(0.0, 10.0) is None
    event = watch.update(0.0, 12.0)
    assert (event.level, event.kind) == (core.INFO, "clock_stopped")
    assert "waiting for the simulated clock: no /clock for 2 s" in event.message
    assert watch.update(0.002, 13.0).kind == "clock_resumed"


def test_a_clock_the_node_itself_holds_for_a_model_change_is_not_warned_about():
    """The joint-state thread waits (simulated time) for a model change due at t = 30.3 s:
    the clock stands by the node's own doing, an INFO saying so; once the change is in and
    the loop runs again, the return is reported as for any stop."""
    watch = health.ClockWatch(patience=2.0)
    assert watch.update(30.3, 50.0, waiting_for=30.3) is None
    event = watch.update(30.3, 52.0, waiting_for=30.3)
    assert (event.level, event.kind) == (core.INFO, "clock_stopped")
    assert "stands at t = 30.300 s while the model change due at t = 30.300 s" in event.message
    assert watch.update(30.302, 60.0).kind == "clock_resumed"
    assert watch.update(30.302, 70.0).level == core.WARN     # stood again, no change awaited

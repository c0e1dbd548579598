"""The demo's verdicts as pure functions, without ROS: what a phase's recording must show
for the verdict to say 'as expected', against figures computed here by hand."""

import types

import numpy as np

from robo_dynamics.ros.demo.scenario import OBSERVER_GAIN, PHASES, Q0, desired
from robo_dynamics.ros.demo.verdicts import contact_verdict, summarise, verdict

PHASE = {phase.name: phase for phase in PHASES}
TRACK = PHASE["computed torque, friction compensated"]
GRAVITY = PHASE["gravity compensation"]
PUSH = PHASE["computed torque, pushed on the forearm"]
UNKNOWN = PHASE["gravity compensation, 1 kg unknown payload"]


def test_tracking_errors_are_measured_against_the_desired_motion():
    t = np.arange(0.0, 2.0, 0.002)
    offset = np.array([0.01, -0.02, 0.0, 0.0, 0.0, 0.03])
    q = desired(t)[0] + offset
    summary = summarise(TRACK, t, q, np.ones_like(q), np.full(6, 10.0))
    np.testing.assert_allclose(summary["max"], np.abs(offset), atol=1e-12)
    np.testing.assert_allclose(summary["rms"], np.abs(offset), atol=1e-12)
    ok, sentence = verdict(TRACK, summary, [])
    assert ok and sentence.startswith("max tracking error 3.00e-02 rad < 0.05 rad")
    worse = summarise(TRACK, t, desired(t)[0] + 2 * offset, q, np.full(6, 10.0))
    assert not verdict(TRACK, worse, [])[0]


def test_gravity_compensation_is_judged_by_its_drift_and_a_hold_fails_it():
    t = np.arange(0.0, 2.0, 0.002)
    q = np.broadcast_to(Q0, (len(t), 6)).copy()
    q[-1, 2] += 5e-4
    summary = summarise(GRAVITY, t, q, np.zeros_like(q), np.full(6, 10.0))
    assert abs(summary["final"].max() - 5e-4) < 1e-12
    assert verdict(GRAVITY, summary, [])[0]
    hold = (0.3, types.SimpleNamespace(kind="safe_hold"))
    ok, sentence = verdict(GRAVITY, summary, [hold])
    assert not ok and "safe hold at t = +0.30 s" in sentence
    assert verdict(UNKNOWN, summary, [hold])[0] and not verdict(UNKNOWN, summary, [])[0]


def _observed(t, levels, push_at=None, truth_from=None):
    estimate = np.zeros((len(t), 6))
    truth_t = t.copy()
    truth = np.zeros((len(t), 6))
    if truth_from is not None:
        truth[truth_t >= truth_from, 2] = 5.0
    return {"t": t, "levels": levels, "estimate": estimate, "contact_threshold": np.ones(6),
            "truth_t": truth_t, "truth": truth, "push_at": push_at}


def test_a_push_is_seen_within_three_observer_time_constants_and_one_period():
    period = 0.002
    t = np.arange(0.0, 2.0, period)
    bound = 3.0 / OBSERVER_GAIN + period
    for delay, expected in ((bound - period, True), (bound + 2 * period, False)):
        levels = np.zeros((len(t), 6), dtype=int)
        levels[t >= 1.0 + delay - 1e-9, 2] = 2
        ok, sentence, figures = contact_verdict(PUSH, _observed(t, levels, 1.0, 1.0), period)
        assert ok is expected, sentence
        assert abs(figures["delay"] - delay) < 1e-6
    levels = np.zeros((len(t), 6), dtype=int)
    levels[10, 0] = 1                                   # a contact before any push
    ok, sentence, _ = contact_verdict(TRACK, _observed(t, levels), period)
    assert not ok and "without a push" in sentence

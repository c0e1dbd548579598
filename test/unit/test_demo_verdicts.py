"""The demo's verdicts as pure functions, without ROS: what a phase's recording must show
for the verdict to say 'as expected', against figures computed here by hand."""

import itertools
import types

import numpy as np

from robo_dynamics.demo.scenario import OBSERVER_GAIN, PHASES, Q0, desired
from robo_dynamics.demo.verdicts import (compliance_verdict, contact_verdict, friction_band,
                                         summarise, verdict)

PHASE = {phase.name: phase for phase in PHASES}
TRACK = PHASE["computed torque, friction compensated"]
GRAVITY = PHASE["gravity compensation"]
PUSH = PHASE["computed torque, pushed on the forearm"]
UNKNOWN = PHASE["gravity compensation, 1 kg unknown payload"]
CARTESIAN = PHASE["Cartesian impedance, pushed at the tip"]


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


def test_a_push_at_the_held_tip_must_be_a_contact_and_never_a_collision():
    """The Cartesian phase's push is one the mode yields to: a contact after it starts
    passes; a collision at any time, or no contact at all, fails."""
    period = 0.002
    t = np.arange(0.0, 2.0, period)
    contact = np.zeros((len(t), 6), dtype=int)
    contact[t >= 1.05, 4] = 1
    ok, sentence, _ = contact_verdict(CARTESIAN, _observed(t, contact, 1.0, 1.0), period)
    assert ok and "a contact from 50 ms after it, never a collision" in sentence, sentence
    collision = contact.copy()
    collision[t >= 1.1, 4] = 2
    ok, sentence, _ = contact_verdict(CARTESIAN, _observed(t, collision, 1.0, 1.0), period)
    assert not ok and "seen as a collision" in sentence
    none = np.zeros((len(t), 6), dtype=int)
    ok, sentence, _ = contact_verdict(CARTESIAN, _observed(t, none, 1.0, 1.0), period)
    assert not ok and "not seen" in sentence


def test_the_friction_band_is_the_farthest_rest_that_dry_friction_allows():
    """At rest Jᵀ(K e + F) = τ_f, |τ_f,j| ≤ c_j: the farthest e_i from −K⁻¹F is at a corner
    of the box of τ_f (a linear function's maximum over a box): all 64 corners tried."""
    rng = np.random.default_rng(3)
    J = rng.normal(size=(6, 6))
    K = np.diag([500.0, 400.0, 600.0, 2.0, 3.0, 4.0])
    c = np.array([1.5, 1.5, 0.5, 0.015, 0.004, 0.0002])
    corners = np.array(list(itertools.product((-1.0, 1.0), repeat=6))) * c
    e = np.array([np.linalg.solve(K, np.linalg.solve(J.T, tau)) for tau in corners])
    np.testing.assert_allclose(friction_band(J, K, c), np.abs(e[:, :3]).max(axis=0),
                               rtol=1e-12)
    # without coupling (J = I): each axis c_i / k_i
    np.testing.assert_allclose(friction_band(np.eye(6), K, c), c[:3] / np.diag(K)[:3])


def _tip(pushed, back):
    """A recording of the Cartesian phase: the tip (target at the origin) at rest, moved to
    `pushed` [m] from 0.7 s to 1.8 s (the full push), at `back` from 2.0 s on."""
    t = np.arange(0.0, 4.0, 0.002)
    tip = np.zeros((len(t), 3))
    tip[(t >= 0.7) & (t < 1.8)] = pushed
    tip[t >= 2.0] = back
    return {"t_tip": t, "tip": tip, "target": np.zeros(3), "jacobian": np.eye(6),
            "push_at": 0.5}


def test_the_tip_must_give_way_by_the_compliance_and_come_back():
    """J = I: the band is c_i / k_i = (3, 3, 1) mm, and 5 % of |K⁻¹F| = 3 mm: each axis may
    be (6, 6, 4) mm off (K⁻¹F = (0, 60, 0) mm for 30 N along y at 500 N/m)."""
    expected = np.array([0.0, 0.06, 0.0])
    ok, sentence, figures = compliance_verdict(_tip(expected + [0.0055, -0.0055, 0.0035],
                                                    [0.0, 0.0055, -0.0035]), [])
    assert ok, sentence
    np.testing.assert_allclose(figures["allowed"], [0.006, 0.006, 0.004], rtol=1e-12)
    assert "K⁻¹F = (+0.0, +60.0, +0.0) mm" in sentence
    for pushed, back in ((expected + [0.0, -0.0065, 0.0], np.zeros(3)),     # too stiff
                         (expected + [0.0, 0.0, 0.0045], np.zeros(3)),      # sideways
                         (expected, [0.0065, 0.0, 0.0])):                   # not back
        ok, sentence, _ = compliance_verdict(_tip(pushed, back), [])
        assert not ok and sentence.endswith("NOT as expected"), (pushed, back)
    hold = (1.0, types.SimpleNamespace(kind="safe_hold"))
    ok, sentence, _ = compliance_verdict(_tip(expected, np.zeros(3)), [hold])
    assert not ok and "safe hold at t = +1.00 s" in sentence


def test_the_linkage_phase_asks_ten_times_less_of_the_modelled_loop_within_the_bounds():
    """Phase 12.: the cut tree's drift and tracking error must each be 10 × the modelled
    loop's or more, the loop's within the serial arm's DRIFT_BOUND (1 mrad) and
    TRACKING_BOUND (50 mrad); any one missed fails it."""
    from robo_dynamics.demo.linkage import linkage_verdict

    def observed(loop_drift, loop_error, cut_drift, cut_error):      # [rad], two motors
        return {"loop": {"drift": np.array([0.0, loop_drift]),
                         "error": np.array([loop_error, 0.0])},
                "cut": {"drift": np.array([-cut_drift, 0.0]),
                        "error": np.array([0.0, cut_error])}}
    assert linkage_verdict(observed(1e-4, 2e-3, 1.01e-3, 2.02e-2))[0]        # 10.1 × each
    assert not linkage_verdict(observed(1e-4, 2e-3, 0.99e-3, 2.02e-2))[0]    # drift 9.9 ×
    assert not linkage_verdict(observed(1e-4, 2e-3, 1.01e-3, 1.98e-2))[0]    # error 9.9 ×
    assert not linkage_verdict(observed(1.1e-3, 2e-3, 1.0, 1.0))[0]          # drift > 1 mrad
    assert not linkage_verdict(observed(1e-4, 0.051, 1.0, 1.0))[0]           # error > 50 mrad
    ok, sentence = linkage_verdict(observed(1e-4, 2e-3, 1.01e-3, 2.02e-2))
    assert "drift 0.100 mrad, tracking error 2.000 mrad; cut tree: 1 and 20 mrad" in sentence

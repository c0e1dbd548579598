"""The demo's verdicts: what each phase must show, as pure functions of what was recorded
(no ROS). Each returns (as expected?, sentence[, figures])."""

import numpy as np

from .scenario import (COMPLIANCE_BOUND, DRIFT_RATIO, DRIFT_SECONDS, IDENTIFIED_ERROR_RATIO,
                       IDENTIFIED_MASS_BOUND, JOINT_FRICTION, LIGHT_JOINTS,
                       OBSERVER_GAIN, Q0, TIP_FORCE,
                       TIP_PUSH_SECONDS, TIP_RAMP_SECONDS, TIP_STIFFNESS, desired)

SETTLED = 0.3      # s: the tip's rest position is its mean over the last SETTLED s of a part


def summarise(phase, t, q, tau, effort_limit):
    reference = desired(t)[0] if phase.track else np.broadcast_to(Q0, q.shape)
    error = reference - q
    return {"rms": np.sqrt(np.mean(error ** 2, axis=0)), "max": np.max(np.abs(error), axis=0),
            "final": np.abs(error[-1]), "peak": np.max(np.abs(tau), axis=0),
            "limit": effort_limit, "samples": len(t), "span": t[-1] - t[0] if len(t) else 0.0,
            "speed": (np.max(np.abs(np.diff(q, axis=0)) / np.diff(t)[:, None], axis=0)
                      if len(t) > 1 else np.zeros(q.shape[1])),
            "sink": (np.abs(q[-1] - q[t >= t[-1] - 1.0][0]) if len(t) > 1 and t[-1] > 1.0
                     else np.zeros(q.shape[1]))}


def identification_verdict(phase, observed):
    """(as expected?, sentence) on the payload the node found (phases with guess_kg)."""
    result = observed["identified"]
    if not result.success:
        return False, f"NOT as expected: identification failed: {result.message}"
    error = abs(result.payload.m - phase.payload_kg) / phase.payload_kg
    ok = error <= IDENTIFIED_MASS_BOUND and result.applied
    com = result.payload.com
    return ok, (f"identified {result.payload.m:.4f} kg (truth {phase.payload_kg:g} kg, told "
                f"{phase.guess_kg:g} kg; error {100 * error:.1f} % "
                f"{'≤' if ok else '>'} {100 * IDENTIFIED_MASS_BOUND:g} %), centre of mass "
                f"({com.x:+.4f}, {com.y:+.4f}, {com.z:+.4f}) m in tool0 (truth 0), from "
                f"{result.samples} states; applied{', as expected' if ok else ''}")


def verdict(phase, summary, events):
    """(as expected?, sentence) for one phase."""
    holds = [at for at, event in events if event.kind == "safe_hold"]
    if phase.push:
        if holds:
            return True, f"safe hold at t = {holds[0]:+.2f} s, as expected"
        return False, "NOT as expected: the push did not lead to the safe hold"
    if phase.expect == "hold":
        if holds:
            return True, (f"safe hold at t = {holds[0]:+.2f} s; the arm then moves at "
                          f"≤ {summary['speed'].max():.3g} rad/s, and in the last second at "
                          f"{summary['sink'].max():.3g} rad/s (damping against the "
                          "unmodelled weight), as expected")
        return False, "NOT as expected: the watchdogs never abandoned the motion"
    if holds:
        return False, f"NOT as expected: safe hold at t = {holds[0]:+.2f} s"
    error, bound, what = ((summary["final"].max(), phase.bound, "drift") if not phase.track
                          else (summary["max"].max(), phase.bound, "max tracking error"))
    ok = error < bound
    return ok, (f"{what} {error:.2e} rad {'<' if ok else '>='} {bound:g} rad, "
                f"{'as expected' if ok else 'NOT as expected'}")


def contact_verdict(phase, observed, period):
    """(as expected?, sentence, figures) on the external-torque estimate of one phase: no
    contact without a push (the unknown payload is a real external load: not judged);
    with a push, the collision within 3/K_O + one period of the push, none before it; in a
    Cartesian
    phase the push at the tip is a contact and never a collision (the mode yields to it)."""
    t, levels, estimate = observed["t"], observed["levels"], observed["estimate"]
    if len(t) == 0:
        return False, "NOT as expected: no contact state received", {}
    threshold = observed["contact_threshold"]
    push = observed["push_at"]
    before = t < push if push is not None else np.ones(len(t), dtype=bool)
    figures = {"ratio": float(np.max(np.abs(estimate[before]) / threshold))}
    if phase.expect == "hold" and not phase.push:
        return True, (f"largest |τ̂|/contact threshold {figures['ratio']:.2f} (the unknown "
                      "payload is an external load)"), figures
    false = np.flatnonzero((levels[before] > 0).any(axis=1))
    if false.size:
        return False, (f"NOT as expected: contact reported at t = {t[before][false[0]]:+.3f}"
                       f" s without a push"), figures
    sentence = f"no contact (largest |τ̂|/contact threshold {figures['ratio']:.2f})"
    if push is None:
        return True, sentence, figures
    truth_t, truth = observed["truth_t"], observed["truth"]
    pushed = truth_t[np.flatnonzero(np.abs(truth).max(axis=1) > 0.0)] if len(truth) else []
    collided = t[np.flatnonzero((levels == 2).any(axis=1))]
    if phase.cartesian:        # a push the mode yields to: a contact, never a collision
        touched = t[np.flatnonzero((levels == 1).any(axis=1))]
        ok = len(pushed) > 0 and len(touched) > 0 and not len(collided)
        sentence += (" before the push; the push " + (
            f"a contact from {1e3 * (touched[0] - pushed[0]):.0f} ms after it, never a "
            "collision (a tip wrench the spring balances)" if ok else
            "seen as a collision" if len(collided) else "not seen"))
        return ok, sentence + (", as expected" if ok else ", NOT as expected"), figures
    if not len(pushed) or not len(collided):
        return False, "NOT as expected: the push was not seen as a collision", figures
    start = pushed[0]          # sim_arm's receipt: the push acts from that state on
    bound = 3.0 / OBSERVER_GAIN + period
    figures["delay"] = float(collided[0] - start)
    ok = figures["delay"] <= bound
    sentence += (f" before the push; collision {1e3 * figures['delay']:.0f} ms after it "
                 f"{'≤' if ok else '>'} 3/K_O + one period = {1e3 * bound:.0f} ms")
    return ok, sentence + (", as expected" if ok else ", NOT as expected"), figures


SUCCEEDED = 4      # action_msgs/GoalStatus: the goal's end states
STATUS = {4: "SUCCEEDED", 5: "CANCELED", 6: "ABORTED"}


def action_verdict(outcome):
    """(as expected?, sentence) on a FollowJointTrajectory goal's end: `outcome` its
    GetResult response (status, result with error_code, error_string), or None."""
    if outcome is None:
        return False, "NOT as expected: no result"
    result = outcome.result
    ok = outcome.status == SUCCEEDED and result.error_code == 0
    return ok, (f"{STATUS.get(outcome.status, outcome.status)}, error_code "
                f"{result.error_code}: {result.error_string}"
                + ("" if ok else ", NOT as expected"))


def friction_band(J, K, coulomb):
    """(3,) [m]: how far, per base axis, the tip may rest from where the stiffness alone puts
    it, when each joint's dry friction holds up to its Coulomb torque c_j. At rest
    Jᵀ(K e + F) = τ_f with |τ_f,j| ≤ c_j, so e differs from −K⁻¹F by K⁻¹ J⁻ᵀ τ_f: per axis
    at most Σ_j |(K⁻¹ J⁻ᵀ)_ij| c_j. J (6, 6) the tip's Jacobian ([linear; angular], base
    axes), K (6, 6), coulomb (6,) [N·m]."""
    return (np.abs(np.linalg.solve(K, np.linalg.inv(J.T))) @ np.asarray(coulomb))[:3]


def compliance_verdict(observed, events):
    """(as expected?, sentence, figures) of the Cartesian phase: pushed with TIP_FORCE from
    observed['push_at'] [s] for TIP_PUSH_SECONDS (ramps included), the tip (observed['tip']
    (N, 3) [m] at observed['t_tip'] [s]) rests at K⁻¹F from its target (observed['target'] (3,)), and after
    the push back at the target, each within COMPLIANCE_BOUND × |K⁻¹F| plus the band the
    plant's dry friction can hold (friction_band at observed['jacobian']); no safe hold."""
    holds = [at for at, event in events if event.kind == "safe_hold"]
    if holds:
        return False, f"NOT as expected: safe hold at t = {holds[0]:+.2f} s", {}
    t, tip, target = observed["t_tip"], observed["tip"], observed["target"]
    K = np.diag(TIP_STIFFNESS)
    expected = np.linalg.solve(K[:3, :3], TIP_FORCE)             # K⁻¹F [m]
    band = friction_band(observed["jacobian"], K, JOINT_FRICTION)
    allowed = COMPLIANCE_BOUND * np.linalg.norm(expected) + band
    end = observed["push_at"] + TIP_PUSH_SECONDS - TIP_RAMP_SECONDS    # the full push's end
    pushed = tip[(t >= end - SETTLED) & (t < end)].mean(axis=0) - target
    back = tip[t >= t[-1] - SETTLED].mean(axis=0) - target
    ok = bool(np.all(np.abs(pushed - expected) <= allowed) and np.all(np.abs(back) <= allowed))
    mm = lambda v: "(" + ", ".join(f"{1e3 * x:+.1f}" for x in v) + ") mm"
    figures = {"expected": expected, "pushed": pushed, "back": back, "allowed": allowed}
    return ok, (f"pushed with {np.linalg.norm(TIP_FORCE):g} N, the tip gave way by "
                f"{mm(pushed)} against K⁻¹F = {mm(expected)}; let go, it rests at {mm(back)} "
                f"from its target; each axis within {100 * COMPLIANCE_BOUND:g} % of |K⁻¹F| + "
                f"the plant's dry-friction band {mm(band)}"
                + (", as expected" if ok else ", NOT as expected")), figures


def whole_arm_verdict(observed):
    """(as expected?, sentence) of the whole-arm phase: ~/identify_arm succeeded and applied
    its model, whose held-out error is at most IDENTIFIED_ERROR_RATIO of the URDF's, and
    under gravity compensation with the URDF it wrote no joint but the light wrist's last
    LIGHT_JOINTS drifts more than 1/DRIFT_RATIO of the original's largest drift (those
    and the tool reported)."""
    result = observed["result"]
    if not result.success:
        return False, f"NOT as expected: identification failed: {result.message}"
    urdf, identified = observed["drift"]["URDF"], observed["drift"]["identified"]
    arm = {name: np.abs(d["joints"][:-LIGHT_JOINTS]).max()
           for name, d in (("URDF", urdf), ("identified", identified))}
    ok = (result.applied
          and result.identified_error_all <= IDENTIFIED_ERROR_RATIO * result.urdf_error_all
          and arm["identified"] * DRIFT_RATIO <= arm["URDF"])
    light = lambda d: "(" + ", ".join(f"{x:+.2f}" for x in d["joints"][-LIGHT_JOINTS:]) + ")"
    return ok, (f"{result.identified} of {result.base_parameters} base parameters identified "
                f"from {result.samples} states; held-out torques off by "
                f"{100 * result.identified_error_all:.1f} % (the URDF's: "
                f"{100 * result.urdf_error_all:.1f} %; the sensors' noise included), applied. "
                f"In {DRIFT_SECONDS:g} s of gravity compensation the joints drift at most "
                f"{arm['identified']:.4f} rad with the identified URDF against "
                f"{arm['URDF']:.3f} rad with the original; the light wrist's last "
                f"{LIGHT_JOINTS} turn {light(identified)} against {light(urdf)} rad (their "
                "gravity is below what the noise lets the fit resolve) and the tool moves "
                f"{1e3 * identified['tool']:.1f} against {1e3 * urdf['tool']:.1f} mm"
                + (", as expected" if ok else ", NOT as expected"))

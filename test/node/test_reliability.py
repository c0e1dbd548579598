"""Singular poses, stale and bursty input on the running node."""

import numpy as np
import pytest

import robo_dynamics as rd
import ros_harness
from robo_dynamics.algorithms.operational_space import KAPPA_MAX
from conftest import SHIPPED, rel

UR5E = SHIPPED / "rd_ur5e.urdf"
ROBOT = rd.load_robot(UR5E)
NAMES = list(ROBOT.joint_names)
REF = rd.make_solver(ROBOT, "pinocchio")
# exact singular poses: wrist (q5 = 0), elbow stretched (q3 = 0), and both with the wrist
# centre over the base axis is hard to hit exactly, so: wrist, elbow, wrist + elbow
SINGULAR = {
    "wrist": np.array([0.3, -1.0, 1.2, -0.8, 0.0, 0.4]),
    "elbow": np.array([0.3, -1.0, 0.0, -0.8, 1.1, 0.4]),
    "wrist and elbow": np.array([0.0, -1.57, 0.0, 0.0, 0.0, 0.0]),
}


@pytest.mark.parametrize("pose", sorted(SINGULAR))
@pytest.mark.parametrize("backend", ["rnea", "pinocchio"])
def test_lambda_is_bounded_at_and_near_singular_poses(pose, backend):
    solver = rd.make_solver(rd.load_robot(UR5E), backend)
    q_singular = SINGULAR[pose]
    J = solver.jacobian(q_singular)
    assert np.linalg.matrix_rank(J, tol=1e-9) < 6
    sigma_1 = None
    for offset in (0.0, 1e-12, 1e-8, 1e-5, 1e-3, 1e-1):
        q = q_singular + offset
        result = solver.operational_space(q, np.zeros(6))
        assert np.all(np.isfinite(result.Lambda)) and np.all(np.isfinite(result.eta))
        assert np.all(np.isfinite(result.gravity_wrench))
        Jq, M = solver.jacobian(q), solver.mass_matrix(q)
        sigma_1 = np.linalg.eigvalsh(Jq @ np.linalg.solve(M, Jq.T)).max()
        assert np.linalg.eigvalsh(result.Lambda).max() <= 1.0001 * KAPPA_MAX / sigma_1
        assert result.near_singular == (result.condition_number > KAPPA_MAX)
        if offset <= 1e-8:
            assert result.near_singular
        if offset >= 1e-1:
            assert not result.near_singular


def test_planar_arm_stretched_out():
    """The 2-link arm at q2 = 0 cannot move its tip along the link, but J (6 × 2) keeps rank
    2 (the tip can still turn about y): the 6-D Λ is regular there and stays finite."""
    solver = rd.make_solver(rd.load_robot(SHIPPED / "planar_2link.urdf"))
    for q2 in (0.0, 1e-10, 1e-6):
        q = np.array([0.4, q2])
        assert np.linalg.matrix_rank(solver.jacobian(q)[[0, 2]], tol=1e-9) == (1 if q2 < 1e-9
                                                                                else 2)
        result = solver.operational_space(q)
        assert np.all(np.isfinite(result.Lambda)) and not result.near_singular


@pytest.fixture
def harness(ros):
    h = ros_harness.Harness(robot_description_file=str(UR5E), marker_rate=0.0,
                            default_state=(NAMES, SINGULAR["wrist"] + 0.3, None))
    yield h
    h.close()


def test_node_at_singular_poses_publishes_bounded_flagged_lambda_and_limited_torques(harness):
    for q in SINGULAR.values():
        msg = harness.stream("lambda", NAMES, q, count=5)
        assert msg.near_singular and np.all(np.isfinite(msg.lambda_matrix))
        assert msg.condition_number > KAPPA_MAX
    assert len(harness.inbox["lambda"]) >= 15
    for msg in harness.inbox["lambda"]:
        assert msg.near_singular and np.all(np.isfinite(msg.lambda_matrix))
    for msg in harness.inbox["gravity"]:
        assert np.all(np.abs(msg.effort) <= ROBOT.effort_limit)


def test_without_a_lambda_subscriber_diagnostics_still_tells_the_condition_number(ros):
    """Λ is computed per state only for a subscriber; /diagnostics then computes its
    condition number itself: σ₁/σ₆ of J M⁻¹ Jᵀ (Pinocchio's J and M), and at a singular pose
    near_singular and the WARN."""
    h = ros_harness.Harness(robot_description_file=str(UR5E), marker_rate=0.0,
                            diagnostics_rate=20.0, outputs=("gravity",))
    try:
        def reported(q, predicate):
            def sent_and_reported():
                h.publish_state(NAMES, q)
                return [d for d in h.inbox["diagnostics"][start:]
                        if predicate(d.status[0])]
            start = len(h.inbox["diagnostics"])
            assert h.spin_until(lambda: sent_and_reported()), q

        def value(status, key):
            return next(kv.value for kv in status.values if kv.key == key)

        q = SINGULAR["wrist"] + 0.3
        J, M = REF.jacobian(q), REF.mass_matrix(q)
        expected = np.linalg.cond(J @ np.linalg.solve(M, J.T))
        reported(q, lambda s: abs(float(value(s, "lambda_condition_number")) / expected - 1)
                 <= 1e-3 and value(s, "near_singular") == "False" and s.level == s.OK)
        reported(SINGULAR["wrist"], lambda s: value(s, "near_singular") == "True"
                 and float(value(s, "lambda_condition_number")) > KAPPA_MAX
                 and s.level == s.WARN and s.message == "near a singularity")
        assert not h.node.outputs.lambda_.get_subscription_count()
    finally:
        h.close()


def test_commands_come_only_from_fresh_joint_states(harness):
    """No input, no command: when the stream stops the commands stop with it (nothing is
    sent from a timer), the node reports the silence as stale, and fresh input resumes
    the commands."""
    harness.stream("gravity", count=20)
    harness.settle()
    controller = harness.node.controller
    commands = controller.counts["commands"]
    # silent: wait until the node says so on /diagnostics (its timer runs meanwhile)
    assert harness.spin_until(lambda: any(
        "stale" in d.status[0].message for d in harness.inbox["diagnostics"]))
    assert controller.counts["commands"] == commands
    msg = harness.stream("gravity")                  # resumes on fresh data
    assert controller.counts["commands"] > commands
    assert rel(msg.effort, REF.gravity(SINGULAR["wrist"] + 0.3)) <= 1e-9


def test_bursts_do_not_grow_queues(harness):
    """A burst of 10× the nominal rate (10 000 messages as fast as they can be sent): the
    subscription keeps the newest 10 (KEEP_LAST), the node keeps up afterwards, memory
    stays put."""
    import resource
    q = SINGULAR["elbow"] + 0.5
    harness.stream("gravity", NAMES, q)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for burst in range(10):
        for _ in range(1000):
            harness.publish_state(NAMES, q)
        harness.settle()                              # the whole burst taken or dropped
    accepted = harness.node.health.received
    assert 0 < accepted <= 10_000 + 20
    assert harness.node.health.errors == 0 and harness.node.controller.rejected == 0
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert rss_after - rss_before < 50_000          # KiB: no unbounded growth
    msg = harness.stream("gravity", NAMES, q)         # and it still answers
    assert rel(msg.effort, REF.gravity(q)) <= 1e-9

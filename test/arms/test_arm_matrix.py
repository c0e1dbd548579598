"""Every mode on every arm (arm_matrix.py): six real arms of example-robot-data on MuJoCo, the
controller at dynamics_node's defaults. References are physical: MuJoCo's motion, the
documented time constant 1/λ of the safe hold, the velocity bounds, K⁻¹F."""

from conftest import require_example_robots
require_example_robots(__name__)   # it reads example-robot-data: without it, skipped saying why

import numpy as np
import pytest

from arm_matrix import (MATRIX_ARMS, follow_goal, gravity_drift, hold_after_knock,
                        impedance_push, load, node_defaults, push_in_hold, tracking,
                        working_poses)
from arm_matrix_fits import arm_identification, payload_identification
from robo_dynamics.control.follow_trajectory import SUCCESSFUL

TIME_CONSTANT = 1.0 / node_defaults()["hold_decay_rate"]     # s: the documented one, 50 ms


@pytest.fixture(scope="module", params=sorted(MATRIX_ARMS))
def arm(request):
    robot = load(request.param)
    return robot, working_poses(robot)


def test_gravity_compensation_holds_the_arm_still(arm):
    robot, poses = arm
    figures = gravity_drift(robot, poses[0])
    assert figures["drift"] < 1e-9, figures
    assert figures["events"] == ["started"]


def test_computed_torque_tracks_a_move_of_every_joint(arm):
    robot, poses = arm
    figures = tracking(robot, poses[0])
    assert figures["error"] < 1e-3, figures          # 0.07 to 0.37 mrad measured
    assert "safe_hold" not in figures["events"]


def test_a_follow_joint_trajectory_goal_succeeds_at_the_default_tolerances(arm):
    """Three points as MoveIt sends them, any joint order: SUCCESSFUL, the arm within the
    default goal tolerance (0.02 rad) of the last point, never near the path tolerance."""
    robot, poses = arm
    figures = follow_goal(robot, poses[0])
    assert figures["code"] == SUCCESSFUL, figures
    assert figures["end"] < 0.02 and figures["error"] < 0.01, figures
    assert "safe_hold" not in figures["events"]


def test_a_knock_that_trips_the_hold_is_absorbed_within_the_time_constant(arm):
    """At three poses: a knock on the middle link, 1.5 × the smallest force the observer
    calls a collision, for 0.1 s. The hold starts, the arm's velocity then falls to 1/e
    within 25 % of 1/λ, and the hold never fails (the stream is never stopped)."""
    robot, poses = arm
    for q0 in poses:
        figures = hold_after_knock(robot, q0)
        assert figures["tripped"] and "safe_hold" in figures["events"], figures
        assert abs(figures["time_constant"] - TIME_CONSTANT) <= 0.25 * TIME_CONSTANT, figures
        assert not figures["halted"] and "hold_failed" not in figures["events"], figures


def test_the_hold_withstands_the_push_the_docs_name(arm):
    """At three poses, the arm in the hold: the push docs/node.md says the hold withstands
    (its joint torques τ_p with |M⁻¹ τ_p| / λ at most half the velocity bound), held 0.2 s:
    no joint beyond its velocity bound, and after it the decay within 25 % of 1/λ."""
    robot, poses = arm
    for q0 in poses:
        figures = push_in_hold(robot, q0)
        assert figures["peak_ratio"] < 1.0, figures
        assert abs(figures["time_constant"] - TIME_CONSTANT) <= 0.25 * TIME_CONSTANT, figures
        assert not figures["halted"], figures
    assert "hold_failed" not in [event.kind for event in figures["events"]]


def test_cartesian_impedance_gives_way_by_the_compliance_and_a_tip_push_is_no_collision(arm):
    """The default stiffness, the tip pushed (2 cm of K⁻¹F, rising over 0.2 s) at the default
    collision_reaction (hold): the tip gives way by K⁻¹F within 5 % and the mode stays."""
    robot, poses = arm
    figures = impedance_push(robot, poses[0])
    assert "refused" not in figures, figures
    assert not figures["collision"] and figures["mode"] == "cartesian_impedance", figures
    assert figures["displacement_error"] < 0.05, figures
    assert np.isfinite(figures["displacement_error"])


def test_a_hold_that_a_push_overpowers_fails_and_names_the_push():
    """Panda: 8 × the push the hold withstands, held 1 s: a joint stays beyond its velocity
    bound hold_timeout into the hold, the stream stops, and hold_failed says an external
    force keeps pushing (the observer sees it), not a model error. (At the first working
    pose the push throws the arm against panda_joint2's limit, where it comes to rest: a
    flung arm's end is chaotic, so the pose is one where it is not thrown to a limit.)"""
    robot = load("panda")
    figures = push_in_hold(robot, working_poses(robot)[1], duration=1.0, scale=8.0)
    failed = [e for e in figures["events"] if e.kind == "hold_failed"]
    assert figures["halted"] and len(failed) == 1, figures
    assert "an external force keeps pushing the arm" in failed[0].message, failed[0].message
    assert "model error" not in failed[0].message


@pytest.mark.parametrize("name", sorted(MATRIX_ARMS))
def test_the_whole_arm_is_identified_at_the_defaults_and_no_joint_predicts_worse(name):
    """~/identify_arm's steps at its defaults on a plant whose links are up to 5 % off the
    URDF: held-out error at most 0.4 × the URDF's; on no joint is the corrected model's
    held-out torque or gravity (200 random poses, against the plant's) worse than the
    URDF's by more than that joint's σ; no safe hold."""
    robot = load(name)
    figures = arm_identification(robot, working_poses(robot)[0], name)
    assert "interrupted" not in figures, figures
    assert figures["identified_error"] <= 0.4 * figures["urdf_error"], figures
    sigma = figures["sigma"]
    assert np.all(figures["identified_joint"] <= figures["urdf_joint"] + sigma), figures
    assert np.all(figures["gravity_identified"] <= figures["gravity_urdf"] + sigma), figures
    assert "safe_hold" not in figures["events"], figures


@pytest.mark.parametrize("name", sorted(MATRIX_ARMS))
def test_a_declared_approximate_payload_is_identified_within_2_percent_and_5_mm(name):
    """A payload of 5 % of the arm's mass, declared 30 % light, found from the 5 poses the
    session plans, provisional payloads applied between them: mass within 2 %, centre of
    mass within 5 mm, no safe hold."""
    robot = load(name)
    figures = payload_identification(robot, working_poses(robot)[0], name)
    assert "interrupted" not in figures, figures
    assert figures["mass_error"] <= 0.02 and figures["com_error"] <= 0.005, figures
    assert "safe_hold" not in figures["events"], figures

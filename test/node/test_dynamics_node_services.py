"""dynamics_node's services: inverse, forward and compute dynamics against Pinocchio, a
declared armature, bad requests answered with a reason, payloads, model changes disabled, a
service's bug.

rclpy runs in this process on the loopback only (conftest sets the discovery range and a
domain id of its own before rclpy is imported)."""

import math

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics_interfaces.srv import (ComputeDynamics, ForwardDynamics, InverseDynamics,
                                          SetPayload)
from conftest import rel

from node_harness import NAMES, Q, QD, REF, ROBOT, Harness, backend, harness, ros_context  # noqa: F401 (fixtures)


def test_inverse_and_forward_dynamics_services(harness):
    qdd = np.array([0.5, -0.3, 0.2, 1.0, -1.0, 0.4])
    order = NAMES[::-1]
    response = harness.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        joint_names=order, positions=list(Q[::-1]), velocities=list(QD[::-1]),
        accelerations=list(qdd[::-1])))
    assert response.success and list(response.joint_names) == order
    expected = REF.inverse_dynamics(Q, QD, qdd)
    assert rel(response.effort, expected[::-1]) <= 1e-9

    request = InverseDynamics.Request(positions=list(Q), use_tip_wrench=True)
    request.tip_wrench.header.frame_id = "tool0"
    request.tip_wrench.wrench.force.z = 10.0
    response = harness.call(InverseDynamics, "inverse_dynamics", request)
    f_tip = np.array([0, 0, 10.0, 0, 0, 0])
    expected = REF.gravity(Q) + REF.jacobian(Q, "local").T @ f_tip
    assert response.success and rel(response.effort, expected) <= 1e-9

    tau = np.array([1.0, 20.0, 5.0, 1.0, 0.5, 0.1])
    response = harness.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        positions=list(Q), velocities=list(QD), efforts=list(tau)))
    assert response.success and rel(response.accelerations, REF.forward_dynamics(Q, QD, tau)) \
        <= 1e-9


@pytest.mark.parametrize("harness", [{"armature": [0.4, 0.4, 0.3, 0.1, 0.1, 0.1]}],
                         indirect=True)
def test_a_declared_armature_is_in_the_services_and_in_lambda(harness):
    """armature: τ and q̈ of the services and the published Λ are Pinocchio's with the same
    rotor inertia as its model.armature (a wrong or missing armature is 0.1 N·m or more)."""
    reference = rd.make_solver(ROBOT.with_armature([0.4, 0.4, 0.3, 0.1, 0.1, 0.1]), "pinocchio")
    qdd = np.array([0.5, -0.3, 0.2, 1.0, -1.0, 0.4])
    response = harness.call(InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        positions=list(Q), velocities=list(QD), accelerations=list(qdd)))
    assert response.success and rel(response.effort, reference.inverse_dynamics(Q, QD, qdd)) \
        <= 1e-9
    tau = np.array([1.0, 20.0, 5.0, 1.0, 0.5, 0.1])
    response = harness.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        positions=list(Q), velocities=list(QD), efforts=list(tau)))
    assert response.success and rel(response.accelerations,
                                    reference.forward_dynamics(Q, QD, tau)) <= 1e-9
    lam = harness.stream("lambda")
    assert rel(np.reshape(lam.lambda_matrix, (6, 6)),
               reference.operational_space_inertia(Q)) <= 1e-9


def test_compute_dynamics_service(harness):
    response = harness.call(ComputeDynamics, "compute_dynamics",
                            ComputeDynamics.Request(positions=list(Q), velocities=list(QD)))
    assert response.success and response.dof == 6
    assert rel(np.reshape(response.mass_matrix, (6, 6)), REF.mass_matrix(Q)) <= 1e-9
    assert rel(response.coriolis, REF.bias(Q, QD) - REF.gravity(Q)) <= 1e-9
    assert rel(response.gravity, REF.gravity(Q)) <= 1e-9
    assert rel(np.reshape(response.jacobian, (6, 6)), REF.jacobian(Q)) <= 1e-9
    assert rel(np.reshape(response.operational_space_inertia, (6, 6)),
               REF.operational_space_inertia(Q)) <= 1e-9
    assert response.jacobian_frame == "base_link" and response.tip_frame == "tool0"


@pytest.mark.parametrize("kind, name, request_msg, fragment", [
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(positions=[0.0] * 5),
     "positions: expected 6 values, got 5"),
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        joint_names=NAMES[:5] + ["nope"], positions=[0.0] * 6), "unknown ['nope']"),
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        positions=[math.nan] + [0.0] * 5), "positions: values must be finite"),
    (InverseDynamics, "inverse_dynamics", InverseDynamics.Request(
        positions=[0.0] * 6, velocities=[1.0]), "velocities: expected 6 values, got 1"),
    (ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(positions=[0.0] * 6),
     "efforts: expected 6 values, got 0"),
    (ComputeDynamics, "compute_dynamics", ComputeDynamics.Request(
        joint_names=NAMES + NAMES[:1], positions=[0.0] * 7), "duplicates"),
    (SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=-1.0),
     "mass must be finite, >= 0"),
    (SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1e12),
     "<= max_payload_mass (5.0 kg), got 1000000000000.0"),
    (SetPayload, "set_payload", SetPayload.Request(link="nowhere", mass=1.0),
     "'nowhere' is not a moving link"),
    (SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1.0, ixx=0.1, iyy=0.1,
                                                   izz=0.5), "triangle inequality"),
])
def test_bad_service_requests_answer_false_with_a_message(harness, kind, name, request_msg,
                                                          fragment):
    response = harness.call(kind, name, request_msg)
    assert not response.success and fragment in response.message
    harness.stream("gravity")                           # the node still works


def test_payload_service_changes_torques_by_the_payload_weight(harness):
    before = np.array(harness.stream("gravity").effort)
    response = harness.call(SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1.0))
    assert response.success
    after = np.array(harness.stream("gravity", count=3).effort)
    J_v = REF.jacobian(Q)[:3]
    expected = before - J_v.T @ (1.0 * ROBOT.gravity)
    np.testing.assert_allclose(after, expected, rtol=0, atol=1e-9)
    response = harness.call(SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=0.0))
    assert response.success and "removed" in response.message
    np.testing.assert_allclose(harness.stream("gravity", count=3).effort, before, atol=1e-9)


@pytest.mark.parametrize("harness", [{"allow_model_changes": False}], indirect=True)
def test_model_changes_can_be_disabled(harness):
    response = harness.call(SetPayload, "set_payload", SetPayload.Request(link="tool0", mass=1.0))
    assert not response.success and "allow_model_changes" in response.message
    assert harness.node.solver.model.payloads == ()


def test_start_up_payload_above_the_bound_refuses_to_start():
    with pytest.raises(ValueError, match="exceeds max_payload_mass"):
        Harness(payload_link="tool0", payload_mass=1e12)


def test_a_service_that_fails_on_a_bug_logs_it_and_answers_false(harness, monkeypatch):
    logged = []

    def broken(*args):
        raise ZeroDivisionError("a bug")
    monkeypatch.setattr(harness.node.solver, "forward_dynamics", broken)
    monkeypatch.setattr(type(harness.node.get_logger()), "error",
                        lambda self, text, **kw: logged.append(text))
    response = harness.call(ForwardDynamics, "forward_dynamics", ForwardDynamics.Request(
        positions=list(Q), velocities=list(QD), efforts=[0.0] * 6))
    assert not response.success and "internal error (ZeroDivisionError: a bug)" in response.message
    assert logged and "Traceback" in logged[0] and "ZeroDivisionError" in logged[0]

"""Every service answers generated bad requests with success = false and a message, and the
node keeps working (hypothesis; the service callbacks are called in-process)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from rclpy.parameter import Parameter

from robo_dynamics.ros.dynamics_node.node import DynamicsNode
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robo_dynamics_interfaces.srv import (CheckTrajectory, ComputeDynamics, ForwardDynamics,
                                          InverseDynamics, SetPayload)
import robo_dynamics as rd
from conftest import SHIPPED

URDF = str(SHIPPED / "rd_ur5e.urdf")
REF = rd.make_solver(rd.load_robot(URDF), "pinocchio")
NAMES = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
         "wrist_2_joint", "wrist_3_joint"]
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

number = st.one_of(st.floats(-3.0, 3.0), st.sampled_from([math.nan, math.inf, -math.inf]),
                   st.floats(allow_nan=False, allow_infinity=False))
vector = st.lists(number, max_size=8)
names = st.one_of(st.just([]), st.permutations(NAMES).map(list),
                  st.lists(st.sampled_from(NAMES + ["ghost", ""]), max_size=8))


@pytest.fixture(scope="module")
def node(ros):
    n = DynamicsNode(parameter_overrides=[Parameter("robot_description_file", value=URDF)])
    yield n
    n.destroy_node()


def valid_state(joint_names, *arrays, optional=()):
    """Independent statement of what a request must satisfy (names, lengths, finiteness)."""
    if joint_names and (sorted(joint_names) != sorted(NAMES)):
        return False
    for index, array in enumerate(arrays):
        if index in optional and len(array) == 0:
            continue
        if len(array) != 6 or not all(math.isfinite(v) for v in array):
            return False
    return True


def check(response, fields, request_valid, ordinary):
    """success only for a valid request, then with finite results; an ordinary valid request
    (every value below 1e3) must succeed; a refusal always says why."""
    assert isinstance(response.success, bool)
    if response.success:
        assert request_valid
        for field in fields:
            assert np.all(np.isfinite(getattr(response, field)))
    else:
        assert response.message
        assert not (request_valid and ordinary), response.message


def ordinary(*arrays):
    return all(abs(v) < 1e3 for array in arrays for v in array)


@SETTINGS
@given(names, vector, vector, vector)
def test_inverse_dynamics_requests(node, joint_names, q, qd, qdd):
    response = node.service_handlers.inverse_dynamics(InverseDynamics.Request(
        joint_names=joint_names, positions=q, velocities=qd, accelerations=qdd),
        InverseDynamics.Response())
    check(response, ["effort"], valid_state(joint_names, q, qd, qdd, optional=(1, 2)),
          ordinary(q, qd, qdd))


@SETTINGS
@given(names, vector, vector, vector)
def test_forward_dynamics_requests(node, joint_names, q, qd, tau):
    response = node.service_handlers.forward_dynamics(ForwardDynamics.Request(
        joint_names=joint_names, positions=q, velocities=qd, efforts=tau),
        ForwardDynamics.Response())
    check(response, ["accelerations"], valid_state(joint_names, q, qd, tau, optional=(1,)),
          ordinary(q, qd, tau))


@SETTINGS
@given(names, vector, vector)
def test_compute_dynamics_requests(node, joint_names, q, qd):
    response = node.service_handlers.compute_dynamics(ComputeDynamics.Request(
        joint_names=joint_names, positions=q, velocities=qd), ComputeDynamics.Response())
    check(response, ["mass_matrix", "coriolis", "gravity", "jacobian",
                     "operational_space_inertia"],
          valid_state(joint_names, q, qd, optional=(1,)), ordinary(q, qd))


@SETTINGS
@given(st.sampled_from(["tool0", "wrist_3_link", "base_link", "nowhere", ""]), number,
       st.lists(number, min_size=9, max_size=9))
def test_set_payload_requests(node, link, mass, numbers):
    request = SetPayload.Request(link=link, mass=mass)
    request.center_of_mass.x, request.center_of_mass.y, request.center_of_mass.z = numbers[:3]
    (request.ixx, request.ixy, request.ixz, request.iyy, request.iyz,
     request.izz) = numbers[3:]
    response = node.service_handlers.set_payload(request, SetPayload.Response())
    if not response.success:
        assert response.message
    else:
        assert link in ("tool0", "wrist_3_link") and 0.0 <= mass <= 5.0
        assert all(math.isfinite(v) for v in numbers)
        # undo, so that later examples start from the bare arm
        assert node.service_handlers.set_payload(SetPayload.Request(link=link, mass=0.0),
                                     SetPayload.Response()).success


@settings(SETTINGS, max_examples=60)   # each example builds the solvers twice (code generation)
@given(st.floats(0.0, 5.0), st.lists(st.floats(0.01, 0.3), min_size=3, max_size=3),
       st.lists(st.floats(-0.2, 0.2), min_size=3, max_size=3))
def test_physical_payloads_are_accepted_and_weigh_what_they_weigh(node, mass, sides, com):
    """A solid box of up to max_payload_mass (5 kg) at tool0 is always accepted, and the
    gravity torques then grow by −J_cᵀ m g, J_c the Jacobian of the box's centre (from
    Pinocchio's tool0 Jacobian and pose: v_c = v + ω × R c)."""
    a, b, c = sides
    request = SetPayload.Request(link="tool0", mass=mass, ixx=mass * (b * b + c * c) / 12,
                                 iyy=mass * (a * a + c * c) / 12, izz=mass * (a * a + b * b) / 12)
    request.center_of_mass.x, request.center_of_mass.y, request.center_of_mass.z = com
    response = node.service_handlers.set_payload(request, SetPayload.Response())
    assert response.success, response.message
    q = np.array([0.3, -1.1, 1.4, -0.9, 1.2, 0.4])
    J, (R, _) = REF.jacobian(q), REF.tip_pose(q)
    r = R @ np.array(com)
    J_c = J[:3] - np.cross(r, J[3:], axisa=0, axisb=0, axisc=0)     # v_c = v + ω × r
    expected = REF.gravity(q) - J_c.T @ (mass * REF.model.gravity)
    np.testing.assert_allclose(node.solver.gravity(q), expected, rtol=0, atol=1e-9)
    assert node.service_handlers.set_payload(SetPayload.Request(link="tool0", mass=0.0),
                                 SetPayload.Response()).success


row = st.one_of(st.lists(number, min_size=6, max_size=6), vector)   # often one per joint
point = st.tuples(row, st.one_of(st.just([]), row), st.one_of(st.just([]), row),
                  st.one_of(st.integers(0, 5), st.integers(-5, 10 ** 6)),
                  st.integers(0, 999_999_999))
arbitrary = st.tuples(names, st.lists(point, max_size=4), number, number)


@st.composite
def well_formed(draw):
    """A request the node should check: chain joints, 1–4 points one after another, one
    value per joint, margin and period in range (values may still be huge)."""
    count = draw(st.integers(1, 4))
    value = st.one_of(st.floats(-3.0, 3.0), st.floats(-1e200, 1e200))
    vectors = st.lists(value, min_size=6, max_size=6)
    steps = draw(st.lists(st.integers(1, 2 * 10 ** 9), min_size=count, max_size=count))
    with_velocities = draw(st.booleans())
    points = []
    for k, step in enumerate(steps):
        nanoseconds = sum(steps[:k + 1]) - steps[0]
        points.append((draw(vectors), draw(vectors) if with_velocities else [], [],
                       nanoseconds // 10 ** 9, nanoseconds % 10 ** 9))
    return (draw(st.one_of(st.just([]), st.permutations(NAMES).map(list))), points,
            draw(st.floats(0.01, 1.0)), draw(st.floats(1e-3, 0.05)))


TALLY = {"answered": 0, "checked": 0}


@SETTINGS
@given(st.one_of(well_formed(), arbitrary))
def test_check_trajectory_requests(node, case):
    """Any request is answered: success only with finite peaks and a time scale >= 1, where
    the trajectory is well formed (names, one value per joint, finite, increasing times,
    margin and period in range); otherwise false with a reason, never an internal error."""
    joint_names, points, margin, period = case
    msg = JointTrajectory(joint_names=joint_names)
    for positions, velocities, accelerations, sec, nanosec in points:
        msg.points.append(JointTrajectoryPoint(
            positions=positions, velocities=velocities, accelerations=accelerations,
            time_from_start=Duration(sec=sec, nanosec=nanosec)))
    response = node.service_handlers.check_trajectory(
        CheckTrajectory.Request(trajectory=msg, effort_margin=margin, sample_period=period),
        CheckTrajectory.Response())
    TALLY["answered"] += 1
    if response.success:
        TALLY["checked"] += 1
        times = [sec + nanosec * 1e-9 for *_, sec, nanosec in points]
        assert points and valid_state(joint_names, *[p[0] for p in points])
        assert all(b > a for a, b in zip(times, times[1:])) and times[0] >= 0.0
        assert margin == 0.0 or 0.0 < margin <= 1.0
        assert period == 0.0 or 0.0 < period < math.inf
        assert np.all(np.isfinite(response.peak_effort)) and response.min_time_scale >= 1.0
    else:
        assert response.message and "internal error" not in response.message


def test_check_trajectory_fuzzing_reached_the_check():
    """The generated requests above include some that were checked (not only refusals)."""
    assert TALLY["answered"] == 0 or TALLY["checked"] >= 5, TALLY


def test_node_still_computes_after_the_fuzzing(node):
    response = node.service_handlers.inverse_dynamics(InverseDynamics.Request(positions=[0.0] * 6),
                                          InverseDynamics.Response())
    assert response.success and all(math.isfinite(v) for v in response.effort)
    assert node.solver.model.payloads == ()

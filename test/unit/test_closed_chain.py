"""Closed mechanisms (robo_dynamics.closed_chain): the constraint's terms against finite
differences, a planar four-bar against its textbook closed forms and Pinocchio's
constraintDynamics, and the errors a bad description gets."""

import numpy as np
import pinocchio as pin
import pytest

from closed_chain_models import (A, B, C, FOUR_BAR_PARAMETERS, THETA2_0, four_bar_angles,
                                 four_bar_holding_torque, planar_four_bar_gazebo_urdf,
                                 planar_four_bar_sdf, planar_four_bar_urdf,
                                 random_spatial_tree_urdf)
from robo_dynamics.closed_chain import (ClosedChain, closure, closures_from_parameters,
                                        load_closed_chain, load_sdf, load_tree)
from robo_dynamics.closed_chain.closures import Closure, constraint, constraint_jacobian, gamma
from robo_dynamics.backends.pinocchio_closed_chain import PinocchioClosedChain
from robo_dynamics.closed_chain.tree_dynamics import tree_kinematics
from robo_dynamics.errors import ArgumentError, URDFError


@pytest.fixture(scope="module")
def four_bar():
    return load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS)


def closed_states(chain, count, seed=0):
    """(q, q̇) of the closed four-bar at random crank angles and rates."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = chain.close(np.array([rng.uniform(-np.pi, np.pi), 0.0, 0.0]), chain.reference)
        yield q, chain.velocities(q, rng.uniform(-3.0, 3.0, chain.dof))


@pytest.mark.parametrize("kind", ["point", "revolute", "weld"])
def test_the_constraint_jacobian_and_gamma_are_the_derivatives_of_the_constraint(kind):
    """On a spatial tree with random axes (branch ends apart): Φ_q = ∂Φ/∂q (point and
    revolute rows; a weld's rotation rows are ω_b − ω_a, the rate where the frames meet) and
    γ = −(d/dt Φ_q) q̇ along q(t) = q + t q̇, both by central differences."""
    tree = load_tree(random_spatial_tree_urdf())
    rng = np.random.default_rng(3)
    cut = closure("cut", kind, "a2", "b2", rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3),
                  rng.uniform(-0.1, 0.1, 3), rng.uniform(-1, 1, 3))
    for _ in range(5):
        q, qd = rng.uniform(-2, 2, tree.dof), rng.uniform(-2, 2, tree.dof)
        kin = tree_kinematics(tree, q)
        Phi_q = constraint_jacobian(tree, [cut], kin)
        eps = 1e-6
        columns = [(constraint(tree, [cut], tree_kinematics(tree, q + eps * e))
                    - constraint(tree, [cut], tree_kinematics(tree, q - eps * e))) / (2 * eps)
                   for e in np.eye(tree.dof)]
        numeric = np.array(columns).T
        exact_rows = slice(0, 3) if kind == "weld" else slice(None)
        np.testing.assert_allclose(Phi_q[exact_rows], numeric[exact_rows], atol=1e-8)
        rate = (constraint_jacobian(tree, [cut], tree_kinematics(tree, q + eps * qd))
                - constraint_jacobian(tree, [cut], tree_kinematics(tree, q - eps * qd))) / (2 * eps)
        np.testing.assert_allclose(gamma(tree, [cut], kin, qd), -rate @ qd, atol=1e-7)


def test_a_planar_loop_cut_at_a_spherical_joint_keeps_its_two_independent_equations(four_bar):
    """The point closure gives 3 equations; in the x–z plane the y row is 0 = 0 and is
    dropped by rank: 3 joints − 2 equations = 1 degree of freedom, the crank."""
    assert four_bar.partition.rows == (0, 2) and four_bar.dof == 1
    assert four_bar.partition.v == (0,) and four_bar.fully_actuated
    revolute_cut = dict(FOUR_BAR_PARAMETERS["loop_closures"]["coupler_follower"],
                        type="revolute", rpy_a=[np.pi / 2, 0, 0], rpy_b=[np.pi / 2, 0, 0])
    chain = load_closed_chain(planar_four_bar_urdf(), {
        "actuated_joints": ["crank_joint"],
        "loop_closures": {"names": ["cut"], "cut": revolute_cut}})
    assert len(chain.partition.rows) == 2 and chain.dof == 1        # 5 equations, rank 2


def test_position_closure_reproduces_the_four_bar_geometry(four_bar):
    theta3_0, theta4_0 = four_bar_angles(THETA2_0)
    for crank in np.linspace(-3.0, 3.0, 13):
        q = four_bar.close(np.array([crank, 0.0, 0.0]), four_bar.reference)
        theta3, theta4 = four_bar_angles(THETA2_0 + crank)
        wrap = lambda x: (x + np.pi) % (2 * np.pi) - np.pi                  # noqa: E731
        assert abs(wrap(q[1] - (theta3 - (THETA2_0 + crank)) + (theta3_0 - THETA2_0))) < 1e-10
        assert abs(wrap(q[2] - (theta4 - theta4_0))) < 1e-10
        assert np.max(np.abs(four_bar.constraint(q))) < 1e-12


FOUR_BAR_SOURCES = {
    "urdf+params": lambda: load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS),
    "urdf+gazebo": lambda: load_closed_chain(planar_four_bar_gazebo_urdf()),
    "sdf": lambda: load_sdf(planar_four_bar_sdf(), actuated_joints=["crank_joint"]),
    "sdf, a joint from its child": lambda: load_sdf(planar_four_bar_sdf(False),
                                                    actuated_joints=["crank_joint"]),
}


@pytest.mark.parametrize("source", FOUR_BAR_SOURCES)
def test_the_crank_torque_that_holds_the_four_bar_is_the_virtual_work_closed_form(source):
    """From each place users describe the loop: a params file beside the URDF, the URDF's
    <gazebo> joint with a <transmission>, an SDF model (its poses relative to the model,
    to a link, in degrees; a joint met from its child)."""
    four_bar = FOUR_BAR_SOURCES[source]()
    assert four_bar.actuated_joints == ("crank_joint",) and four_bar.dof == 1
    assert [c.kind for c in four_bar.closures] == ["point"]
    for crank in np.linspace(-3.0, 3.0, 25):
        q = four_bar.close(np.array([crank, 0.0, 0.0]), four_bar.reference)
        tau, _ = four_bar.inverse_dynamics(q, np.zeros(3), np.zeros(3))
        expected = four_bar_holding_torque(THETA2_0 + crank)
        assert abs(tau[0] - expected) <= 1e-9 * max(1.0, abs(expected)), (crank, tau, expected)


def test_velocity_transformation_and_accelerations_keep_the_loop_closed(four_bar):
    for q, qd in closed_states(four_bar, 20):
        B_v = four_bar.velocity_transformation(q)
        Phi_q = four_bar.constraint_jacobian(q)
        assert np.abs(Phi_q @ B_v).max() < 1e-12
        np.testing.assert_array_equal(B_v[list(four_bar.partition.v)], np.eye(four_bar.dof))
        qdd = four_bar.accelerations(q, qd, np.array([0.7]))
        np.testing.assert_allclose(Phi_q @ qdd, four_bar.gamma(q, qd), atol=1e-10)


def pinocchio_four_bar():
    model = pin.buildModelFromXML(planar_four_bar_urdf())
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    loop = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D, model, model.getJointId("coupler_joint"),
        pin.SE3(np.eye(3), np.array([B, 0.0, 0.0])), model.getJointId("follower_joint"),
        pin.SE3(np.eye(3), np.array([C, 0.0, 0.0])), pin.ReferenceFrame.LOCAL)
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    models.append(loop)
    datas.append(loop.createData())
    data = model.createData()
    pin.initConstraintDynamics(model, data, models, datas)
    return model, data, models, datas


def test_forward_dynamics_and_constraint_forces_equal_pinocchios_constraint_dynamics(four_bar):
    """100 random states and crank torques: q̈ and the generalized constraint forces
    Φ_qᵀλ against Pinocchio's constraintDynamics (its proximal KKT solve, which copes with
    the planar loop's redundant row)."""
    model, data, models, datas = pinocchio_four_bar()
    assert list(model.names)[1:] == list(four_bar.tree.joint_names)
    settings = pin.ProximalSettings(1e-14, 1e-10, 100)
    rng = np.random.default_rng(1)
    for q, qd in closed_states(four_bar, 100, seed=2):
        tau = rng.uniform(-5.0, 5.0, 1)
        qdd, lam = four_bar.forward_dynamics(q, qd, tau)
        expected = pin.constraintDynamics(model, data, q, qd, np.array([tau[0], 0.0, 0.0]),
                                          models, datas, settings)
        np.testing.assert_allclose(qdd, expected, rtol=1e-9, atol=1e-9)
        J_c = pin.getConstraintsJacobian(model, data, models, datas)
        generalized = four_bar.constraint_jacobian(q).T @ lam
        np.testing.assert_allclose(generalized, -J_c.T @ data.lambda_c, atol=1e-9)


def test_inverse_dynamics_returns_the_torque_forward_dynamics_takes(four_bar):
    rng = np.random.default_rng(4)
    for q, qd in closed_states(four_bar, 20, seed=5):
        qdd = four_bar.accelerations(q, qd, rng.uniform(-10, 10, 1))
        tau, lam = four_bar.inverse_dynamics(q, qd, qdd)
        qdd_back, lam_back = four_bar.forward_dynamics(q, qd, tau)
        np.testing.assert_allclose(qdd_back, qdd, atol=1e-9)
        np.testing.assert_allclose(lam_back, lam, atol=1e-9)


def test_a_closure_naming_an_unknown_link_is_refused_by_name():
    cut = dict(FOUR_BAR_PARAMETERS["loop_closures"]["coupler_follower"], link_b="folower")
    with pytest.raises(URDFError, match="loop closure 'c': link 'folower' is not a link"):
        load_closed_chain(planar_four_bar_urdf(), {"loop_closures": {"names": ["c"], "c": cut}})


def test_closure_points_that_do_not_meet_are_refused_with_the_gap():
    cut = dict(FOUR_BAR_PARAMETERS["loop_closures"]["coupler_follower"], xyz_b=[C + 0.01, 0, 0])
    with pytest.raises(URDFError, match=r"'c': its frames on 'coupler' and 'follower' are "
                                        r"0\.01 apart at the reference pose"):
        load_closed_chain(planar_four_bar_urdf(), {"loop_closures": {"names": ["c"], "c": cut}})


def test_more_motors_than_the_loop_leaves_degrees_of_freedom_are_refused():
    with pytest.raises(URDFError, match="2 motors but the loops leave 1 degrees of freedom"):
        load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS,
                          actuated_joints=["crank_joint", "follower_joint"])
    weld = dict(FOUR_BAR_PARAMETERS["loop_closures"]["coupler_follower"], type="weld",
                rpy_a=[0.0, 0.0, 0.0])
    tree = load_tree(planar_four_bar_urdf())
    kin = tree_kinematics(tree, np.zeros(3))
    # a weld where the coupler meets the follower at an angle: frames that coincide
    from robo_dynamics.closed_chain.tree_dynamics import frame_pose
    _, R_a, _ = frame_pose(tree, kin, "coupler", np.eye(3), np.array([B, 0, 0]))
    _, R_b, _ = frame_pose(tree, kin, "follower", np.eye(3), np.array([C, 0, 0]))
    pitch = np.arctan2(-(R_b.T @ R_a)[2, 0], (R_b.T @ R_a)[0, 0])
    weld["rpy_b"] = [0.0, float(pitch), 0.0]
    with pytest.raises(URDFError, match="1 motors but the loops leave 0 degrees of freedom"):
        load_closed_chain(planar_four_bar_urdf(), {
            "actuated_joints": ["crank_joint"], "loop_closures": {"names": ["w"], "w": weld}})


def test_a_motor_the_loop_does_not_let_move_is_refused(four_bar):
    """Beside the four-bar a free pendulum: 2 degrees of freedom. Motors on the crank and
    the coupler: the loop's two equations then need two passive joints in the loop, and it
    has one (the follower)."""
    tree = load_tree(planar_four_bar_urdf(pendulum=True))
    assert ClosedChain(tree, closures_from_parameters(FOUR_BAR_PARAMETERS)).dof == 2
    with pytest.raises(URDFError, match=r"actuated_joints \['crank_joint', 'coupler_joint'\]"):
        ClosedChain(tree, closures_from_parameters(FOUR_BAR_PARAMETERS),
                    ["crank_joint", "coupler_joint"])


def test_a_pose_outside_the_workspace_is_refused_with_the_reason():
    """Driven by the follower (a rocker), the four-bar cannot reach every follower angle."""
    chain = load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS,
                              actuated_joints=["follower_joint"])
    assert chain.partition.v == (2,)
    with pytest.raises(ArgumentError, match=r"do not close with \['follower_joint'\] at "
                                            r"\[2\.5\]: outside the mechanism's workspace"):
        chain.close(np.array([0.0, 0.0, 2.5]))


@pytest.mark.parametrize("entry, message", [
    ({"type": "hinge", "link_a": "coupler", "link_b": "follower"}, "type 'hinge' is not"),
    ({"type": "point", "link_a": "coupler"}, r"missing \['link_b'\]"),
    ({"type": "point", "link_a": "coupler", "link_b": "follower", "xyz_a": [1, 2]},
     "xyz_a must be 3 finite numbers"),
    ({"type": "point", "link_a": "coupler", "link_b": "follower", "gear": 2},
     r"unknown fields \['gear'\]"),
])
def test_a_malformed_closure_in_a_params_file_is_refused_by_name(entry, message):
    with pytest.raises(URDFError, match=f"loop closure 'c': {message}"):
        closures_from_parameters({"loop_closures": {"names": ["c"], "c": entry}})


SDF_HEAD = '<sdf version="1.9"><model name="m"><link name="a"/><link name="b"/>'


@pytest.mark.parametrize("text, message", [
    (SDF_HEAD + '<joint name="g" type="gearbox"><parent>a</parent><child>b</child></joint>'
     '</model></sdf>', "SDF joint 'g': type 'gearbox' is not supported"),
    (SDF_HEAD + '<model name="inner"/></model></sdf>', "nested <model> is not supported"),
    (SDF_HEAD + '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
     '<pose relative_to="nowhere"/></joint></model></sdf>', "relative_to 'nowhere': no such"),
    ('<robot name="r"/>', "expected <sdf> holding one <model>"),
    (SDF_HEAD + '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
     '<pose>0 0 x 0 0 0</pose></joint></model></sdf>', "'j' <pose>: expected 6 finite numbers"),
])
def test_what_an_sdf_model_holds_that_cannot_be_used_is_refused_by_name(text, message):
    with pytest.raises(URDFError, match=message):
        load_sdf(text)


def test_a_loop_cut_at_a_prismatic_joint_is_refused_with_what_to_do():
    text = planar_four_bar_sdf().replace(
        '<joint name="coupler_follower" type="ball">', '<joint name="coupler_follower" '
        'type="prismatic"><axis><xyz>1 0 0</xyz></axis>')
    with pytest.raises(URDFError, match="'coupler_follower' \\(prismatic\\): a loop cannot be "
                                        "cut there; name another joint of the loop in cut_joints"):
        load_sdf(text)


@pytest.mark.parametrize("joint, message", [
    ('<joint name="j" type="screw"><parent>coupler</parent><child>follower</child></joint>',
     "<gazebo> joint 'j': type 'screw' cannot close a loop here"),
    ('<joint name="j" type="ball"><parent>coupler</parent><child>folower</child></joint>',
     "<gazebo> joint 'j': <child> 'folower' is not a link of the robot"),
])
def test_a_gazebo_joint_that_cannot_close_the_loop_is_refused_by_name(joint, message):
    text = planar_four_bar_urdf().replace("</robot>", f"<gazebo>{joint}</gazebo></robot>")
    with pytest.raises(URDFError, match=message):
        load_closed_chain(text)


def spatial_loop(kind):
    """Two random branches of four joints whose last links are joined by a `kind` closure
    placed where they are at q = 0: 5, 3 or 2 degrees of freedom."""
    tree = load_tree(random_spatial_tree_urdf(seed=7, joints=4))
    kin = tree_kinematics(tree, np.zeros(tree.dof))
    from robo_dynamics.closed_chain.tree_dynamics import frame_pose
    _, R_a, p_a = frame_pose(tree, kin, "a3")
    _, R_b, p_b = frame_pose(tree, kin, "b3")
    R_w, p_w = R_a, p_a + R_a @ np.array([0.05, -0.02, 0.1])       # the cut joint's frame
    cut = Closure("cut", kind, "a3", R_a.T @ R_w, R_a.T @ (p_w - p_a),
                  "b3", R_b.T @ R_w, R_b.T @ (p_w - p_b))
    return ClosedChain(tree, [cut])


@pytest.mark.parametrize("kind, dof", [("point", 5), ("revolute", 3), ("weld", 2)])
def test_the_in_house_closed_chain_equals_pinocchio_on_a_spatial_loop(kind, dof):
    """Forward dynamics (q̈ and Φ_qᵀλ) at 30 closed states of a spatial loop, against
    Pinocchio's constraintDynamics on the same tree built body by body."""
    chain = spatial_loop(kind)
    assert chain.dof == dof
    reference = PinocchioClosedChain(chain)
    rng = np.random.default_rng(8)
    for _ in range(30):
        goal = chain.reference.copy()
        goal[list(chain.partition.v)] += rng.uniform(-0.05, 0.05, dof)
        q = chain.close(goal, chain.reference)
        qd = chain.velocities(q, rng.uniform(-1.0, 1.0, dof))
        qdd, lam = chain.forward_dynamics(q, qd)
        expected_qdd, expected_force = reference.forward_dynamics(q, qd)
        scale = max(1.0, np.abs(expected_qdd).max())
        np.testing.assert_allclose(qdd, expected_qdd, atol=1e-8 * scale)
        np.testing.assert_allclose(chain.constraint_jacobian(q).T @ lam, expected_force,
                                   atol=1e-8 * max(1.0, np.abs(expected_force).max()))


@pytest.mark.parametrize("source", FOUR_BAR_SOURCES)
def test_the_four_bar_motor_torque_equals_pinocchios_along_a_motion(source):
    chain = FOUR_BAR_SOURCES[source]()
    reference = PinocchioClosedChain(chain)
    rng = np.random.default_rng(9)
    for q, qd in closed_states(chain, 20, seed=10):
        qdd = chain.accelerations(q, qd, rng.uniform(-10, 10, 1))
        tau, lam = chain.inverse_dynamics(q, qd, qdd)
        expected_tau, expected_force = reference.inverse_dynamics(q, qd, qdd)
        np.testing.assert_allclose(tau, expected_tau, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(chain.constraint_jacobian(q).T @ lam, expected_force,
                                   atol=1e-9)


def test_the_partition_is_chosen_again_where_it_degrades():
    """No motors: the four-bar's free coordinate is taken as the follower. Where the crank
    and the coupler line up (the follower, a rocker, at its extreme) the follower cannot
    drive them: Φ_u is singular there, and the partition is chosen again, well-conditioned."""
    driven = load_closed_chain(planar_four_bar_urdf(), FOUR_BAR_PARAMETERS)   # by the crank
    follower_at = lambda c: driven.close(np.array([c, 0.0, 0.0]), driven.reference)  # noqa
    samples = np.linspace(-np.pi, np.pi, 61)       # the crank angle of the follower's maximum
    best = samples[np.argmax([follower_at(c)[2] for c in samples])]
    low, high = best - 0.1, best + 0.1
    for _ in range(50):
        a, b = low + (high - low) / 3, high - (high - low) / 3
        low, high = (a, high) if follower_at(a)[2] < follower_at(b)[2] else (low, b)
    extreme = follower_at(low)
    tree = load_tree(planar_four_bar_urdf())
    chain = ClosedChain(tree, closures_from_parameters(FOUR_BAR_PARAMETERS))
    from robo_dynamics.closed_chain.partition import partition
    chain.partition = partition(constraint_jacobian(tree, chain.closures,
                                                    tree_kinematics(tree, chain.reference)), [2])
    assert chain.condition(extreme) > 1e6
    assert chain.ensure_partition(extreme).v != (2,) and chain.condition(extreme) < 1e3


@pytest.mark.parametrize("kind, dof", [("point", 5), ("revolute", 3), ("weld", 2)])
def test_lambda_through_the_loop_inverts_the_constrained_mobility(kind, dof):
    """Λ of a point on a spatial loop against the KKT form: at rest, without gravity, a
    wrench F at the point gives J q̈ = Λ⁻¹ F with q̈ from [[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] =
    [Jᵀ F; 0]; Λ is the pseudo-inverse of that Λ⁻¹ (a point of a1 moves in the directions
    its two joints and the loop leave it)."""
    from robo_dynamics.closed_chain.tree_dynamics import (frame_jacobian, frame_pose,
                                                          tree_mass_matrix)
    chain = spatial_loop(kind)
    tree = chain.tree
    rng = np.random.default_rng(12)
    for _ in range(5):
        goal = chain.reference.copy()
        goal[list(chain.partition.v)] += rng.uniform(-0.05, 0.05, dof)
        q = chain.close(goal, chain.reference)
        point = np.array([0.02, 0.05, -0.03])
        Lambda = chain.operational_space_inertia(q, "a1", point).Lambda
        kin = tree_kinematics(tree, q)
        body, _, p = frame_pose(tree, kin, "a1", np.eye(3), point)
        J = frame_jacobian(tree, kin, body, p)
        Phi_q = chain.constraint_jacobian(q)
        r = Phi_q.shape[0]
        K = np.block([[tree_mass_matrix(tree, q, kin), Phi_q.T], [Phi_q, np.zeros((r, r))]])
        mobility = J @ np.linalg.inv(K)[:tree.dof, :tree.dof] @ J.T      # Λ⁻¹, rank ≤ dof
        rank = np.linalg.matrix_rank(mobility, tol=1e-9 * np.abs(mobility).max())
        assert rank == np.linalg.matrix_rank(Lambda, tol=1e-9 * np.abs(Lambda).max()) >= 2
        np.testing.assert_allclose(mobility @ Lambda @ mobility, mobility,
                                   atol=1e-9 * np.abs(mobility).max())
        np.testing.assert_allclose(Lambda @ mobility @ Lambda, Lambda,
                                   atol=1e-9 * np.abs(Lambda).max())


def test_the_cross_check_of_the_two_backends_agrees_and_catches_a_wrong_mass():
    """backends.cross_check_closed_chain: the four-bar against Pinocchio's constraintDynamics at
    random states under random crank torques, every quantity within 1e-9 (relative); against
    Pinocchio on a four-bar whose coupler is 10 % heavier (a model that is not this one),
    every quantity is reported off by more than 1e-3."""
    from robo_dynamics.backends.cross_check import (CLOSED_CHAIN_QUANTITIES as QUANTITIES,
                                                    cross_check_closed_chain as cross_check)
    chain = FOUR_BAR_SOURCES["urdf+params"]()
    heavier = planar_four_bar_urdf().replace('<mass value="2.0"/>', '<mass value="2.2"/>', 1)
    assert heavier != planar_four_bar_urdf()
    same = PinocchioClosedChain(chain)
    other = PinocchioClosedChain(load_closed_chain(heavier, FOUR_BAR_PARAMETERS))
    rng = np.random.default_rng(11)
    for q, qd in closed_states(chain, 10, seed=12):
        tau = rng.uniform(-20.0, 20.0, 1)
        agree = cross_check(chain, same, q, qd, tau)
        assert set(agree) == set(QUANTITIES)
        assert all(d.max_rel < 1e-9 for d in agree.values()), agree
        assert all(d.max_rel > 1e-3 for d in cross_check(chain, other, q, qd, tau).values())

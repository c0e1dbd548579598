"""The in-house algorithms against Pinocchio on real arms: ≥ 100 random states per arm.

Errors are norm-wise relative: max |ours − Pinocchio| / max |Pinocchio|.
"""

import numpy as np
import pinocchio as pin
import pytest

import robo_dynamics as rd
from conftest import rel, ARMS, load_arm, random_states

STATES = 100
TOLERANCE = 1e-9



def test_joint_space_quantities_match(solvers):
    ours, ref = solvers
    worst = {}
    for q, qd, qdd in zip(*random_states(ours.model, STATES, seed=1)):
        g = ref.gravity(q)
        pairs = {
            "tau": (ours.inverse_dynamics(q, qd, qdd), ref.inverse_dynamics(q, qd, qdd)),
            "g": (ours.gravity(q), g),
            "C qd": (ours.bias(q, qd) - ours.gravity(q), ref.bias(q, qd) - g),
            "M": (ours.mass_matrix(q), ref.mass_matrix(q)),
            "M^-1": (ours.mass_matrix_inverse(q), ref.mass_matrix_inverse(q)),
            "C": (ours.coriolis_matrix(q, qd), ref.coriolis_matrix(q, qd)),
            "J": (ours.jacobian(q), ref.jacobian(q)),
            "Jdot qd": (ours.jacobian_dot_qd(q, qd), ref.jacobian_dot_qd(q, qd)),
        }
        for name, (a, b) in pairs.items():
            worst[name] = max(worst.get(name, 0.0), rel(a, b))
    assert all(err <= TOLERANCE for err in worst.values()), worst


def test_forward_dynamics_matches_aba(solvers):
    ours, ref = solvers
    for q, qd, tau in zip(*random_states(ours.model, STATES, seed=2)):
        tau = 10.0 * tau
        assert rel(ours.forward_dynamics(q, qd, tau), ref.forward_dynamics(q, qd, tau)) < 1e-8


def test_operational_space_inertia_matches_pinocchio_away_from_singularities(solvers):
    """Reference: Pinocchio's J and M⁻¹ (computeMinverse), inverted by NumPy here.

    Away from singularities (condition number ≤ 1e6) the error is ≤ 1e-9; closer in, up to
    the regularisation bound, it may grow only as the conditioning allows (κ · 1e-15)."""
    ours, ref = solvers
    pm, data = ref.pin_model, ref.pin_model.createData()
    n = ours.model.dof
    well_conditioned = 0
    for q, _, _ in zip(*random_states(ours.model, STATES, seed=3)):
        result = ours.operational_space(q)
        if result.near_singular:
            continue
        J = ref.jacobian(q)
        M_inv = pin.computeMinverse(pm, data, ref._q(q))
        M_inv = np.triu(M_inv) + np.triu(M_inv, 1).T
        M_inv = M_inv[np.ix_(ref._idx_v, ref._idx_v)]
        Lambda_inv = J @ M_inv @ J.T
        expected = np.linalg.inv(Lambda_inv) if n >= 6 else np.linalg.pinv(Lambda_inv, rcond=1e-10)
        tolerance = max(TOLERANCE, result.condition_number * 1e-15)
        well_conditioned += result.condition_number <= 1e6
        assert rel(result.Lambda, expected) <= tolerance
        assert rel(ref.operational_space_inertia(q), expected) <= tolerance
    assert well_conditioned >= 0.7 * STATES


def test_tip_wrench_in_both_frames(solvers):
    ours, ref = solvers
    rng = np.random.default_rng(4)
    for q, qd, qdd in zip(*random_states(ours.model, 20, seed=4)):
        f_tip = rng.uniform(-20, 20, 6)
        for frame in ("local_world_aligned", "local"):
            a = ours.inverse_dynamics(q, qd, qdd, f_tip, frame)
            b = ref.inverse_dynamics(q, qd, qdd, f_tip, frame)
            assert rel(a, b) <= TOLERANCE


def test_other_jacobian_frames(solvers):
    ours, ref = solvers
    for q, qd, _ in zip(*random_states(ours.model, 20, seed=5)):
        for frame in ("local", "world"):
            assert rel(ours.jacobian(q, frame), ref.jacobian(q, frame)) <= TOLERANCE
        assert rel(ours.jacobian_dot_qd(q, qd, "local"), ref.jacobian_dot_qd(q, qd, "local")) \
            <= TOLERANCE
        R_a, p_a = ours.tip_pose(q)
        R_b, p_b = ref.tip_pose(q)
        np.testing.assert_allclose(R_a, R_b, atol=1e-12)
        np.testing.assert_allclose(p_a, p_b, atol=1e-12)


@pytest.mark.parametrize("gravity", [(0.0, 0.0, -9.81), (9.81, 0.0, 0.0), (0.0, 3.0, 8.0)])
def test_wall_ceiling_and_tilted_mounts(gravity):
    robot = load_arm("rd_ur5e", gravity=gravity)
    ours, ref = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
    for q, qd, qdd in zip(*random_states(robot, 20, seed=6)):
        assert rel(ours.inverse_dynamics(q, qd, qdd), ref.inverse_dynamics(q, qd, qdd)) <= TOLERANCE
        assert rel(ours.gravity(q), ref.gravity(q)) <= TOLERANCE


def test_base_link_below_the_urdf_root():
    """mixed_chain's root is 'world' with a rotated fixed mount; choose 'base' as base_link."""
    path, tip = ARMS["mixed_chain"]
    robot = rd.load_robot(path, base_link="base", tip_link=tip, gravity=(1.0, -2.0, -9.0))
    ours, ref = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
    for q, qd, qdd in zip(*random_states(robot, 20, seed=7)):
        report = rd.cross_check(ours, ref, q, qd, qdd)
        assert max(d.max_rel for d in report.values()) <= TOLERANCE, report


def test_batched_rnea_and_gravity_equal_single_calls():
    robot = load_arm("panda")
    ours, ref = rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")
    q, qd, qdd = random_states(robot, 50, seed=8)
    tau = ours.inverse_dynamics_batch(q, qd, qdd)
    g = ours.gravity_batch(q)
    assert tau.shape == g.shape == (50, robot.dof)
    for i in range(50):
        assert rel(tau[i], ref.inverse_dynamics(q[i], qd[i], qdd[i])) <= TOLERANCE
        assert rel(g[i], ref.gravity(q[i])) <= TOLERANCE
    assert rel(ref.inverse_dynamics_batch(q, qd, qdd), tau) <= TOLERANCE


@pytest.mark.parametrize("name", sorted(ARMS))
def test_compiled_algorithms_equal_pinocchio_single_and_batched(name):
    """Each algorithm generated for the arm (link frames, constants folded: inverse
    dynamics, gravity, M, J, J̇ q̇, ∂τ/∂q, ∂τ/∂q̇) against Pinocchio, including prismatic
    and continuous joints (mixed_chain, kinova); the batched code over more states than one
    chunk (and a partial one)."""
    from robo_dynamics.algorithms.compiled import (crba_codegen, derivatives_codegen,
                                                   jacobian_codegen, rnea_codegen)
    from robo_dynamics.algorithms import rnea
    from robo_dynamics.algorithms.compiled.chain_codegen import BATCH_CHUNK
    robot = load_arm(name)
    n = robot.dof
    compiled = rnea_codegen.compile_rnea(robot)
    gravity = rnea_codegen.compile_rnea(robot, gravity_only=True)
    mass_matrix = crba_codegen.compile_mass_matrix(robot)
    kinematics = jacobian_codegen.compile_kinematics(robot)
    jacobian = jacobian_codegen.compile_jacobian(robot)
    jacobian_dot_qd = jacobian_codegen.compile_jacobian_dot_qd(robot)
    derivatives = derivatives_codegen.compile_rnea_derivatives(robot)
    ref = rd.make_solver(robot, "pinocchio")
    for q, qd, qdd in zip(*random_states(robot, 50, seed=9)):
        x = q.tolist(), qd.tolist(), qdd.tolist()
        tau = np.array(compiled(*x))
        assert rel(tau, rnea.rnea(robot, q, qd, qdd)) <= 1e-12
        assert rel(tau, ref.inverse_dynamics(q, qd, qdd)) <= 1e-12
        assert rel(np.array(gravity(x[0])), ref.gravity(q)) <= 1e-12
        assert rel(np.reshape(mass_matrix(x[0]), (n, n)), ref.mass_matrix(q)) <= 1e-12
        pose = np.array(kinematics(x[0]))
        J = np.array(jacobian(x[0])).reshape(6, n)
        assert np.array_equal(J.ravel(), pose[:6 * n])
        assert rel(J, ref.jacobian(q)) <= 1e-12
        R_tip, p_tip = ref.tip_pose(q)
        assert rel(pose[6 * n:], np.concatenate((R_tip.ravel(), p_tip))) <= 1e-12
        assert rel(np.array(jacobian_dot_qd(x[0], x[1])), ref.jacobian_dot_qd(q, qd)) <= 1e-12
        dq, dv, _ = ref.inverse_dynamics_derivatives(q, qd, qdd)
        d = np.array(derivatives(*x))
        assert rel(d[:n * n].reshape(n, n), dq) <= TOLERANCE
        assert rel(d[n * n:].reshape(n, n), dv) <= TOLERANCE
    assert compiled.operations > 0 and "def rnea" in compiled.source

    count = BATCH_CHUNK + 37
    q, qd, qdd = random_states(robot, count, seed=10)
    tau = rnea_codegen.compile_rnea_batch(robot)(q, qd, qdd)
    g = rnea_codegen.compile_rnea_batch(robot, gravity_only=True)(q)
    M = crba_codegen.compile_mass_matrix_batch(robot)(q)
    J = jacobian_codegen.compile_jacobian_batch(robot)(q)
    D = derivatives_codegen.compile_rnea_derivatives_batch(robot)(q, qd, qdd)
    assert tau.shape == g.shape == (count, n)
    assert M.shape == (count, n * n) and J.shape == (count, 6 * n)
    assert D.shape == (count, 2 * n * n)
    assert rel(tau, rnea.rnea_batch(robot, q, qd, qdd)) <= 1e-12
    assert rel(g, rnea.gravity_batch(robot, q)) <= 1e-12
    for k in (0, 1, BATCH_CHUNK - 1, BATCH_CHUNK, count - 1):
        assert rel(tau[k], ref.inverse_dynamics(q[k], qd[k], qdd[k])) <= 1e-12
        assert rel(g[k], ref.gravity(q[k])) <= 1e-12
        assert rel(M[k].reshape(n, n), ref.mass_matrix(q[k])) <= 1e-12
        assert rel(J[k].reshape(6, n), ref.jacobian(q[k])) <= 1e-12
        dq, dv, _ = ref.inverse_dynamics_derivatives(q[k], qd[k], qdd[k])
        assert rel(D[k, :n * n].reshape(n, n), dq) <= TOLERANCE
        assert rel(D[k, n * n:].reshape(n, n), dv) <= TOLERANCE


def test_batched_solver_api_equals_pinocchio_per_state(solvers):
    """mass_matrix_batch, jacobian_batch (all frames), inverse_dynamics_derivatives_batch and
    operational_space_inertia_batch of both backends against Pinocchio's single calls."""
    ours, ref = solvers
    q, qd, qdd = random_states(ours.model, 20, seed=12)
    for solver in (ours, ref):
        M = solver.mass_matrix_batch(q)
        dq, dv = solver.inverse_dynamics_derivatives_batch(q, qd, qdd)
        Lambda = solver.operational_space_inertia_batch(q)
        for k in range(len(q)):
            assert rel(M[k], ref.mass_matrix(q[k])) <= TOLERANCE
            for frame in ("local_world_aligned", "local", "world"):
                assert rel(solver.jacobian_batch(q, frame)[k], ref.jacobian(q[k], frame)) <= 1e-12
            d_q, d_v, _ = ref.inverse_dynamics_derivatives(q[k], qd[k], qdd[k])
            assert rel(dq[k], d_q) <= TOLERANCE and rel(dv[k], d_v) <= TOLERANCE
            if ref.operational_space(q[k]).condition_number <= 1e6:
                assert rel(Lambda[k], ref.operational_space_inertia(q[k])) <= 1e-7


def test_cross_check_in_steps_is_one_backend_per_step_and_equals_all_at_once(solvers):
    from robo_dynamics.backends.cross_check import QUANTITIES, CrossCheckSteps
    ours, ref = solvers
    q, qd, qdd = (x[0] for x in random_states(ours.model, 1, seed=13))
    steps = CrossCheckSteps(ours, ref, q, qd, qdd)
    q[:] = 0.0                                       # the state was copied
    for count in range(1, len(QUANTITIES) + 1):
        steps.step()                                 # ours: nothing to compare yet
        assert list(steps.report) == list(QUANTITIES[:count - 1])
        ours.inverse_dynamics(q + 1.0, qd, qdd)      # as the control loop does meanwhile
        steps.step()                                 # the reference: compared
        assert list(steps.report) == list(QUANTITIES[:count])
        assert steps.report[QUANTITIES[count - 1]].max_rel <= TOLERANCE
    assert steps.done
    q = random_states(ours.model, 1, seed=13)[0][0]
    assert steps.report == rd.cross_check(ours, ref, q, qd, qdd)


def test_cross_check_refuses_a_state_it_cannot_evaluate(solvers):
    """The state is checked once, before any backend's fast path sees it."""
    from robo_dynamics.errors import ArgumentError
    ours, ref = solvers
    n = ours.model.dof
    q, qd, qdd = (x[0] for x in random_states(ours.model, 1, seed=14))
    bad_q = q.copy()
    bad_q[-1] = np.nan
    with pytest.raises(ArgumentError, match="q has non-finite"):
        rd.cross_check(ours, ref, bad_q, qd, qdd)
    with pytest.raises(ArgumentError, match=f"qdd: expected {n}, got {n + 1}"):
        rd.cross_check(ours, ref, q, qd, np.zeros(n + 1))


def test_pinocchio_backend_matrices_are_exactly_symmetric(solvers):
    """M, M⁻¹ and the M blocks of the derivatives are symmetric to the last bit: the backend
    takes Pinocchio's matrices as they come (Pinocchio 4 fills both triangles)."""
    _, ref = solvers
    for q, qd, qdd in zip(*random_states(ref.model, 20, seed=15)):
        tau = ref.inverse_dynamics(q, qd, qdd)
        for M in (ref.mass_matrix(q), ref.mass_matrix_inverse(q),
                  ref.inverse_dynamics_derivatives(q, qd, qdd)[2],
                  ref.forward_dynamics_derivatives(q, qd, tau)[2]):
            np.testing.assert_array_equal(M, M.T)
        np.testing.assert_allclose(ref.mass_matrix(q) @ ref.mass_matrix_inverse(q),
                                   np.eye(len(q)), atol=1e-9)


PUBLIC_CALLS = {   # method: the state arguments it takes, in order
    "inverse_dynamics": ("q", "qd", "qdd"), "gravity": ("q",), "bias": ("q", "qd"),
    "mass_matrix": ("q",), "mass_matrix_inverse": ("q",), "coriolis_matrix": ("q", "qd"),
    "momentum_terms": ("q", "qd"), "forward_dynamics": ("q", "qd", "tau"),
    "inverse_dynamics_derivatives": ("q", "qd", "qdd"), "jacobian": ("q",), "jacobian_dot_qd": ("q", "qd"),
    "tip_pose": ("q",), "operational_space_inertia": ("q",),
}


@pytest.mark.parametrize("backend", [0, 1], ids=["rnea", "pinocchio"])
def test_public_calls_check_each_argument_and_accept_any_array_like(solvers, backend):
    """Every argument of every public call: a NaN, an infinity or a wrong length is an
    ArgumentError naming it; a list, an int array, a float32 array or a strided view give
    the same numbers as the float64 array (to rounding: Pinocchio may vectorise a strided
    copy differently)."""
    from robo_dynamics.errors import ArgumentError
    solver = solvers[backend]
    n = solver.model.dof
    state = random_states(solver.model, 1, seed=16)
    state = {"q": state[0][0], "qd": state[1][0], "qdd": state[2][0], "tau": 5 * state[2][0]}
    for method, names in PUBLIC_CALLS.items():
        call = getattr(solver, method)
        expected = call(*(state[name] for name in names))
        for index, name in enumerate(names):
            for bad in (np.nan, np.inf, -np.inf):
                args = [state[other].copy() for other in names]
                args[index][n // 2] = bad
                with pytest.raises(ArgumentError, match=f"^{name} has non-finite"):
                    call(*args)
            args = [state[other] for other in names]
            args[index] = np.zeros(n + 1)
            with pytest.raises(ArgumentError, match=f"{name}: expected {n}, got {n + 1}"):
                call(*args)
            single = state[name].astype(np.float32)
            for like, same in ((state[name].tolist(), state[name]),
                               (np.repeat(state[name], 2)[::2], state[name]),
                               (single, single.astype(float))):
                args = [state[other] for other in names]
                args[index] = same
                reference = _flat(call(*args))
                args[index] = like
                np.testing.assert_allclose(_flat(call(*args)), reference, rtol=0,
                                           atol=1e-13 * max(1.0, np.abs(reference).max()))
        huge = np.full(n, 1e308)                  # finite, but their sum is not
        assert solver.check_state(q=huge)[0] is huge
        integers = [np.round(state[name]).astype(int) for name in names]
        np.testing.assert_array_equal(_flat(call(*integers)),
                                      _flat(call(*(np.round(state[name]) for name in names))))
        assert np.array_equal(_flat(call(*(state[name] for name in names))), _flat(expected))


def _flat(result):
    """Every number of a result (an array or a tuple of arrays) in one vector."""
    parts = result if isinstance(result, tuple) else (result,)
    return np.concatenate([np.ravel(part) for part in parts])

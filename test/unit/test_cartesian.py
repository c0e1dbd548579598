"""Cartesian impedance and operational-space control in the controller core, without ROS:
the laws against Pinocchio's forward dynamics (the tip accelerates as the law says), the
damping from double diagonalisation against the closed loop's eigenvalues, the sampled-loop
stability check against the loop iterated, and closed-loop on the MuJoCo plant of the UR5e:
a tip force displaces the tip by K⁻¹F, a 5 cm step has the commanded damping ratio, the
operational-space law moves each axis as its own mass-spring-damper; and on the Panda the
nullspace posture holds the elbow while the tip is pushed."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.control import cartesian as c
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.limits import velocity_bounds
from robo_dynamics.control.settings import Settings
from robo_dynamics.control.trajectory import SetPoint
from robo_dynamics.simulation.mujoco_plant import MujocoPlant
from robo_dynamics.simulation.simulated_arm import SimulatedArm
from robo_dynamics.spatial.rotations import axis_angle_matrix
from conftest import SHIPPED, load_arm

ROBOT = rd.load_robot(SHIPPED / "rd_ur5e.urdf")
NAMES = list(ROBOT.joint_names)
REF = rd.make_solver(ROBOT, "pinocchio")
N = ROBOT.dof
DT = 1e-3
POSES = {"ordinary": [-0.5, -1.6, 1.0, -1.2, -1.0, 0.0],
         "elbow up": [0.5, -1.0, 1.2, -1.5, -1.57, 0.3],
         "near the wrist singularity": [0.3, -1.1, 1.4, -0.9, 0.08, 0.4]}


def target(law, R, p, K, zeta=1.0, wrench=np.zeros(6), posture=None, n=N, null_max=10.0):
    return c.CartesianTarget(law, R, p, K, zeta, wrench, posture, np.full(n, 20.0),
                             np.full(n, null_max), 0.1, 0.5)


def random_spd(rng, scales):
    A = rng.normal(size=(6, 6))
    Q, _ = np.linalg.qr(A)
    return (Q * scales) @ Q.T


# -- the parts -----------------------------------------------------------------------------
def test_the_rotation_vector_inverts_rodrigues_formula_up_to_pi():
    rng = np.random.default_rng(1)
    for angle in (0.0, 1e-8, 1e-3, 0.7, 2.0, np.pi - 1e-4, np.pi - 1e-9):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        phi = c.rotation_vector(axis_angle_matrix(axis, np.array(angle)))
        np.testing.assert_allclose(phi, angle * axis, atol=1e-6)


def test_the_pose_error_is_clipped_to_its_bounds_in_its_own_direction():
    R = axis_angle_matrix(np.array([0.0, 0.0, 1.0]), np.array(1.2))
    e = c.pose_error(np.eye(3), np.zeros(3), R, np.array([3.0, 4.0, 0.0]), 0.1, 0.5)
    np.testing.assert_allclose(e, [0.06, 0.08, 0.0, 0.0, 0.0, 0.5], atol=1e-12)


def test_double_diagonalisation_gives_every_mode_the_damping_ratio():
    """The eigenvalues s of Λ ë + D ė + K e = 0 have −Re s / |s| = ζ and |s| = ω."""
    rng = np.random.default_rng(2)
    for zeta in (0.3, 0.7, 1.0):
        Lambda = random_spd(rng, [0.01, 0.1, 0.5, 3.0, 5.0, 9.0])
        K = random_spd(rng, [2.0, 5.0, 30.0, 200.0, 500.0, 800.0])
        D, omega = c.modal_damping(Lambda, K, zeta)
        A = np.block([[np.zeros((6, 6)), np.eye(6)],
                      [-np.linalg.solve(Lambda, K), -np.linalg.solve(Lambda, D)]])
        s = np.linalg.eigvals(A)
        np.testing.assert_allclose(-s.real / np.abs(s), zeta, rtol=1e-6)
        np.testing.assert_allclose(np.sort(np.abs(s)), np.sort(np.repeat(omega, 2)),
                                   rtol=1e-5)        # ζ = 1: a double root, split by rounding


@pytest.mark.parametrize("arm", ["planar_2link", "rd_palletizer"])
def test_a_tip_that_moves_in_fewer_directions_gets_the_damping_ratio_in_those(arm):
    """Λ of a 2-joint arm and of the palletizer's tool (4 motors) has zero inertia where the
    tip cannot go: there D is zero and no mode (ω 0); in the directions it moves in (V_r,
    Λ's nonzero eigenvectors) the eigenvalues s of Λ_r ë + D_r ė + K_r e = 0 have
    −Re s / |s| = ζ and |s| = the nonzero ω. At 20 poses: at some, rounding leaves Λ's zero
    eigenvalues positive and its Cholesky factor finite. A Cartesian impedance target is
    admitted and commands finite torques."""
    if arm == "planar_2link":
        model = rd.load_robot(SHIPPED / "planar_2link.urdf")
        solver, q0 = rd.make_solver(model, "pinocchio"), np.array([0.3, 0.8])
    else:
        from closed_chain_models import shipped_linkage
        from robo_dynamics.backends.closed_chain_backend import ClosedChainSolver
        solver = ClosedChainSolver(shipped_linkage("rd_palletizer"), "tool0")
        model, q0 = solver.model, np.array([0.5, 0.3, -0.3, 0.4])
    K, zeta = np.diag([800.0, 600.0, 700.0, 30.0, 40.0, 50.0]), 0.7
    rng = np.random.default_rng(0)
    for q in [q0] + [q0 + rng.uniform(-0.2, 0.2, model.dof) for _ in range(19)]:
        Lambda = solver.operational_space_inertia(q)
        lam, V = np.linalg.eigh(Lambda)
        moves = lam > 1e-9 * lam[-1]
        assert moves.sum() == model.dof
        D, omega = c.modal_damping(Lambda, K, zeta)
        np.testing.assert_allclose(D @ V[:, ~moves], 0.0, atol=1e-9 * np.abs(D).max())
        assert np.count_nonzero(omega) == model.dof
        V_r = V[:, moves]
        L_r, K_r, D_r = (V_r.T @ X @ V_r for X in (Lambda, K, D))
        A = np.block([[np.zeros_like(L_r), np.eye(len(L_r))],
                      [-np.linalg.solve(L_r, K_r), -np.linalg.solve(L_r, D_r)]])
        s = np.linalg.eigvals(A)
        np.testing.assert_allclose(-s.real / np.abs(s), zeta, rtol=1e-6)
        np.testing.assert_allclose(np.sort(np.abs(s)), np.sort(np.repeat(omega[omega > 0], 2)),
                                   rtol=1e-6)
    ctrl = started(solver, q0)
    R, p = solver.tip_pose(q0)
    event = ctrl.desire(target(c.CARTESIAN_IMPEDANCE, R, p + 0.01, K, zeta, n=model.dof), DT)
    assert event.kind == "tracking", event.message
    command = ctrl.step(list(model.joint_names), q0.tolist(), [0.1] * model.dof, [],
                        2 * DT).command
    assert command is not None and np.isfinite(command).all()


def started(solver, q):
    """A Controller of `solver` that has had two joint states at q (its period known)."""
    model = solver.model
    names, n = list(model.joint_names), model.dof
    ctrl = Controller(solver, JointStateMerger(names, names), Settings(
        kp=np.full(n, 100.0), kd=np.full(n, 20.0), effort_bound=model.effort_limit,
        max_torque_rate=np.full(n, 1e9), start_tolerance=np.full(n, 1.0),
        max_tracking_error=np.full(n, 1.0), velocity_bound=np.full(n, np.inf),
        hold_damping=None, stale_timeout=1.0))
    for t in (0.0, DT):
        ctrl.step(names, list(q), [0.0] * n, [], t)
    return ctrl


def test_a_target_whose_tip_dynamics_cannot_be_computed_is_refused_with_the_reason(
        monkeypatch):
    """A solver failing at the pose (LinAlgError from Λ, as a singular factor gives): the
    target is refused saying so and nothing changes; no exception reaches the caller (the
    node's topic callback)."""
    q, solver = np.array(POSES["ordinary"]), rd.make_solver(ROBOT, "pinocchio")
    ctrl = started(solver, q)
    R, p = solver.tip_pose(q)

    def failing(*_):
        raise np.linalg.LinAlgError("Array must not contain infs or NaNs")
    monkeypatch.setattr(solver, "_mass_matrix_inverse", failing)    # what Λ reads
    event = ctrl.desire(target(c.CARTESIAN_IMPEDANCE, R, p, np.diag([300.0] * 6)), DT)
    assert event.kind == "refused" and "cannot be computed" in event.message, event.message
    assert ctrl.mode == "gravity" and ctrl.motion is None


def sampled_loop(omega, zeta, T, steps=4000):
    """|x| after `steps` of ẍ = u, u held over each period, computed one period late."""
    x, v, u_next = 1.0, 0.0, 0.0
    for _ in range(steps):
        u = u_next
        u_next = -omega ** 2 * x - 2.0 * zeta * omega * v
        x, v = x + T * v + 0.5 * T * T * u, v + T * u
        if abs(x) > 1e6:
            break
    return abs(x)


def test_the_sampled_loop_radius_says_whether_the_iterated_loop_grows():
    for omega, zeta, T in ((100.0, 1.0, 2e-3), (300.0, 1.0, 2e-3), (600.0, 0.3, 1e-3),
                           (150.0, 0.3, 1e-3), (10.0, 1.0, 1e-3)):
        radius = c.sampled_loop_radius(omega, zeta, T)
        assert (sampled_loop(omega, zeta, T) > 1.0) == (radius > 1.0), (omega, zeta, T)
    # slow modes: the continuous loop's decay e^{−ζωT} per period
    assert c.sampled_loop_radius(10.0, 1.0, 1e-3) == pytest.approx(np.exp(-0.01), rel=2e-3)


@pytest.mark.parametrize("law", c.LAWS)
def test_each_law_gives_the_tip_the_acceleration_it_promises(law):
    """Pinocchio's forward dynamics of the law's torque: impedance Λ(ẍ − J̇q̇) = F,
    operational space ẍ = K e − D ẋ + Λ⁻¹ F_ff (no external force)."""
    rng = np.random.default_rng(3)
    q, qd = np.array(POSES["ordinary"]), rng.uniform(-0.5, 0.5, N)
    R, p = REF.tip_pose(q)
    R_d = R @ axis_angle_matrix(np.array([0.0, 1.0, 0.0]), np.array(0.2))
    K = np.diag([400.0, 300.0, 500.0, 3.0, 4.0, 5.0] if law == c.CARTESIAN_IMPEDANCE
                else [25.0, 36.0, 49.0, 16.0, 9.0, 4.0])
    wrench = np.array([1.0, -2.0, 3.0, 0.1, 0.2, -0.1])
    goal = target(law, R_d, p + [0.03, -0.02, 0.04], K, 0.7, wrench)
    tau = goal.torque(rd.make_solver(ROBOT, "rnea"), q, qd)
    J, Jdot_qd = REF.jacobian(q), REF.jacobian_dot_qd(q, qd)
    xdd = J @ REF.forward_dynamics(q, qd, tau) + Jdot_qd
    Lambda = REF.operational_space_inertia(q)
    e = c.pose_error(R, p, R_d, p + [0.03, -0.02, 0.04], 0.1, 0.5)
    D, _ = goal.modes(Lambda)
    if law == c.CARTESIAN_IMPEDANCE:
        np.testing.assert_allclose(Lambda @ (xdd - Jdot_qd), K @ e - D @ (J @ qd) + wrench,
                                   rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_allclose(xdd, K @ e - D @ (J @ qd) + np.linalg.solve(Lambda, wrench),
                                   rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(np.diag(D), 2 * 0.7 * np.sqrt(np.diag(K)), rtol=1e-12)


def test_a_far_target_pulls_as_one_at_the_clipped_distance():
    q = np.array(POSES["ordinary"])
    R, p = REF.tip_pose(q)
    u = np.array([2.0, -1.0, 2.0]) / 3.0
    K = np.diag([500.0] * 3 + [5.0] * 3)
    far = target(c.CARTESIAN_IMPEDANCE, R, p + 1.0 * u, K).torque(REF, q, np.zeros(N))
    near = target(c.CARTESIAN_IMPEDANCE, R, p + 0.1 * u, K).torque(REF, q, np.zeros(N))
    np.testing.assert_allclose(far, near, rtol=1e-12, atol=1e-9)
    assert np.linalg.norm(far - REF.gravity(q)) > 1.0       # it does pull


def test_the_nullspace_torque_gives_the_tip_no_acceleration():
    """Panda (7 joints): the posture pull changes the torque but not the tip's acceleration
    (J M⁻¹ Δτ = 0, Pinocchio's M and J), and stays within its cap."""
    panda = load_arm("panda")
    ref, n = rd.make_solver(panda, "pinocchio"), panda.dof
    q = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
    R, p = ref.tip_pose(q)
    K = np.diag([500.0] * 3 + [20.0] * 3)
    posture = q + np.array([0.3, -0.2, 0.4, 0.2, -0.3, 0.2, 0.1])
    plain = target(c.CARTESIAN_IMPEDANCE, R, p, K, n=n).torque(ref, q, np.zeros(n))
    pulled = target(c.CARTESIAN_IMPEDANCE, R, p, K, posture=posture, n=n, null_max=2.0)
    delta = pulled.torque(ref, q, np.zeros(n)) - plain
    assert 0.5 < np.max(np.abs(delta)) <= 2.0 + 1e-12
    J, M = ref.jacobian(q), ref.mass_matrix(q)
    np.testing.assert_allclose(J @ np.linalg.solve(M, delta), 0.0, atol=1e-9)


# -- closed loop on MuJoCo -----------------------------------------------------------------
class Loop:
    """The controller closing the loop on MuJoCo's model of `robot` (default the UR5e; 1 kHz,
    RK4), settled at q0 by a joint set-point first."""

    def __init__(self, q0, robot=ROBOT):
        n, names = robot.dof, list(robot.joint_names)
        self.robot, self.names = robot, names
        self.ref = REF if robot is ROBOT else rd.make_solver(robot, "pinocchio")
        settings = Settings(
            kp=np.full(n, 400.0), kd=np.full(n, 40.0), effort_bound=robot.effort_limit,
            max_torque_rate=np.full(n, 1000.0), start_tolerance=np.full(n, 0.01),
            max_tracking_error=np.full(n, 0.25),
            velocity_bound=velocity_bounds(robot.velocity_limit),
            hold_damping=None, stale_timeout=0.1)
        self.ctrl = Controller(rd.make_solver(robot, "pinocchio"),
                               JointStateMerger(names, names), settings)
        self.arm = SimulatedArm(MujocoPlant(robot, "rk4", DT), q0, command_timeout=1.0,
                                brakes=True)
        self.t = 0.0
        self.run(0.01)
        assert self.ctrl.desire(SetPoint(q0, np.zeros(n)), self.t).kind == "tracking"
        self.run(1.0)

    def run(self, seconds, each=None):
        for _ in range(int(round(seconds / DT))):
            cycle = self.ctrl.step(self.names, self.arm.q.tolist(), self.arm.v.tolist(), [],
                                   self.t)
            if cycle.command is not None:
                self.arm.set_command(cycle.command)
            self.arm.step()
            self.t += DT
            if each is not None:
                each()

    def tip(self):
        return self.ref.tip_pose(self.arm.q)


@pytest.mark.parametrize("pose", sorted(POSES))
def test_a_tip_force_displaces_the_tip_by_the_compliance(pose):
    loop = Loop(np.array(POSES[pose]))
    R0, p0 = loop.tip()
    K = np.diag([500.0, 400.0, 600.0, 5.0, 5.0, 5.0])
    event = loop.ctrl.desire(target(c.CARTESIAN_IMPEDANCE, R0, p0, K), loop.t)
    assert event.kind == "tracking", event.message
    F = np.array([8.0, -6.0, 5.0])                       # N, base axes, at the tip's origin
    loop.arm.set_external_wrench(ROBOT.tip_link, R0.T @ F, np.zeros(3))
    loop.run(8.0)
    assert loop.ctrl.mode == c.CARTESIAN_IMPEDANCE, loop.ctrl.last_event
    R, p = loop.tip()
    expected = F / np.diag(K)[:3]                      # K⁻¹ F: 1.6, −1.5, 0.8 cm
    np.testing.assert_allclose(p - p0, expected, rtol=0.05)
    assert np.linalg.norm(c.rotation_vector(R @ R0.T)) < 0.01   # a force: no rotation


def modal_zeta(z):
    """ζ from a free response's first two extrema (half a period apart, the torque's ramp at
    the start over): |x₂ / x₁| = exp(−πζ/√(1−ζ²))."""
    turns = [k for k in range(1, len(z) - 1) if (z[k] - z[k - 1]) * (z[k + 1] - z[k]) < 0]
    first, second = z[turns[0]], z[turns[1]]
    assert np.sign(first) != np.sign(second)
    r = np.log(abs(second / first))
    return -r / np.sqrt(np.pi ** 2 + r ** 2)


@pytest.mark.parametrize("axis", ["largest", "smallest"])
def test_a_5_cm_step_has_the_commanded_damping_ratio(axis):
    """Along the eigenvector of Λ's translational block with the largest or smallest
    eigenvalue; the response of the mode it excites most (modal coordinates Q e, with
    Λ = QᵀQ, K = Qᵀ diag(ω²) Q at the start) has ζ within 10 %."""
    q0 = np.array(POSES["elbow up"])
    loop = Loop(q0)
    R0, p0 = loop.tip()
    Lambda = REF.operational_space_inertia(loop.arm.q)
    values, vectors = np.linalg.eigh(Lambda[:3, :3])
    d = vectors[:, -1 if axis == "largest" else 0]
    K, zeta = np.diag([200.0] * 3 + [2.0] * 3), 0.3
    p_d = p0 + 0.05 * d
    assert loop.ctrl.desire(target(c.CARTESIAN_IMPEDANCE, R0, p_d, K, zeta),
                            loop.t).kind == "tracking"
    errors = []
    loop.run(3.0, each=lambda: errors.append(c.pose_error(*loop.tip(), R0, p_d, 1.0, 1.0)))
    assert loop.ctrl.mode == c.CARTESIAN_IMPEDANCE, loop.ctrl.last_event
    lam, U = np.linalg.eigh(Lambda)
    inverse_root = (U / np.sqrt(lam)) @ U.T
    _, V = np.linalg.eigh(inverse_root @ K @ inverse_root)
    z = np.array(errors) @ (V.T @ ((U * np.sqrt(lam)) @ U.T)).T
    dominant = int(np.argmax(np.abs(z[0])))
    assert modal_zeta(z[:, dominant]) == pytest.approx(zeta, rel=0.10)


def test_a_stiffness_the_control_period_cannot_hold_is_refused_and_nothing_changes():
    loop = Loop(np.array(POSES["elbow up"]))
    R0, p0 = loop.tip()
    stiff = target(c.CARTESIAN_IMPEDANCE, R0, p0, np.diag([500.0] * 3 + [60.0] * 3), 0.3)
    event = loop.ctrl.desire(stiff, loop.t)
    assert event.kind == "refused" and "too high for the control period 1 ms" in event.message
    assert loop.ctrl.mode == "tracking" and isinstance(loop.ctrl.motion, SetPoint)


@pytest.mark.parametrize("pulled", [True, False], ids=["posture", "no posture"])
def test_the_nullspace_posture_holds_the_elbow_while_the_tip_is_pushed(pulled):
    """Panda (7 joints) on MuJoCo, the tip held and pushed with F. The tip gives way by K⁻¹F
    either way. With the posture q_n (where it started) the pull's torque at rest lies in
    range(Jᵀ) (N τ_0 = 0), so q − q_n has no self-motion part to first order: the elbow's
    swivel nᵀ(q − q_n) (n spans J's null space) stays near zero and returns after the push.
    Without a posture nothing acts on the swivel: the push leaves it turned."""
    panda = load_arm("panda")
    q_n = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
    loop = Loop(q_n, panda)
    R0, p0 = loop.tip()
    K = np.diag([500.0] * 3 + [20.0] * 3)
    held = target(c.CARTESIAN_IMPEDANCE, R0, p0, K, posture=q_n if pulled else None,
                  n=panda.dof)
    assert loop.ctrl.desire(held, loop.t).kind == "tracking"
    n = np.linalg.svd(loop.ref.jacobian(q_n))[2][-1]            # the swivel direction
    swivel = []
    F = np.array([10.0, -8.0, 6.0])                             # N, base axes
    loop.arm.set_external_wrench(panda.tip_link, R0.T @ F, np.zeros(3))
    loop.run(4.0, each=lambda: swivel.append(n @ (loop.arm.q - q_n)))
    np.testing.assert_allclose(loop.tip()[1] - p0, F / np.diag(K)[:3], rtol=0.05)
    loop.arm.set_external_wrench(panda.tip_link, np.zeros(3), np.zeros(3))
    loop.run(4.0)
    assert loop.ctrl.mode == c.CARTESIAN_IMPEDANCE, loop.ctrl.last_event
    assert np.linalg.norm(loop.tip()[1] - p0) < 1e-4
    after = abs(n @ (loop.arm.q - q_n))
    if pulled:      # |q − q_n| is 0.1 rad at the end of the push
        assert max(np.abs(swivel)) < 0.01 and abs(swivel[-1]) < 2e-3 and after < 1e-4
    else:
        assert after > 0.02


@pytest.mark.parametrize("axis", [0, 1, 2], ids=["x", "y", "z"])
def test_operational_space_moves_each_axis_as_its_own_mass_spring_damper(axis):
    """K = 100/s², ζ = 0.3 per unit inertia: a 2 cm step along one base axis follows
    ë + 2ζω ė + ω² e = 0 (ω = 10 rad/s) whatever Λ is — the damping ratio from the first two
    extrema, the damped frequency ω√(1 − ζ²) from their spacing — and the other axes hardly
    move (Λ decouples them)."""
    loop = Loop(np.array(POSES["elbow up"]))
    R0, p0 = loop.tip()
    zeta, omega = 0.3, 10.0
    p_d = p0 + 0.02 * np.eye(3)[axis]
    held = target(c.OPERATIONAL_SPACE, R0, p_d, np.diag([omega ** 2] * 6), zeta)
    assert loop.ctrl.desire(held, loop.t).kind == "tracking"
    errors = []
    loop.run(2.0, each=lambda: errors.append(c.pose_error(*loop.tip(), R0, p_d, 1.0, 1.0)))
    assert loop.ctrl.mode == c.OPERATIONAL_SPACE, loop.ctrl.last_event
    e = np.array(errors)
    z = e[:, axis]
    turns = [k for k in range(1, len(z) - 1) if (z[k] - z[k - 1]) * (z[k + 1] - z[k]) < 0]
    assert modal_zeta(z) == pytest.approx(zeta, rel=0.05)
    assert np.pi / ((turns[1] - turns[0]) * DT) == pytest.approx(
        omega * np.sqrt(1.0 - zeta ** 2), rel=0.03)
    assert np.abs(np.delete(e[:, :3], axis, axis=1)).max() < 0.03 * 0.02
    assert np.abs(e[:, 3:]).max() < 0.005


def test_switching_to_a_cartesian_law_is_a_ramp():
    """From tracking a set-point to a far Cartesian target (the clipped pull, 0.1 m at
    3000 N/m): each command differs from the last by at most max_torque_rate × period, and
    the commands reach the law's torque once the ramp has had time to."""
    loop = Loop(np.array(POSES["elbow up"]))
    R0, p0 = loop.tip()
    q, qd = loop.arm.q.copy(), np.zeros(N)
    far = target(c.CARTESIAN_IMPEDANCE, R0, p0 + np.array([0.3, 0.0, 0.0]),
                 np.diag([3000.0] * 3 + [2.0] * 3))
    ctrl, rate = loop.ctrl, loop.ctrl.settings.max_torque_rate
    commands = [ctrl.step(NAMES, q.tolist(), qd.tolist(), [], loop.t).command]
    assert ctrl.desire(far, loop.t).kind == "tracking"
    far.begin(ctrl.solver, q, loop.t - 100.0, ctrl.settings)   # its way run
    law = far.torque(ctrl.solver, q, qd)
    jump = np.abs(law - commands[0]).max()
    assert jump > 20.0                                       # N·m: a step if not ramped
    for k in range(1, 200):                                  # the arm held still
        commands.append(ctrl.step(NAMES, q.tolist(), qd.tolist(), [], loop.t + k * DT).command)
    steps = np.abs(np.diff(commands, axis=0))
    assert np.all(steps <= rate * DT + 1e-9)
    assert steps.max() == pytest.approx(rate[0] * DT)        # it was ramping
    np.testing.assert_allclose(commands[-1], np.clip(law, -ROBOT.effort_limit,
                                                     ROBOT.effort_limit), atol=1e-9)


def test_the_rate_limit_keeps_the_direction_of_an_operational_space_step():
    """Panda, operational space (K = 100/s², ζ = 0.3), a 2 cm step along base x: the rate
    limit binds at the step's start (7 commands), and scaling the change as a whole keeps
    the wrench's direction: the hand turns at most 0.3 mrad (0.09 measured; clipped per
    joint it turned 2.2 mrad) and leaves the x axis by less than 0.01 mm."""
    panda = load_arm("panda")
    q0 = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
    loop = Loop(q0, robot=panda)
    R0, p0 = loop.tip()
    step = target(c.OPERATIONAL_SPACE, R0, p0 + np.array([0.02, 0.0, 0.0]),
                  np.diag([100.0] * 6), zeta=0.3, n=panda.dof)
    assert loop.ctrl.desire(step, loop.t).kind == "tracking"
    step.begin(loop.ctrl.solver, loop.arm.q, loop.t - 100.0,      # a step: its way run
               loop.ctrl.settings)
    before = loop.ctrl.counts["rate_limited"]
    worst = {"turn": 0.0, "off axis": 0.0}

    def look():
        R, p = loop.tip()
        worst["turn"] = max(worst["turn"], np.linalg.norm(c.rotation_vector(R @ R0.T)))
        worst["off axis"] = max(worst["off axis"], np.linalg.norm((p - p0)[1:]))
    loop.run(1.5, look)
    assert loop.ctrl.counts["rate_limited"] - before >= 5         # the limit did bind (7)
    assert worst["turn"] < 3e-4 and worst["off axis"] < 1e-5, worst
    assert abs(loop.tip()[1][0] - p0[0] - 0.02) < 5e-4

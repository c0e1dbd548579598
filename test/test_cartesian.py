"""Cartesian impedance and operational-space control in the controller core, without ROS:
the laws against Pinocchio's forward dynamics (the tip accelerates as the law says), the
damping from double diagonalisation against the closed loop's eigenvalues, the sampled-loop
stability check against the loop iterated, and closed-loop on the MuJoCo plant of the UR5e:
a tip force displaces the tip by K⁻¹F, a 5 cm step has the commanded damping ratio."""

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.control import cartesian as c
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.limits import velocity_bounds
from robo_dynamics.control.settings import Settings, default_hold_damping
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
    """The controller closing the loop on MuJoCo's UR5e (1 kHz, RK4), settled at q0 by a
    joint set-point first."""

    def __init__(self, q0):
        settings = Settings(
            kp=np.full(N, 400.0), kd=np.full(N, 40.0), effort_bound=ROBOT.effort_limit,
            max_torque_rate=np.full(N, 1000.0), start_tolerance=np.full(N, 0.01),
            max_tracking_error=np.full(N, 0.25),
            velocity_bound=velocity_bounds(ROBOT.velocity_limit),
            hold_damping=default_hold_damping(REF), stale_timeout=0.1)
        self.ctrl = Controller(rd.make_solver(ROBOT, "pinocchio"),
                               JointStateMerger(NAMES, NAMES), settings)
        self.arm = SimulatedArm(MujocoPlant(ROBOT, "rk4", DT), q0, command_timeout=1.0,
                                brakes=True)
        self.t = 0.0
        self.run(0.01)
        assert self.ctrl.desire(SetPoint(q0, np.zeros(N)), self.t).kind == "tracking"
        self.run(1.0)

    def run(self, seconds, each=None):
        for _ in range(int(round(seconds / DT))):
            cycle = self.ctrl.step(NAMES, self.arm.q.tolist(), self.arm.v.tolist(), [], self.t)
            if cycle.command is not None:
                self.arm.set_command(cycle.command)
            self.arm.step()
            self.t += DT
            if each is not None:
                each()

    def tip(self):
        return REF.tip_pose(self.arm.q)


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

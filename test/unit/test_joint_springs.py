"""Joint springs and dampers from an SDF model (<axis><dynamics>: spring_stiffness,
spring_reference, damping) in a closed mechanism's dynamics. References: a pendulum's
closed form (its equation of motion, its small-oscillation frequency), and Cassie's legs
(cassie_v2.sdf, example-robot-data: springs at the knees and the heels) in MuJoCo with the
stiffness read from the file here, its constrained accelerations solved from MuJoCo's own
mass matrix, forces and loop Jacobian."""

import math
import pathlib
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from closed_chain_models import planar_four_bar_sdf
from palletizer import PARAMETERS as PALLETIZER_PARAMETERS, URDF as PALLETIZER
from palletizer import closed, holding_torque
from robo_dynamics.closed_chain import load_closed_chain, load_sdf
from robo_dynamics.errors import ArgumentError, URDFError
from robo_dynamics.simulation.constrained.dae import BDF, residual
from robo_dynamics.simulation.constrained.integrators import ReducedBDF, dormand_prince
from robo_dynamics.simulation.constrained.system_jacobian import system_jacobian

mujoco = pytest.importorskip("mujoco")

# the pendulum: a link of mass M whose centre is L from a hinge about y, gravity along −z
M, L, I_YY, G = 2.0, 0.3, 0.01, 9.81       # kg, m, kg·m² about the centre, m/s²
K, Q0, D = 40.0, 0.4, 0.8                  # N·m/rad, rad, N·m·s/rad


def pendulum_sdf(inward=False, stiffness=K, reference=Q0, damping=D):
    """The pendulum as SDF, its hinge limited to [−0.1, 0.5] rad; inward: the hinge written
    from the link to the ground (met from its child: its angle is the ground's turn seen
    from the link, minus the link's, so reference −Q0 and the same axis describe the same
    spring)."""
    parent, child = ("arm", "ground") if inward else ("ground", "arm")
    reference = -reference if inward else reference
    return (f'<sdf version="1.9"><model name="pendulum">'
            '<joint name="anchor" type="fixed"><parent>world</parent><child>ground</child>'
            '</joint><link name="ground"/>'
            f'<link name="arm"><inertial><pose>{L} 0 0 0 0 0</pose><mass>{M}</mass><inertia>'
            f'<ixx>{I_YY}</ixx><iyy>{I_YY}</iyy><izz>{I_YY}</izz></inertia></inertial></link>'
            f'<joint name="hinge" type="revolute"><parent>{parent}</parent><child>{child}'
            f'</child><pose relative_to="ground"/><axis><xyz>0 1 0</xyz><limit><lower>-0.1</lower>'
            '<upper>0.5</upper></limit><dynamics>'
            f'<damping>{damping}</damping><spring_stiffness>{stiffness}</spring_stiffness>'
            f'<spring_reference>{reference}</spring_reference></dynamics></axis></joint>'
            '</model></sdf>')


def pendulum_acceleration(q, qd, tau=0.0):
    """q̈ of the link turned q about +y (its centre at (L cos q, 0, −L sin q)): gravity's
    moment M g L cos q, the spring's −K (q − Q0), the damper's −D q̇, a motor's τ."""
    return (tau + M * G * L * math.cos(q) - K * (q - Q0) - D * qd) / (I_YY + M * L ** 2)


def link_angle(chain, q):
    """The link's angle about +y [rad] from the chain's pose: where its centre is."""
    _, p, _ = chain.compiled.frame("arm", (L, 0.0, 0.0))(q)
    return math.atan2(-p[2], p[0])


@pytest.mark.parametrize("inward", [False, True], ids=["from the ground", "from the link"])
def test_a_spring_and_damper_on_a_hinge_give_the_pendulums_closed_form(inward):
    chain = load_sdf(pendulum_sdf(inward), actuated_joints=["hinge"])
    # the joint's own angle is the coordinate, its limits as written
    assert (chain.tree.lower[0], chain.tree.upper[0]) == (-0.1, 0.5)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, qd, tau = rng.uniform(-2.0, 2.0), rng.uniform(-3.0, 3.0), rng.uniform(-5.0, 5.0)
        sign = 1.0 if abs(link_angle(chain, np.array([q])) - q) < 1e-9 else -1.0
        assert abs(link_angle(chain, np.array([q])) - sign * q) < 1e-9
        expected = pendulum_acceleration(sign * q, sign * qd, sign * tau)
        qdd, _ = chain.forward_dynamics(np.array([q]), np.array([qd]), np.array([tau]))
        assert abs(sign * qdd[0] - expected) < 1e-9 * max(1.0, abs(expected)), (q, qdd)
        torque, _ = chain.inverse_dynamics(np.array([q]), np.array([qd]),
                                           np.array([sign * expected]))
        assert abs(torque[0] - tau) < 1e-9 * max(1.0, abs(tau)), (q, torque, tau)


def test_it_oscillates_about_its_static_deflection_at_the_closed_form_frequency():
    """Undamped, released 1 mrad from the rest angle q* (K (q* − Q0) = M g L cos q*, found
    by bisection): half a period of ω = √((K + M g L sin q*) / (I + M L²)) later it is
    1 mrad on the other side, at rest (Dormand–Prince on the reduced equations)."""
    chain = load_sdf(pendulum_sdf(damping=0.0), actuated_joints=["hinge"])
    low, high = Q0, Q0 + M * G * L / K                 # the rest angle lies between
    for _ in range(100):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if K * (middle - Q0) < M * G * L * math.cos(middle) \
            else (low, middle)
    rest = 0.5 * (low + high)
    omega = math.sqrt((K + M * G * L * math.sin(rest)) / (I_YY + M * L ** 2))
    amplitude = 1e-3
    q, qd, _ = dormand_prince(chain, np.array([rest + amplitude]), np.zeros(1),
                              math.pi / omega, tolerance=1e-12)
    assert abs(q[0] - (rest - amplitude)) < 1e-3 * amplitude, (q, rest)
    assert abs(qd[0]) < 1e-3 * amplitude * omega


def sprung_four_bar(stiffness):
    """The planar four-bar with a spring (`stiffness`, reference 0.3 rad) and a damper
    (0.05 N·m·s/rad) on its coupler's joint, a passive one."""
    text = planar_four_bar_sdf().replace(
        '<joint name="coupler_joint" type="revolute"><parent>crank</parent>'
        '<child>coupler</child><axis><xyz>0 -1 0</xyz>',
        '<joint name="coupler_joint" type="revolute"><parent>crank</parent>'
        '<child>coupler</child><axis><xyz>0 -1 0</xyz><dynamics><damping>0.05</damping>'
        f'<spring_stiffness>{stiffness}</spring_stiffness>'
        '<spring_reference>0.3</spring_reference></dynamics>')
    return load_sdf(text, actuated_joints=["crank_joint"])


def test_the_system_jacobian_of_a_sprung_damped_four_bar_equals_central_differences():
    """Eq. 27's ∂G/∂Y with the spring's K and the damper's D (system_jacobian.py)."""
    chain = sprung_four_bar(20.0)
    q = chain.close(np.array([0.8, 0.0, 0.0]), chain.reference)
    w = chain.velocities(q, [1.3])
    qdd, lam = chain.forward_dynamics(q, w)
    Y, Yp = np.concatenate((w, q)), np.concatenate((qdd, w))
    dG_dY, _ = system_jacobian(chain, q, w, qdd, lam)
    assert np.abs(residual(chain, Y, Yp, lam)).max() < 1e-9          # a solution of eq. 27
    step = 1e-6
    differences = np.array([(residual(chain, Y + step * e, Yp, lam)
                             - residual(chain, Y - step * e, Yp, lam)) / (2 * step)
                            for e in np.eye(len(Y))]).T
    assert np.abs(dG_dY - differences).max() < 1e-7 * np.abs(differences).max()


def test_the_dae_with_its_system_jacobian_moves_a_sprung_damped_four_bar_as_runge_kutta():
    """The four-bar with a spring and a damper on its coupler's joint (passive), falling:
    eq. 27 by BDF (its system Jacobian with K and D) and the reduced equations by BDF agree
    with Dormand–Prince to 1e-6 rad after 0.1 s; without the spring it moves elsewhere."""
    sprung = sprung_four_bar
    chain = sprung(20.0)
    assert chain.springs is not None and chain.springs.stiffness.tolist() == [0.0, 20.0, 0.0]
    q0 = chain.close(np.array([0.2, 0.0, 0.0]), chain.reference)
    q, _, _ = dormand_prince(chain, q0, np.zeros(3), 0.1, tolerance=1e-11)
    for run in (BDF(chain, q0, np.zeros(3), tolerance=5e-11),
                ReducedBDF(chain, q0, np.zeros(3), tolerance=5e-11)):
        np.testing.assert_allclose(run.advance(0.1)[0], q, atol=1e-6)
    unsprung, _, _ = dormand_prince(sprung(0.0), q0, np.zeros(3), 0.1, tolerance=1e-11)
    assert np.abs(unsprung - q).max() > 1e-2


CASSIE = (pathlib.Path(mujoco.__file__).parents[1] / "cmeel.prefix" / "share" /
          "example-robot-data" / "robots" / "cassie_description" / "robots" / "cassie_v2.sdf")
SHIFT = 0.1     # rad: added to every spring_reference, so that the springs act as drawn


def sdf_springs(text):
    """{joint: (stiffness, reference)} of the joints with a spring, read from the file."""
    springs = {}
    for joint in ET.fromstring(text).iter("joint"):
        k = joint.find("axis/dynamics/spring_stiffness")
        if k is not None and float(k.text) > 0.0:
            springs[joint.get("name")] = (
                float(k.text), float(joint.find("axis/dynamics/spring_reference").text))
    return springs


def mujoco_acceleration(sim, q, tau, springs):
    """q̈ (n,) of the rigid loops at rest at q from MuJoCo's own M, gravity, passive forces
    (the springs set here from the file) and equality-constraint Jacobian: the KKT system
    [[M, Jᵀ], [J, 0]] [q̈; λ] = [τ + passive − bias; 0] (J̇ q̇ = 0 at rest)."""
    from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain
    assert isinstance(sim, MujocoClosedChain)
    model, data = sim.mj, sim.data
    for name, (stiffness, reference) in springs.items():
        joint = model.joint(name)
        model.jnt_stiffness[joint.id] = stiffness
        model.qpos_spring[joint.qposadr[0]] = reference
    sim.set_state(q, np.zeros_like(q))
    data.qfrc_applied[:] = 0.0
    data.qfrc_applied[sim.actuated] = tau
    mujoco.mj_forward(model, data)
    nv = model.nv
    mass = np.zeros((nv, nv))
    mujoco.mj_fullM(model, data, mass)
    J = np.array(data.efc_J[:data.nefc * nv]).reshape(data.nefc, nv)
    kkt = np.block([[mass, J.T], [J, np.zeros((data.nefc, data.nefc))]])
    rhs = np.concatenate((data.qfrc_applied + data.qfrc_passive - data.qfrc_bias,
                          np.zeros(data.nefc)))
    return np.linalg.lstsq(kkt, rhs, rcond=None)[0][:nv][sim.dof]


def test_cassies_knee_and_heel_springs_act_as_in_mujoco():
    """Cassie's two legs (pelvis fixed), their four springs (1500 and 1250 N·m/rad) at
    their references + 0.1 rad: the constrained accelerations under random motor torques,
    at the drawn pose and at poses the loops close around it, equal MuJoCo's to 1e-9 of
    their size (1e-11 measured); without the springs they are off by far more."""
    from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain
    text = CASSIE.read_text()
    springs = sdf_springs(text)
    assert sorted(k for k, _ in springs.values()) == [1250.0, 1250.0, 1500.0, 1500.0]
    for name, (_, reference) in springs.items():
        text = text.replace(f"<spring_reference>{reference:g}</spring_reference>",
                            f"<spring_reference>{reference + SHIFT:g}</spring_reference>")
    shifted = {name: (k, reference + SHIFT) for name, (k, reference) in springs.items()}
    motors = [f"{side}-{joint}" for side in ("left", "right")
              for joint in ("roll-op", "yaw-op", "pitch-op", "knee-op", "tarsus-crank-joint")]
    chain = load_sdf(text, actuated_joints=motors)
    for name, (k, reference) in shifted.items():
        index = chain.tree.joint_index(name)
        assert (chain.springs.stiffness[index], chain.springs.reference[index]) == (k, reference)
    sim = MujocoClosedChain(chain, time_step=1e-4)
    unsprung = MujocoClosedChain(load_sdf(CASSIE.read_text().replace(
        "spring_stiffness", "spring_unused"), actuated_joints=motors))
    rng = np.random.default_rng(8)
    v = chain.partition.v
    for step in (0.0, 0.01, -0.01):
        q = chain.close_from(chain.reference, chain.reference[list(v)] + step)
        tau = rng.uniform(-20.0, 20.0, len(motors))
        qdd, _ = chain.forward_dynamics(q, np.zeros(chain.tree.dof), tau)
        reference = mujoco_acceleration(sim, q, tau, shifted)
        scale = np.abs(reference).max()
        assert np.abs(qdd - reference).max() < 1e-9 * scale, (step, qdd, reference)
        without = mujoco_acceleration(unsprung, q, tau, {})
        assert np.abs(without - reference).max() > 0.1 * scale


@pytest.mark.parametrize("tag, value", [("spring_stiffness", "-5"), ("damping", "-1")])
def test_a_negative_stiffness_or_damping_is_refused_by_name(tag, value):
    text = pendulum_sdf().replace(f"<{tag}>", f"<{tag}>{value}").replace(
        f"<{tag}>{value}{K if tag == 'spring_stiffness' else D}", f"<{tag}>{value}")
    with pytest.raises(URDFError, match=f"joint 'hinge' <{tag}> {value}: must be ≥ 0"):
        load_sdf(text)


def test_a_joint_friction_is_refused_by_name_and_a_zero_one_is_not():
    text = pendulum_sdf().replace("<dynamics>", "<dynamics><friction>0.3</friction>")
    with pytest.raises(URDFError, match="joint 'hinge' <friction> 0.3: joint friction is not "
                                        "modelled"):
        load_sdf(text)
    load_sdf(pendulum_sdf().replace("<dynamics>", "<dynamics><friction>0</friction>"))


# -- springs beside a URDF: the palletizer with joint_springs in its params -------------------
ROD_K, ROD_REF, ELBOW_D = 80.0, 0.05, 3.0      # N·m/rad, rad, N·m·s/rad


def sprung_palletizer(**fields):
    """The shipped palletizer with a spring on its rod joint and a damper on its elbow (both
    passive) in its params file's joint_springs (`fields` replace them)."""
    section = {"joints": ["rod_joint", "elbow_joint"], "stiffness": [ROD_K, 0.0],
               "reference": [ROD_REF, 0.0], "damping": [0.0, ELBOW_D], **fields}
    return load_closed_chain(PALLETIZER, {**PALLETIZER_PARAMETERS, "joint_springs": section})


def test_a_params_files_springs_on_passive_joints_add_their_virtual_work_to_the_motors():
    """rod = shoulder − rear and elbow = rear − shoulder (the parallelogram): the spring adds
    ∂(½ k (rod − rod₀)²)/∂θ = ±k (rod − rod₀) to the shoulder and the rear motor, the damper
    ∓d (rear − shoulder)˙; at rest the holding torques are the drawing's ∂V/∂θ plus those."""
    chain = sprung_palletizer()
    rng = np.random.default_rng(12)
    for _ in range(5):
        motors = rng.uniform(-0.3, 0.3, 4)
        q = closed(chain, motors)
        names = chain.tree.joint_names
        rod = q[names.index("rod_joint")]
        assert abs(rod - (motors[1] - motors[2])) < 1e-9
        zero = np.zeros(chain.tree.dof)
        tau, _ = chain.inverse_dynamics(q, zero, zero)
        spring = np.array([0.0, ROD_K * (rod - ROD_REF), -ROD_K * (rod - ROD_REF), 0.0])
        expected = holding_torque(motors[1], motors[2]) + spring
        np.testing.assert_allclose(tau, expected, rtol=1e-6, atol=1e-6)
        rates = rng.uniform(-1.0, 1.0, 4)
        qd = chain.velocities(q, rates[[list(chain.partition.v).index(i)
                                        for i in chain.actuated]])
        qd_rates = qd[list(chain.actuated)]
        damped, _ = chain.inverse_dynamics(q, qd, chain.accelerations(q, qd, np.zeros(4)))
        undamped, _ = sprung_palletizer(damping=[0.0, 0.0]).inverse_dynamics(
            q, qd, chain.accelerations(q, qd, np.zeros(4)))
        elbow_rate = qd_rates[2] - qd_rates[1]
        np.testing.assert_allclose(damped - undamped, [0.0, -ELBOW_D * elbow_rate,
                                                       ELBOW_D * elbow_rate, 0.0], atol=1e-9)


@pytest.mark.parametrize("fields, message", [
    ({"joints": ["rod_joint", "nowhere"]}, r"\['nowhere'\] are not movable joints"),
    ({"stiffness": [1.0]}, "joint_springs.stiffness: 2 finite values"),
    ({"damping": [0.0, -1.0]}, r"joint_springs.damping: must be ≥ 0"),
    ({"joints": ["rod_joint", "rod_joint"]}, "a joint named twice")])
def test_a_wrong_joint_springs_entry_is_refused_by_name(fields, message):
    with pytest.raises(ArgumentError, match=message):
        sprung_palletizer(**fields)


def test_the_momentum_observer_sees_no_external_torque_from_the_springs_and_dampers():
    """MuJoCo moves the sprung, damped palletizer under constant motor torques for 0.3 s;
    the momentum observer fed the motor states and torques (its ĝ with the springs, its
    momentum terms with the dampers: MotorSpace) estimates no external torque: within 1 %
    of the torque the spring and the damper exert on the motors; leaving the dampers out
    of the momentum terms would show them as an external torque."""
    from robo_dynamics.closed_chain import MotorSpace
    from robo_dynamics.control.momentum_observer import MomentumObserver
    from robo_dynamics.simulation.mujoco_closed_chain import MujocoClosedChain
    chain = sprung_palletizer()
    motors = MotorSpace(chain)
    plant = MujocoClosedChain(chain, time_step=1e-4)
    actuated = list(chain.actuated)
    q = closed(chain, [0.2, 0.1, -0.1, 0.0])
    plant.set_state(q, np.zeros(chain.tree.dof))
    tau = motors.gravity(q[actuated]) + np.array([0.5, 15.0, -15.0, 0.1])
    observer, largest, passive = MomentumObserver([50.0] * 4), 0.0, 0.0
    for step in range(300):
        q, qd = plant.data.qpos[plant.qpos].copy(), plant.data.qvel[plant.dof].copy()
        theta, theta_dot = q[actuated], qd[actuated]
        p, coriolis_t = motors.momentum_terms(theta, theta_dot)
        r = observer.update(step * 1e-3, p, motors.gravity(theta) - coriolis_t, tau)
        largest = max(largest, np.abs(r).max())
        B = motors.closed(theta)[1]
        passive = max(passive, np.abs(B.T @ chain.springs.torque(q, qd)).max())
        plant.run(1e-3, tau)
    assert passive > 5.0                 # N·m: what the spring and damper exert meanwhile
    assert largest < 0.01 * passive, (largest, passive)

"""Identification of the whole arm (identification/arm_identification.py), without ROS: the base
parameters against Pinocchio's inverse dynamics, the excitation's boundary conditions and
bounds, and the whole procedure against a plant that is not the URDF — MuJoCo built from
the UR5e URDF with every link's mass, centre of mass and inertia perturbed by up to 20 % and
joint friction added, tracked by the controller at 1 kHz, torques with 0.5 N·m of noise:
held-out torques predicted to ≤ 2 % (the URDF: ≥ 10 %), the friction found, and the
parameters it calls identified are where it says, at the rate its uncertainty promises."""

import shlex

import numpy as np
import pytest

import robo_dynamics as rd
from robo_dynamics.identification import arm_identification as ai
from robo_dynamics.identification import consistent_parameters as cp
from robo_dynamics.identification.consistent_parameters import consistent_parameters
from robo_dynamics.control.controller import Controller
from robo_dynamics.control.joint_state_merger import JointStateMerger
from robo_dynamics.control.limits import velocity_bounds
from robo_dynamics.control.settings import Settings
from robo_dynamics.identification.urdf_inertials import corrected_urdf
from robo_dynamics.simulation.mujoco_plant import MujocoPlant
from robo_dynamics.simulation.simulated_arm import SimulatedArm
from bags import as_dict, write_bag
from doc_blocks import block
from robo_dynamics.simulation.perturbed import perturbed_urdf
from conftest import SHIPPED

URDF = SHIPPED / "rd_ur5e.urdf"
ROBOT = rd.load_robot(URDF)
N, NAMES = ROBOT.dof, list(ROBOT.joint_names)
PINOCCHIO = rd.make_solver(ROBOT, "pinocchio")
Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])
FRICTION = np.array([3.0, 3.0, 1.0, 0.03, 0.008, 0.0004])   # the plant's, viscous and Coulomb
NOISE = 0.5                                                  # N·m, the torque sensors
DT = 1e-3
BOUNDS = {"margin": 0.1, "velocity_bound": 0.8 * velocity_bounds(ROBOT.velocity_limit),
          "acceleration_bound": np.full(N, 15.0), "effort_bound": 0.8 * ROBOT.effort_limit}


TRUTH = rd.load_robot(perturbed_urdf(URDF, ROBOT, np.random.default_rng(7)))
BASE = ai.BaseParameters(ROBOT)


def settings_for(model, solver):
    """The controller's settings for `model` (the tests' gains and bounds)."""
    return Settings(
        kp=np.full(N, 400.0), kd=np.full(N, 40.0), effort_bound=model.effort_limit,
        max_torque_rate=np.full(N, 1e4), start_tolerance=np.full(N, 0.05),
        max_tracking_error=np.full(N, 0.3),
        velocity_bound=velocity_bounds(model.velocity_limit),
        hold_damping=None, stale_timeout=0.1)


def closed_loop(model, q0, seconds, excitation=None):
    """The perturbed MuJoCo arm (friction on) under the controller with `model`'s solver,
    from rest at q0, for `seconds` at 1 kHz: tracking `excitation` from 0.1 s (None:
    gravity compensation, the controller's start-up mode). Returns the controller and
    [(q, q̇, τ applied)] per command."""
    solver = rd.make_solver(model, "pinocchio")
    controller = Controller(solver, JointStateMerger(NAMES, NAMES), settings_for(model, solver))
    arm = SimulatedArm(MujocoPlant(TRUTH, "rk4", DT, damping=FRICTION, coulomb=FRICTION), q0,
                       command_timeout=1.0, brakes=True)
    log, t = [], 0.0
    for k in range(int(round(seconds / DT))):
        cycle = controller.step(NAMES, arm.q.tolist(), arm.v.tolist(), [], t)
        if k == 1 and excitation is not None:
            excitation.start = t + 0.1
            assert controller.desire(excitation, t).kind == "tracking"
        if cycle.command is not None:
            arm.set_command(cycle.command)
            log.append((arm.q.copy(), arm.v.copy(), cycle.command))
        arm.step()
        t += DT
    return controller, log


def record(excitation):
    """(q, q̇, q̈, τ applied) of the perturbed MuJoCo arm tracking `excitation` for one
    period through the controller (computed torque on the URDF's model); q̈ by central
    differences of q̇, the first 0.5 s (the ramp) left out."""
    controller, log = closed_loop(ROBOT, Q0, excitation.period + 0.6, excitation)
    assert controller.mode == "tracking", controller.last_event
    q, qd, tau = (np.array(x) for x in zip(*log))
    qdd = np.gradient(qd, DT, axis=0)
    keep = slice(500, -2)
    return q[keep], qd[keep], qdd[keep], tau[keep]


@pytest.fixture(scope="module")
def recordings():
    fit, condition = ai.design_excitation(ROBOT, PINOCCHIO, BASE, Q0, 10.0, 5, candidates=40,
                                          **BOUNDS)
    held_out, _ = ai.design_excitation(ROBOT, PINOCCHIO, BASE, Q0, 10.0, 5, candidates=3,
                                       seed=5, **BOUNDS)
    return record(fit), record(held_out), condition


def test_the_base_parameters_give_pinocchios_torques():
    """τ = W₁ β(π) at random states equals Pinocchio's RNEA of the URDF, and W₁'s columns
    are independent (its condition number is finite), fewer than the 60 of π."""
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-2.0, 2.0, (3, 50, N))
    beta = ai.urdf_base(ROBOT, BASE)
    tau = BASE.regressor(ROBOT, q, qd, qdd) @ beta
    np.testing.assert_allclose(tau, PINOCCHIO.inverse_dynamics_batch(q, qd, qdd), atol=1e-9)
    W = BASE.regressor(ROBOT, q, qd, qdd).reshape(-1, BASE.count)
    assert BASE.count < 10 * N and np.linalg.cond(W / np.linalg.norm(W, axis=0)) < 1e6


def test_a_declared_armature_is_taken_off_before_the_fit(recordings):
    """Torques of the perturbed arm with rotor armature A (Pinocchio's inverse dynamics of
    TRUTH with A as its model.armature, along the recorded states) and 0.5 N·m of noise:
    with A declared in the model, every base parameter lies within 4 of its reported σ of
    TRUTH's, and the held-out torques are predicted to 1 % (pooled); without it, A q̈ is
    blamed on the links: some parameter lies more than 10 σ off."""
    (q, qd, qdd, _), (qv, qdv, qddv, _), _ = recordings
    A = np.array([0.4, 0.4, 0.3, 0.1, 0.1, 0.1])
    plant = rd.make_solver(TRUTH.with_armature(A), "pinocchio")
    noise = np.random.default_rng(2).normal(0.0, NOISE, q.shape)
    tau = plant.inverse_dynamics_batch(q, qd, qdd) + noise
    truth = ai.urdf_base(TRUTH, BASE)
    declared = ai.identify_arm(ROBOT.with_armature(A), BASE, q, qd, qdd, tau)
    assert np.max(np.abs(declared.beta - truth) / declared.beta_std) <= 4.0
    held = plant.inverse_dynamics_batch(qv, qdv, qddv)
    predicted = declared.predict(ROBOT.with_armature(A), qv, qdv, qddv)
    assert np.sqrt(np.sum((predicted - held) ** 2) / np.sum(held ** 2)) <= 0.01
    blind = ai.identify_arm(ROBOT, BASE, q, qd, qdd, tau)
    assert np.max(np.abs(blind.beta - truth) / blind.beta_std) >= 10.0


def test_an_excitation_starts_and_ends_each_period_at_rest_within_its_bounds(recordings):
    excitation, _ = ai.design_excitation(ROBOT, PINOCCHIO, BASE, Q0, 10.0, 5, candidates=3,
                                         seed=11, **BOUNDS)
    for t in (0.0, excitation.period):
        q, qd, qdd = excitation.at([t])
        np.testing.assert_allclose(q[0], Q0, atol=1e-12)
        np.testing.assert_allclose(qd[0], 0.0, atol=1e-12)
        np.testing.assert_allclose(qdd[0], 0.0, atol=1e-12)
    t = np.linspace(0.0, excitation.period, 2001)
    q, qd, qdd = excitation.at(t)
    np.testing.assert_allclose(np.gradient(q, t, axis=0)[5:-5], qd[5:-5], atol=1e-3)
    assert np.all(np.abs(qd) <= BOUNDS["velocity_bound"] + 1e-9)
    assert np.all(np.abs(qdd) <= BOUNDS["acceleration_bound"])
    tau = PINOCCHIO.inverse_dynamics_batch(q, qd, qdd)
    assert np.all(np.abs(tau) <= BOUNDS["effort_bound"])
    assert recordings[2] < 20.0             # the chosen one's base regressor is well posed


def test_the_identified_model_predicts_held_out_torques_the_urdf_does_not(recordings):
    """Fitted on one excitation, predicting another: the prediction's error against the
    torque the drives applied, relative to that torque (all joints pooled), is ≤ 2 %; the
    URDF's is ≥ 10 %. Against the noisy measurement both stay above the noise's own share."""
    (q, qd, qdd, tau), (qv, qdv, qddv, tauv), _ = recordings
    rng = np.random.default_rng(1)
    estimate = ai.identify_arm(ROBOT, BASE, q, qd, qdd, tau + rng.normal(0.0, NOISE, tau.shape))
    predicted = estimate.predict(ROBOT, qv, qdv, qddv)
    urdf = PINOCCHIO.inverse_dynamics_batch(qv, qdv, qddv)

    def pooled(a, b):
        return np.sqrt(np.sum((a - b) ** 2) / np.sum(a ** 2))
    assert pooled(tauv, predicted) <= 0.02, pooled(tauv, predicted)
    assert pooled(tauv, urdf) >= 0.10, pooled(tauv, urdf)
    np.testing.assert_allclose(estimate.sigma, NOISE, rtol=0.1)      # the noise, found
    # the plant's friction of the three big joints (viscous and Coulomb)
    np.testing.assert_allclose(estimate.friction[:3, :2], np.c_[FRICTION, FRICTION][:3],
                               rtol=0.05)


def test_what_it_calls_identified_is_true_at_the_rate_its_uncertainty_promises(recordings):
    """The reported standard deviations describe the noise; what the model leaves out (q̈
    from differences of a sampled loop, dry friction at reversals) biases each base
    parameter by less than 2 of them (the fit without noise). Over 20 noise draws the
    errors spread as the σ say (z = error / σ with a standard deviation near 1), and of the
    parameters called identified (σ ≤ 10 % of the value) at most 2 % are more than 30 %
    off the truth (the perturbed URDF's β)."""
    (q, qd, qdd, tau), _, _ = recordings
    truth = ai.urdf_base(TRUTH, BASE)
    rng = np.random.default_rng(2)
    rows = ai.Rows(ROBOT, BASE, q, qd, qdd)
    z, claims, false = [], 0, 0
    for _ in range(20):
        estimate = rows.fit(tau + rng.normal(0.0, NOISE, tau.shape))
        z.append((estimate.beta - truth) / estimate.beta_std)
        error = np.abs(estimate.beta - truth) / np.abs(truth)
        claims += int(estimate.identified.sum())
        false += int(np.sum(estimate.identified & (error > 3 * ai.IDENTIFIED_SHARE)))
    bias = rows.fit(tau).beta - truth
    assert np.all(np.abs(bias) <= 2.0 * estimate.beta_std), np.abs(bias / estimate.beta_std)
    assert np.all((0.6 < np.std(z, axis=0)) & (np.std(z, axis=0) < 1.5))
    assert claims >= 200 and false <= 0.02 * claims, (claims, false)


@pytest.fixture(scope="module")
def consistent(recordings):
    """(π, friction, the corrected URDF's text) from the noisy fit of the first recording."""
    q, qd, qdd, tau = recordings[0]
    rng = np.random.default_rng(1)
    estimate = ai.identify_arm(ROBOT, BASE, q, qd, qdd, tau + rng.normal(0.0, NOISE, tau.shape))
    pi, friction = consistent_parameters(ROBOT, estimate)
    return (pi, friction, corrected_urdf(ROBOT.urdf_xml, ROBOT, cp.bodies(pi), friction),
            estimate)


def test_the_consistent_estimate_is_a_urdf_that_predicts_and_holds_against_gravity(
        recordings, consistent):
    """The semidefinite program's π: every body has positive mass and an inertia at its
    centre of mass whose principal moments obey the triangle inequality; written into the
    URDF (inertials, <dynamics damping friction>; the rest kept), it loads in both backends
    and in MuJoCo, predicts the held-out torques within 2 % by Pinocchio's RNEA plus its
    joint friction, and its gravity torques are at least 10 × closer to the plant's than
    the URDF's — and no joint's are farther: where the noise hides a parameter (the light
    last wrist's centre of mass, 0.01 N·m of gravity torque under 0.5 N·m of noise), the
    URDF's value is kept, not the noise's."""
    _, (qv, qdv, qddv, tauv), _ = recordings
    pi, friction, text, _ = consistent
    for mass, com, inertia in cp.bodies(pi):
        moments = np.linalg.eigvalsh(inertia)
        assert mass > 0.0 and moments[0] >= -1e-12
        assert moments[0] + moments[1] >= moments[2] - 1e-12
    corrected = rd.load_robot(text)
    assert text.count("<!--") == ROBOT.urdf_xml.count("<!--")           # comments kept
    np.testing.assert_array_equal(corrected.origin_translation, ROBOT.origin_translation)
    np.testing.assert_allclose(corrected.damping, friction[:, 0], rtol=1e-8)
    pinocchio, rnea = (rd.make_solver(corrected, backend) for backend in ("pinocchio", "rnea"))
    rigid = pinocchio.inverse_dynamics_batch(qv, qdv, qddv)
    np.testing.assert_allclose(rnea.inverse_dynamics_batch(qv, qdv, qddv), rigid, atol=1e-8)
    predicted = rigid + corrected.damping * qdv + corrected.friction * np.sign(qdv)
    assert np.sqrt(np.sum((tauv - predicted) ** 2) / np.sum(tauv ** 2)) <= 0.02
    poses = np.random.default_rng(0).uniform(-2.0, 2.0, (200, N))
    truth = rd.make_solver(TRUTH, "pinocchio").gravity_batch(poses)
    error = {name: np.sqrt(np.mean((solver.gravity_batch(poses) - truth) ** 2, axis=0))
             for name, solver in (("urdf", PINOCCHIO), ("corrected", pinocchio))}
    pooled = {name: np.sqrt(np.mean(e ** 2)) for name, e in error.items()}
    assert pooled["corrected"] * 10.0 <= pooled["urdf"], pooled
    assert np.all(error["corrected"] <= error["urdf"] + 1e-12), error
    plant = MujocoPlant(corrected, "rk4", DT)
    plant.check_against(pinocchio, Q0, np.full(N, 0.3))


def test_data_that_say_nothing_leave_the_urdf_where_it_was(recordings):
    """Under 500 N·m of noise (the torques drowned: no base parameter identified) the
    semidefinite program keeps the URDF as its prior says: every parameter within one of
    the prior's standard deviations of the URDF's, and gravity torques no farther from the
    plant's than the URDF's (a fit of the noise alone would be several times farther)."""
    q, qd, qdd, tau = recordings[0]
    rng = np.random.default_rng(1)
    estimate = ai.identify_arm(ROBOT, BASE, q, qd, qdd, tau + rng.normal(0.0, 500.0, tau.shape))
    assert not estimate.identified.any()
    pi, friction = consistent_parameters(ROBOT, estimate)
    z = (pi - cp.model_parameters(ROBOT)) / cp.prior_std(ROBOT)
    assert np.abs(z).max() <= 1.0, np.abs(z).max()
    drowned = rd.load_robot(corrected_urdf(ROBOT.urdf_xml, ROBOT, cp.bodies(pi), friction))
    poses = np.random.default_rng(0).uniform(-2.0, 2.0, (200, N))
    truth = rd.make_solver(TRUTH, "pinocchio").gravity_batch(poses)
    error = {name: np.sqrt(np.mean((rd.make_solver(model, "pinocchio").gravity_batch(poses)
                                    - truth) ** 2))
             for name, model in (("urdf", ROBOT), ("drowned", drowned))}
    assert error["drowned"] <= error["urdf"], error


def test_gravity_compensation_with_the_corrected_urdf_drifts_ten_times_less(consistent):
    """The controller compensating gravity (its start-up mode, friction not compensated)
    on the perturbed MuJoCo arm with its friction, released at rest at four poses for 2 s:
    with the corrected URDF the tool (tool0's origin) moves at least 10 × less, at every
    pose, than with the URDF it was identified from. (The last joint turns the tool about its
    own axis and does not move tool0's origin: its gravity torque, ≤ 0.01 N·m, is below
    what 0.5 N·m of noise lets the data resolve, and the plant gives it almost no friction;
    both models let it turn.)"""
    corrected = rd.load_robot(consistent[2])
    rng = np.random.default_rng(0)
    poses = [Q0] + [Q0 + rng.uniform(-0.5, 0.5, N) for _ in range(3)]
    tip = {}
    for name, model in (("urdf", ROBOT), ("corrected", corrected)):
        moved = []
        for q0 in poses:
            _, log = closed_loop(model, q0, 2.0)
            moved.append(np.linalg.norm(PINOCCHIO.tip_pose(log[-1][0])[1]
                                        - PINOCCHIO.tip_pose(q0)[1]))
        tip[name] = np.array(moved)
    print(f"tool drift after 2 s [mm]: URDF {np.round(1e3 * tip['urdf'], 2)}, corrected "
          f"{np.round(1e3 * tip['corrected'], 3)}")
    assert np.all(tip["corrected"] * 10.0 <= tip["urdf"]), tip
    assert np.all(tip["urdf"] >= 0.01), tip      # the URDF's arm does sink (≥ 1 cm)


def test_the_command_line_tool_identifies_the_arm_from_bags(recordings, tmp_path, capsys):
    """dynamics_identify on MCAP bags of the two recordings (positions, velocities, efforts
    with the sensors' noise): a corrected URDF that predicts the held-out torques the drives
    applied within 2 % (Pinocchio on it, friction from its <dynamics>), a table where the
    identified model's error is a fraction of the URDF's; a bag without efforts is refused."""
    from robo_dynamics.cli import identify
    rng = np.random.default_rng(4)
    bags = []
    for name, (q, qd, _, tau) in zip(("fit", "held_out"), recordings[:2]):
        stamps = 1_700_000_000 * 10 ** 9 + np.arange(len(q)) * 1_000_000
        noisy = tau + rng.normal(0.0, NOISE, tau.shape)
        bags.append(write_bag(tmp_path / f"{name}.mcap", [
            (int(s), as_dict(int(s), NAMES, q[k], qd[k], noisy[k]))
            for k, s in enumerate(stamps)]))
    output = tmp_path / "corrected.urdf"
    # the command as docs/arm-identification.md shows it, its files these
    files = {"excitation.mcap": bags[0], "other_motion.mcap": bags[1], "my_arm.urdf": str(URDF),
             "my_arm_identified.urdf": str(output), "identification.png": str(tmp_path / "p.png")}
    words = shlex.split(block("docs/arm-identification.md", "dynamics_identify").text.replace(
        "\\\n", " "))
    assert words[0] == "dynamics_identify" and set(files) <= set(words), words
    assert identify.main([files.get(word, word) for word in words[1:]]) == 0
    table = capsys.readouterr().out
    # the light wrists' friction (0.03, 0.008, 0.0004) under 0.5 N·m of noise: kept at 0
    assert "friction kept at the URDF's where the data do not show it differ by 2 σ: " \
        "wrist_1_joint (Coulomb), wrist_2_joint (viscous, Coulomb), wrist_3_joint (viscous, " \
        "Coulomb)" in table, table
    pooled = table.split("all joints")[1].split()
    urdf_error, identified_error = (float(x.rstrip("%")) for x in pooled[1:3])
    assert identified_error < 0.3 * urdf_error and urdf_error >= 10.0, table
    corrected = rd.load_robot(str(output))
    q, qd, qdd, tau = recordings[1]
    predicted = (rd.make_solver(corrected, "pinocchio").inverse_dynamics_batch(q, qd, qdd)
                 + corrected.damping * qd + corrected.friction * np.sign(qd))
    assert np.sqrt(np.sum((tau - predicted) ** 2) / np.sum(tau ** 2)) <= 0.02
    assert (tmp_path / "p.png").stat().st_size > 10_000
    q, qd, _, _ = recordings[0]
    bare = write_bag(tmp_path / "bare.mcap", [(k + 1, as_dict(k + 1, NAMES, q[k], qd[k]))
                                              for k in range(100)])
    assert identify.main([str(bare), "--urdf", str(URDF),
                          "--output", str(tmp_path / "x.urdf")]) == 2
    assert "needs its efforts" in capsys.readouterr().err


def test_the_corrected_urdf_can_replace_the_chain_another_chain_cannot(consistent):
    """What ~/identify_arm's apply swaps in (control/solver_set.chain_change): the corrected
    URDF's solvers, built and equal to Pinocchio on it; a URDF whose kinematics or limits
    differ is refused, naming what differs."""
    from robo_dynamics.control.solver_set import chain_change
    corrected = rd.load_robot(consistent[2])
    change = chain_change(ROBOT, corrected, {}, "rnea", "identified")
    q = np.random.default_rng(5).uniform(-2.0, 2.0, (20, N))
    np.testing.assert_allclose(change.built.solver.gravity_batch(q),
                               rd.make_solver(corrected, "pinocchio").gravity_batch(q),
                               atol=1e-9)
    assert change.urdf_model is corrected and change.payload is None
    moved = consistent[2].replace('xyz="0 0 0.1625"', 'xyz="0 0 0.17"')
    limited = consistent[2].replace('velocity="3.14159"', 'velocity="2.0"', 1)
    assert moved != consistent[2] and limited != consistent[2]
    for text, differs in ((moved, "origin_translation"), (limited, "velocity_limit")):
        with pytest.raises(ValueError, match=differs):
            chain_change(ROBOT, rd.load_robot(text), {}, "rnea", "identified")


def test_an_interrupted_identification_says_so_and_what_to_change():
    """Not 'refused' for a goal that moved the arm: how long it moved, why it stopped, and
    the change that helps for each cause."""
    from robo_dynamics.identification.identification_session import interrupted_sentence
    tracking = interrupted_sentence("safe hold: joint 'wrist_1_joint' tracking error 0.25 "
                                    "exceeds max_tracking_error 0.25", 0.93, 30.0)
    assert tracking.startswith("interrupted after 0.93 s of its 30 s motion: safe hold:")
    assert "raise kp and kd" in tracking and "refused" not in tracking
    assert "velocity_share" in interrupted_sentence("safe hold: joint 'a' velocity 3.2 "
                                                    "exceeds the velocity bound 3.1", 1, 20)
    assert "collision_reaction none" in interrupted_sentence("safe hold: collision: external "
                                                             "torque at 'a'", 1, 20)


def test_friction_is_written_only_where_the_data_show_it_and_no_joint_predicts_worse(
        recordings, consistent):
    """Each joint's viscous and Coulomb friction in the corrected URDF is the URDF's (0 here)
    unless the fit shows it differs by 2 σ or more (the plant's 3 N·m·s/rad on the big
    joints is shown; the last wrist's 0.0004, under 0.5 N·m of noise, is not); and no joint
    predicts its held-out torques worse than the URDF did by more than its own residual σ."""
    _, (qv, qdv, qddv, tauv), _ = recordings
    pi, friction, text, estimate = consistent
    shown = cp.friction_shown(ROBOT, estimate)
    assert shown[:2].all() and not shown[-1].any(), shown
    urdf = np.column_stack((ROBOT.damping, ROBOT.friction))
    np.testing.assert_array_less(np.abs(friction[:, :2] - urdf)[~shown],
                                 0.05 * estimate.friction_std[:, :2][~shown])
    corrected = rd.load_robot(text)
    error = {name: np.sqrt(np.mean((tauv - ai.urdf_torques(model, qv, qdv, qddv)) ** 2, axis=0))
             for name, model in (("urdf", ROBOT), ("corrected", corrected))}
    assert np.all(error["corrected"] <= error["urdf"] + estimate.sigma), error

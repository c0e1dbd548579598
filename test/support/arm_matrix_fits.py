"""The matrix's identification cells (arm_matrix.py: the same arms, loop and defaults): a
payload found by the poses ~/identify_payload plans, and the whole arm identified as
~/identify_arm does it, each on a MuJoCo plant that is not the node's model.

The cells drive the controller core through the same session objects the actions use
(identification/identification_session.py, arm_identification.py, arm_fit.py); what the ROS
layer adds (goals, feedback, threads) is tested over ROS elsewhere.
"""

import types

import numpy as np

import robo_dynamics as rd
from robo_dynamics.identification import arm_identification as ai
from robo_dynamics.identification.arm_fit import fit_recording
from robo_dynamics.identification.identification_session import (MODEL_CHANGE_DELAY,
                                                                 IdentificationSession)
from robo_dynamics.control.trajectory import SetPoint
from robo_dynamics.simulation.mujoco_plant import MujocoPlant
from robo_dynamics.simulation.perturbed import perturbed_urdf
from robo_dynamics.simulation.simulated_arm import SimulatedArm
from arm_matrix import DT, MATRIX_ARMS, Loop

# where a payload sits: the tip, but on the Z1 (whose tip is its gripper's moving jaw) the
# link the fixed jaw is part of
PAYLOAD_LINKS = {"z1": "link06"}
PAYLOAD_SHARE = 0.05      # of the arm's moving mass: 1 kg on a UR5e, as its node test
PLANT_SHARE = 0.05        # a plant's links off the URDF by up to ±5 % (perturbed.py)


def on_plant(robot, q0, plant, **changes):
    """Loop at the node's defaults whose MuJoCo plant is `plant` (a RobotModel), without
    joint friction as every cell of the matrix (the node models none by default)."""
    loop = Loop(robot, q0, **changes)
    loop.arm = SimulatedArm(MujocoPlant(plant, "rk4", DT), q0, command_timeout=0.05,
                            brakes=True)
    return loop


def inside(robot, q0, share=0.3):
    """q0 with each limited joint at least `share` of its range from either limit."""
    limited = robot.limited
    lower, upper = (np.where(limited, x, 0.0) for x in (robot.lower, robot.upper))
    span = upper - lower
    return np.where(limited, np.clip(q0, lower + share * span, upper - share * span), q0)


def payload_goal(link, **fields):
    """IdentifyPayload's goal fields at their defaults (0, false: the session's defaults)."""
    goal = dict(link=link, pose_count=0, move_time=0.0, settle_time=0.0, record_time=0.0,
                duration=0.0, tare=False, use_tare=False, estimate_inertia=False, apply=False)
    goal.update(fields)
    return types.SimpleNamespace(**goal)


def payload_identification(robot, q0, name):
    """A payload of PAYLOAD_SHARE of the arm's mass, its centre 5 cm out along z of its link
    (PAYLOAD_LINKS), declared 30 % light at its centre (docs: declare an approximate payload
    first; 5 cm of centre unknown pull a UR10's wrist 0.25 rad off a set-point at kp 100),
    identified from the 5 poses the session plans (the node test's goal: moves 1.5 s, settle
    0.5 s, record 1 s), the provisional payload applied after each pose as the node does,
    the arm held where it stood before. Figures: relative mass error, centre-of-mass error
    [m], largest tracking error [rad], the events."""
    mass, com = PAYLOAD_SHARE * float(np.sum(robot.mass)), np.array([0.0, 0.0, 0.05])
    inertia = mass * 1e-3 * np.eye(3)
    link = PAYLOAD_LINKS.get(name, robot.tip_link)
    loop = on_plant(robot, q0, robot.with_payload(link, mass, com, inertia))
    declared = rd.make_solver(robot.with_payload(link, 0.7 * mass, com,
                                                 np.zeros((3, 3))), "pinocchio")
    loop.ctrl.replace_solver(declared, "declared")
    loop.run(0.002)
    assert loop.ctrl.desire(SetPoint(q0, np.zeros(robot.dof)), loop.t).kind == "tracking"
    loop.run(0.3)
    session = IdentificationSession()
    goal = payload_goal(link, pose_count=5, move_time=1.5, settle_time=0.5, record_time=1.0)
    session.check(goal, loop.ctrl, robot)
    fit_solver = rd.make_solver(robot, "pinocchio")
    q = loop.ctrl.measured_state()[0]
    poses = session.poses(goal, None, q, fit_solver, loop.settings.velocity_bound)
    run = session.recording = session.start(goal, q, poses, loop.t)
    event = loop.ctrl.desire(run.trajectory, loop.t)
    assert event.kind == "tracking", event.message
    swaps = [end + MODEL_CHANGE_DELAY for _, end in run.windows[:-1]]
    error = np.zeros(robot.dof)

    def each(lp):
        now = lp.t - DT                              # the controller's state is the last one
        if session.recording is not None and not session.record(now, lp.ctrl):
            return
        if swaps and lp.t >= swaps[0]:               # the pose's provisional payload
            pose = len(run.windows) - len(swaps) - 1
            guess = session.provisional(run, pose, fit_solver, link, com)  # the declared
            swaps.pop(0)
            if guess is not None:
                lp.ctrl.replace_solver(rd.make_solver(robot.with_payload(
                    link, guess[0], guess[1], np.zeros((3, 3))), "pinocchio"), "provisional")
        np.maximum(error, np.abs(run.trajectory.sample(lp.t)[0] - lp.arm.q), out=error)
    loop.run(run.end - loop.t + 2 * DT, each=each)
    session.recording = None
    if run.interrupted:
        return {"interrupted": run.interrupted, "events": loop.kinds()}
    estimate = session.fit(run, fit_solver, goal, lambda function, *args: function(*args))
    return {"mass_error": abs(estimate.mass - mass) / mass,
            "com_error": float(np.linalg.norm(estimate.com - com)),
            "tracking_error": float(error.max()), "events": loop.kinds()}


def arm_identification(robot, q0, name, seed=7):
    """The whole arm identified at the goal's defaults (10 s excitation, 2 periods, the last
    held out) on a plant whose links are off the URDF by up to PLANT_SHARE (no friction, as
    the URDF's rigid bodies; the URDF's prediction includes the friction it declares). Figures: held-out
    error of the URDF and of the corrected model (pooled nrms), per joint the RMS held-out
    error [N·m] of each and σ, the gravity error [N·m] of each at 200 random poses (RMS per
    joint), largest tracking error [rad], the events."""
    rng = np.random.default_rng(seed)
    plant = rd.load_robot(perturbed_urdf(MATRIX_ARMS[name][0], robot, rng, PLANT_SHARE),
                          tip_link=robot.tip_link)
    q0 = inside(robot, q0)
    loop = on_plant(robot, q0, plant)
    loop.run(0.002)                                  # held where it is, as an arm in use
    assert loop.ctrl.desire(SetPoint(q0, np.zeros(robot.dof)), loop.t).kind == "tracking"
    loop.run(0.3)
    q = loop.ctrl.measured_state()[0]
    solver = rd.make_solver(robot, "pinocchio")
    excitation, _ = ai.excitation_for(robot, solver, ai.BaseParameters(robot), q,
                                      loop.settings)
    excitation.start, excitation.periods = loop.t, 2
    event = loop.ctrl.desire(excitation, loop.t)
    assert event.kind == "tracking", event.message
    rows, error = [], np.zeros(robot.dof)

    def each(lp):
        if lp.ctrl.mode == "tracking" and lp.ctrl.motion is excitation:
            rows.append((lp.t, lp.arm.q.copy(), lp.arm.v.copy(),
                         lp.arm.measured_effort().copy()))
            np.maximum(error, np.abs(excitation.sample(lp.t)[0] - lp.arm.q), out=error)
    loop.run(2 * excitation.period, each=each)
    if loop.ctrl.mode != "tracking":
        return {"interrupted": loop.ctrl.hold_reason, "events": loop.kinds()}
    t, q, qd, tau = (np.array(x) for x in zip(*rows))
    fit = fit_recording(robot, t, q, qd, tau, excitation.start + excitation.period)
    held = tau[t >= excitation.start + excitation.period]
    urdf, identified = fit["predicted"]["URDF"], fit["predicted"]["identified"]
    corrected = rd.load_robot(fit["text"], tip_link=robot.tip_link)
    poses = rng.uniform(np.maximum(robot.lower, -np.pi), np.minimum(robot.upper, np.pi),
                        (200, robot.dof))
    truth = rd.make_solver(plant, "pinocchio").gravity_batch(poses)

    def gravity_error(model):
        return np.sqrt(np.mean((rd.make_solver(model, "pinocchio").gravity_batch(poses)
                                - truth) ** 2, axis=0))
    return {"urdf_error": ai.pooled_nrms(held, urdf),
            "identified_error": ai.pooled_nrms(held, identified),
            "urdf_joint": np.sqrt(np.mean((held - urdf) ** 2, axis=0)),
            "identified_joint": np.sqrt(np.mean((held - identified) ** 2, axis=0)),
            "sigma": fit["sigma"], "gravity_urdf": gravity_error(robot),
            "gravity_identified": gravity_error(corrected),
            "tracking_error": float(error.max()), "events": loop.kinds()}

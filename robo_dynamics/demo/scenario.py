"""The closed-loop demo's scenario, on the default arm: sim_arm → joint_states → dynamics_node →
effort commands → sim_arm, thirteen phases, each with fresh processes.

    python -m robo_dynamics.demo [--duration S] [--rate HZ] [--engine mujoco|internal]
                                 [--free-running] [--output PNG] [--phases 7,8]

The plant is MuJoCo by default (sim_arm's engine mujoco): an engine that shares no code with
the node, reading the same URDF, with what a real arm has and the URDF does not — rotor
armature and joint friction (ARMATURE, JOINT_DAMPING, JOINT_FRICTION), unknown to the
node's model. With --engine internal the plant is the library itself (friction as above,
no armature): there gravity compensation holds the pose to rounding, which only shows that
the library agrees with itself. The simulated torque sensors are noisy (EFFORT_NOISE), and
the node estimates the external joint torques from them in every phase (its momentum
observer, default thresholds): the phases without a push must show no contact.
1./2. gravity compensation only, friction compensation off / on: the arm is released at a
   non-trivial pose; drift after the phase (rad);
3./4. computed-torque tracking of a smooth multi-joint trajectory, friction compensation
   off / on (the node's viscous_friction and coulomb_friction set to the plant's): RMS and
   max tracking error per joint, peak torque against the effort limits;
5. tracking with a 1 kg payload at the flange, declared to the node at start-up (friction
   compensation on);
6. gravity compensation with the payload known only to the simulation (the payload the
   operator forgot to declare): the wrist starts to fall, the velocity watchdog switches to
   the safe hold (gravity compensation plus damping) on that joint state, and the arm sinks
   slowly against the damping instead of falling;
7. tracking as in 5., the node told only a rough mass (IDENTIFY_GUESS_KG): it first finds
   the payload itself (~/identify_payload: poses it chooses, mass and centre of mass from
   the noisy efforts, applied), the arm goes back to the start, then tracks; the identified
   mass within IDENTIFIED_MASS_BOUND and the tracking RMS within IDENTIFIED_RMS_RATIO × the
   exact payload's (phase 5);
8. tracking as in 4. while a person pushes the forearm (PUSH_FORCE N at its end, by the
   wrist, for PUSH_SECONDS): the node estimates the push's joint torques from the noisy
   efforts, reports the collision (default thresholds) and holds the arm; estimate against
   the truth (sim_arm publishes the joint torques of the push) in a second plot;
9. tracking as in 4., the trajectory (ending at rest) sent as MoveIt sends a plan: a
   control_msgs/FollowJointTrajectory goal to ~/follow_joint_trajectory; its result must be
   SUCCEEDED, error_code SUCCESSFUL (within the goal tolerance after the last point);
10. Cartesian impedance (docs/cartesian.md): the tip held compliantly where it is
   (~/target_pose, TIP_STIFFNESS), pushed at the tip with TIP_FORCE for TIP_PUSH_SECONDS
   (rising and falling over TIP_RAMP_SECONDS, as a hand's push), then let go
   (at the node's default collision_reaction, hold: a push at the tip that the spring
   balances is a contact the mode yields to, never a collision; friction not compensated,
   so that the plant's dry friction alone bounds where the tip rests). Its own timeline (TIP_HOLD_SECONDS,
   push, TIP_RELEASE_SECONDS), whatever --duration. The tip must give way by K⁻¹F and
   spring back, each within COMPLIANCE_BOUND × |K⁻¹F| plus the band the plant's dry
   friction can hold (verdicts.friction_band); a plot shows it.
11. the whole arm identified (docs/arm-identification.md) on a plant that is not the URDF:
   sim_arm's UR5e with every link's inertials perturbed by up to 20 % (PLANT_SEED) and
   drives of a real arm's size (DRIVE_ARMATURE, declared to the node as its datasheet
   would give it: the identification takes it as known), three runs with fresh processes:
   gravity compensation by the node with the URDF for DRIFT_SECONDS (the tool drifts); ~/identify_arm (IDENTIFY_ARM_GOAL: the node holds the arm, excites it, fits,
   writes demo_output/identified_ur5e.urdf and applies it); gravity compensation by a node
   started with that URDF. The held-out torque error must fall to IDENTIFIED_ERROR_RATIO of
   the URDF's or less, the largest joint drift to 1/DRIFT_RATIO or less (all joints but the
   light wrist's last LIGHT_JOINTS, whose drift is reported beside it, with the tool's).
12. a closed linkage (docs/closed-chains.md): the shipped palletizer (LINKAGE) on sim_arm's
   MuJoCo linkage, its loop an equality constraint, two runs with fresh processes: the node
   with the loop modelled, and the same motors commanded from the cut tree (the loop left
   open, the passive joints' torques dropped: what a tree-only dynamics library gives) at
   the node's gains. Each holds under gravity compensation for LINKAGE_HOLD_SECONDS, then
   makes a pick-and-place (to LINKAGE["place"] and back, LINKAGE_MOVE_SECONDS each). The cut
   tree's drift and tracking error must be LINKAGE_RATIO × the modelled loop's or more, the
   modelled loop's within DRIFT_BOUND and TRACKING_BOUND; a plot shows both.
13. next to a person (docs/node.md, "Next to a person"): a hand resting on a table in the
   tool's way (sim_arm's hand_stand_in: ISO/TS 15066's hand, 75 N/mm, clamped), where a
   fast move (every joint at up to PERSON_SPEED of its velocity bound) carries the tool
   fastest; two runs with fresh processes, the node told the contact may clamp, with
   power_force_limiting (the default) and without. Limited, the hand must be pressed within
   its quasi-static force (140 N); off, beyond it.
Each phase ends with a verdict against what it must show (drift, tracking within
TRACKING_BOUND without a fault, no contact, or the safe hold; the push detected within
3/K_O + one period); the exit status is 1 if one does not.
The loop runs in lockstep: sim_arm advances one period only once the node's command for
the last state has arrived, and the node and the demo run on its simulated time (/clock,
use_sim_time), so a loaded machine makes the demo slower, never different. With
--free-running the simulation follows the wall clock as a real arm does (the result then
depends on the machine keeping up with --rate).
The run is __main__.py, its processes and supervisor supervisor.py, the verdicts
verdicts.py (pure functions), the table and plots report.py.
"""

import numpy as np

Q0 = np.array([0.3, -1.2, 1.4, -0.9, 1.2, 0.4])             # rad, a non-trivial pose
AMPLITUDE = np.array([0.35, 0.25, 0.3, 0.4, 0.5, 0.6])      # rad
OMEGA = np.array([1.2, 1.5, 1.9, 2.2, 2.6, 3.0])            # rad/s
LEAD_IN = 0.5                                               # s before the trajectory starts
# the plant's, not in the URDF: each joint's rotor armature ≈ 10 % of its own inertia at Q0
# and friction of the order of that inertia × 1 rad/s² (the node's gains are accelerations
# scaled by its model's inertia: what they absorb shrinks with it, down to the light wrist)
ARMATURE = [0.2, 0.2, 0.08, 0.003, 0.0008, 0.00004]        # kg·m² (engine mujoco)
JOINT_DAMPING = [1.5, 1.5, 0.5, 0.015, 0.004, 0.0002]       # N·m·s/rad
JOINT_FRICTION = [1.5, 1.5, 0.5, 0.015, 0.004, 0.0002]      # N·m, Coulomb
# phase 11.'s plant: the rotor inertia a harmonic drive reflects, J_rotor N², of the order
# of a UR-sized arm's (N ≈ 100, J_rotor ≈ 1e-5 kg·m² for the wrist's motors and a few times
# that for the others: an assumption, not a datasheet). It dwarfs the wrist links' own
# inertia (wrist 3: 2.9e-4 kg·m²), as on a real arm, and the node is told it (armature).
DRIVE_ARMATURE = [0.4, 0.4, 0.3, 0.1, 0.1, 0.1]            # kg·m²
EFFORT_NOISE = 0.5          # N·m: standard deviation of the simulated torque sensors
PUSH_FORCE = 30.0           # N, perpendicular to the forearm, at its end (by the wrist)
PUSH_SECONDS = 0.3
OBSERVER_GAIN = 50.0        # 1/s: the node's default observer_gain
IDENTIFY_GUESS_KG = 1.3     # the operator's rough guess of the 1 kg payload (30 % off)
IDENTIFY_GOAL = {"pose_count": 4, "move_time": 1.0, "settle_time": 0.5, "record_time": 0.5}
IDENTIFIED_MASS_BOUND = 0.05   # relative: what the identified mass must be within
IDENTIFIED_RMS_RATIO = 2.0     # tracking RMS after identification / with the exact payload
RETURN_SECONDS = 2.0           # s: back to Q0 after the identification's poses
START = 0.2          # s: the first pause (the node has been commanding for most of it, and
#                      its outputs reach the demo from then on)
HOLD_AT = 0.02       # s: where a phase that identifies first holds the pose
TRACKING_BOUND = 0.05      # rad: what the phases that track must stay within
UNCOMPENSATED_BOUND = 0.2  # rad: tracking with the plant's friction not compensated (below
                           # the node's max_tracking_error, 0.25 rad)
DRIFT_BOUND = 1e-3         # rad: gravity compensation with the exact model (a scheduling
                           # hiccup longer than the timeouts may let it move a little)


def desired(t):
    """q_d = Q0 + A (1 − cos ωt) for t ≥ 0 (rest before), with its derivatives."""
    t = np.maximum(np.asarray(t, dtype=float), 0.0)[..., None]
    return (Q0 + AMPLITUDE * (1.0 - np.cos(OMEGA * t)), AMPLITUDE * OMEGA * np.sin(OMEGA * t),
            AMPLITUDE * OMEGA ** 2 * np.cos(OMEGA * t) * (t > 0))


class Phase:
    """payload_kg: a payload at the flange in the simulation; declared: the node knows it too
    (its start-up payload parameters); guess_kg: the node is told only this rough mass, then
    finds the payload itself (~/identify_payload) before tracking; friction: the node
    compensates the plant's joint friction (knowing its coefficients); expect: 'hold' when
    the safety envelope must abandon the motion for its safe hold, else 'track'; action: the
    trajectory goes to ~/follow_joint_trajectory (MoveIt's way), not ~/desired_trajectory;
    cartesian: the tip is held by Cartesian impedance and pushed (phase 10.); whole_arm: the
    plant's inertials are not the URDF's, and the node identifies them (phase 11.);
    linkage: the shipped palletizer instead, its loop modelled and cut (phase 12.);
    person: a hand in the tool's way, the limit on and off (phase 13.)."""

    def __init__(self, name, track, payload_kg=0.0, declared=False, friction=False,
                 expect="track", bound=None, push=False, guess_kg=None, action=False,
                 cartesian=False, whole_arm=False, linkage=False, person=False):
        self.name, self.track, self.payload_kg = name, track, payload_kg
        self.person = person          # a hand in the tool's way (demo/person.py)
        self.whole_arm = whole_arm    # a perturbed plant, identified by ~/identify_arm
        self.linkage = linkage        # the shipped palletizer (demo/linkage.py)
        self.cartesian = cartesian    # held at the tip's pose, pushed at the tip
        self.action = action          # the trajectory as a FollowJointTrajectory goal
        self.declared, self.friction, self.expect = declared, friction, expect
        self.push = push
        self.guess_kg = guess_kg      # declared roughly, then identified by the node
        self.bound = bound if bound is not None else (TRACKING_BOUND if track
                                                      else DRIFT_BOUND)


PHASES = [Phase("gravity compensation", False),
          Phase("gravity compensation, friction compensated", False, friction=True),
          Phase("computed torque", True, bound=UNCOMPENSATED_BOUND),
          Phase("computed torque, friction compensated", True, friction=True),
          Phase("computed torque, 1 kg payload declared", True, 1.0, declared=True,
                friction=True),
          Phase("gravity compensation, 1 kg unknown payload", False, 1.0, expect="hold"),
          Phase("computed torque, 1 kg payload identified by the node", True, 1.0,
                friction=True, guess_kg=IDENTIFY_GUESS_KG),
          Phase("computed torque, pushed on the forearm", True, friction=True, expect="hold",
                push=True),
          Phase("computed torque via FollowJointTrajectory", True, friction=True,
                action=True),
          Phase("Cartesian impedance, pushed at the tip", False, cartesian=True),
          Phase("whole arm identified on a perturbed arm", False, whole_arm=True),
          Phase("closed linkage: a palletizer, its loop modelled and cut", True,
                linkage=True),
          Phase("next to a person: a hand on a table in the tool's way", False,
                friction=True, person=True)]
STOP_SECONDS = 1.0         # s: the action phase's trajectory comes to rest over this
# the Cartesian phase (10.): the stiffness [N/m, N·m/rad] (the node's default), a push
TIP_STIFFNESS = [500.0, 500.0, 500.0, 2.0, 2.0, 2.0]
TIP_FORCE = np.array([0.0, 30.0, 0.0])     # N, base axes, at the tip (tool0's origin)
TIP_HOLD_SECONDS, TIP_PUSH_SECONDS, TIP_RELEASE_SECONDS = 0.5, 1.5, 2.0   # s
TIP_RAMP_SECONDS = 0.2     # s: the push rises and falls over this (a step of 30 N spins the
                           # URDF's light wrist beyond the velocity bound: the safe hold)
COMPLIANCE_BOUND = 0.05    # relative to |K⁻¹F|, beside the dry-friction band
# the whole-arm phase (11.)
PLANT_SEED = 7             # the perturbation of the plant's inertials (simulation/perturbed.py)
DRIFT_SECONDS = 2.0        # s of gravity compensation whose drift of the tool is measured
IDENTIFY_ARM_GOAL = {"period": 7.0, "periods": 2, "apply": True}   # 14 s of excitation:
#                  one period fitted, one held out (a third fitted period drifts more,
#                  0.099 against 0.009 rad: docs/arm-identification.md)
IDENTIFY_ARM_KP, IDENTIFY_ARM_KD = 400.0, 40.0   # the node's gains in this phase (ω = 20/s,
#                  ζ = 1): the default 100, 20 let the URDF's error throw the light wrist
#                  off the excitation by more than max_tracking_error
IDENTIFIED_ERROR_RATIO = 0.4   # held-out error of the identified model / the URDF's, at most
DRIFT_RATIO = 10.0         # the URDF's largest joint drift / the identified one's, at least,
LIGHT_JOINTS = 2           # over all but the last LIGHT_JOINTS: the light wrist, whose
#   gravity torques (≤ 0.3 N·m) 0.5 N·m of noise per sample hides from the fit, and which the
#   plant gives almost no friction (docs/arm-identification.md); reported apart
# the closed-linkage phase (12.): the shipped palletizer, its motors at theta0 [rad]; the
# pick-and-place goes to theta0 + place and back
LINKAGE = {"arm": "rd_palletizer", "theta0": [0.5, 0.3, -0.3, 0.4],
           "place": [0.8, 0.15, -0.25, 1.0]}
LINKAGE_HOLD_SECONDS = 0.3     # s of gravity compensation (the cut tree falls 0.4 rad in it)
LINKAGE_MOVE_SECONDS = 0.8     # s: each move of the pick-and-place (a quintic)
LINKAGE_RATIO = 10.0           # the cut tree's drift and tracking error / the modelled loop's,
#                                at least
# the next-to-a-person phase (13.): a fast move through a hand resting on a table
PERSON_SPEED = 0.8             # of each joint's velocity bound, at the move's peak
PERSON_MOVE_SECONDS = 1.0      # s: the move as planned (the limit slows it)
PERSON_WINDOW = 6.0            # s at most after it is sent (0.5 s after the touch)

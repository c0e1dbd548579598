"""The nodes' parameter tables: name → Spec (default, type, description, read-only), and
the rules their values must follow (per-joint lists, ranges, choices). ros/parameters.py
declares, reads and validates them.

CHAIN: how both nodes take the arm; DYNAMICS_NODE: the dynamics node's control and output
parameters; FOLLOW_TRAJECTORY: its ~/follow_joint_trajectory action's (named as
joint_trajectory_controller's); SIM_ARM: the simulator's. An optional parameter (default
None) is an empty array until given.
"""

import math

from ..backends import BACKENDS, DEFAULT_BACKEND
from ..control.cartesian import LAWS
from ..control.controller import COLLISION_REACTIONS
from ..model.robot_model import STANDARD_GRAVITY
from ..simulation.integrators import INTEGRATORS
from .person_parameters import NEXT_TO_A_PERSON, PERSON_CHOICES, PERSON_RANGES

from .parameter_kinds import (BOOL, DOUBLE, DOUBLES, INTEGER, READ_ONLY, RUNTIME, STRING,
                              STRINGS, Spec)

# the chain a node works on, as both nodes take it
CHAIN = {
    "robot_description": Spec("", STRING,
                              "URDF XML text. Empty: use robot_description_file (the dynamics "
                              "node: else the transient-local robot_description topic).",
                              READ_ONLY),
    "robot_description_file": Spec("", STRING, "Path of a .urdf or .xacro file (used when "
                                   "robot_description is empty).", READ_ONLY),
    "managed": Spec(False, BOOL, "A managed (lifecycle) node: start unconfigured and command "
                    "the arm only once activated (ros2 lifecycle set, a lifecycle manager). "
                    "False: configure and activate at start-up.", READ_ONLY),
    "autostart": Spec(False, BOOL, "With managed: configure and activate at start-up (in "
                      "the node itself, as the launch file's activate:=true asks), staying a "
                      "managed node that ros2 lifecycle set can deactivate.", READ_ONLY),
    "base_link": Spec("", STRING, "First link of the chain (fixed to the world). Empty: the "
                      "URDF root.", READ_ONLY),
    "tip_link": Spec("", STRING, "Last link of the chain; J and Λ refer to its origin. Empty: "
                     "the only leaf.", READ_ONLY),
    "gravity": Spec(list(STANDARD_GRAVITY), DOUBLES,
                    "Gravity vector in the base_link frame [m/s^2] (wall, ceiling or tilted "
                    "mounts).", READ_ONLY),
    "backend": Spec(DEFAULT_BACKEND, STRING,
                    f"Solver of the dynamics: one of {list(BACKENDS)}. In the dynamics node "
                    "the other one cross-checks it.", READ_ONLY),
    "command_joints": Spec(None, STRINGS,
                           "Joint order of the Float64MultiArray commands: the `joints` list "
                           "of the effort controller they feed (a subset of the chain, any "
                           "order). Unset: the chain's order.", READ_ONLY),
    "payload_link": Spec("", STRING, "Link carrying a payload at start-up (empty: none). In "
                         "sim_arm: a payload only the simulation knows.", READ_ONLY),
    "payload_mass": Spec(0.0, DOUBLE, "Payload mass [kg].", READ_ONLY),
    "payload_com": Spec([0.0, 0.0, 0.0], DOUBLES,
                        "Payload centre of mass in the payload link frame [m].", READ_ONLY),
    "payload_inertia": Spec([0.0] * 6, DOUBLES,
                            "Payload inertia about its centre of mass [kg m^2]: ixx ixy ixz "
                            "iyy iyz izz.", READ_ONLY),
    "effort_limits": Spec(None, DOUBLES, "Effort limits [N·m or N] in place of the URDF's "
                          "(some leave them 0), per joint or one. Unset: the URDF's.", READ_ONLY),
    "velocity_limits": Spec(None, DOUBLES, "Velocity limits [rad/s or m/s], as effort_limits.",
                            READ_ONLY),
}

# ~/follow_joint_trajectory's (ros/actions/follow_joint_trajectory.py); per joint besides, declared once the
# chain is known: constraints.<joint>.trajectory and constraints.<joint>.goal [rad or m]
FOLLOW_TRAJECTORY = {
    "constraints.goal_time": Spec(1.0, DOUBLE,
                                  "Time [s] after the last point's time within which every "
                                  "joint must be within its goal tolerance, else the goal "
                                  "ends GOAL_TOLERANCE_VIOLATED; 0: no limit (as "
                                  "joint_trajectory_controller).", RUNTIME),
    "constraints.stopped_velocity_tolerance": Spec(
        0.01, DOUBLE, "Largest |qd| [rad/s or m/s] at the goal for success; 0: not checked.",
        RUNTIME),
    "action_monitor_rate": Spec(50.0, DOUBLE, "Rate [Hz] of the action's feedback, on the "
                                "node's clock (simulated time under use_sim_time).", RUNTIME),
    "stop_deceleration": Spec([2.0], DOUBLES,
                              "Deceleration [rad/s^2 or m/s^2] of a cancelled goal's stop "
                              "along its path, one per chain joint or one for all.", RUNTIME),
    # the Cartesian modes (control/cartesian.py), driven by ~/target_pose
    "cartesian.law": Spec("cartesian_impedance", STRING,
                          "Law of a ~/target_pose: cartesian_impedance (stiffness in N/m, "
                          "N·m/rad) or operational_space (gains per unit inertia, 1/s^2).",
                          RUNTIME),
    "cartesian.stiffness": Spec([500.0, 500.0, 500.0, 2.0, 2.0, 2.0], DOUBLES,
                                "Stiffness K of the tip [x, y, z, rx, ry, rz] in base axes "
                                "until ~/target_stiffness gives one.", RUNTIME),
    "cartesian.max_stiffness": Spec([3000.0, 3000.0, 3000.0, 300.0, 300.0, 300.0], DOUBLES,
                                    "Largest diagonal of K accepted [x, y, z, rx, ry, rz], "
                                    "in K's units: N/m and N m/rad under "
                                    "cartesian_impedance, 1/s^2 under operational_space.",
                                    RUNTIME),
    "cartesian.damping_ratio": Spec(1.0, DOUBLE, "Damping ratio ζ of every mode of the tip.",
                                    RUNTIME),
    "cartesian.max_position_error": Spec(0.1, DOUBLE, "The pose error's position part is "
                                         "clipped to this length [m].", RUNTIME),
    "cartesian.max_orientation_error": Spec(0.5, DOUBLE, "The pose error's rotation is "
                                            "clipped to this angle [rad].", RUNTIME),
    "cartesian.nullspace_stiffness": Spec([10.0], DOUBLES,
                                          "Stiffness [N·m/rad] of the pull toward "
                                          "~/target_joint within the nullspace, per joint or "
                                          "one for all.", RUNTIME),
    "cartesian.nullspace_torque_max": Spec([5.0], DOUBLES,
                                           "Largest nullspace torque [N·m] per joint (the "
                                           "pull is scaled down to it), or one for all.",
                                           RUNTIME),
}
JOINT_CONSTRAINTS = {
    "trajectory": (0.2, "Path tolerance [rad or m] of |q_d - q| while a goal moves; beyond it "
                        "the goal ends PATH_TOLERANCE_VIOLATED and the arm holds where it is. "
                        "0: not checked."),
    "goal": (0.02, "Goal tolerance [rad or m] of |q_end - q| at the end; 0: not checked."),
}

# a closed linkage (docs/closed-chains.md); per closure besides, declared once the names are
# known: loop_closures.<name>.type, link_a, link_b (strings), xyz_a, rpy_a, xyz_b, rpy_b
CLOSED_LINKAGE = {
    "actuated_joints": Spec(None, STRINGS,
                            "The motors of a closed linkage, one per degree of freedom (its "
                            "other joints are passive: solved from the loops). Unset: a "
                            "serial chain.", READ_ONLY),
    "loop_closures.names": Spec(None, STRINGS,
                                "The loop closures of a closed linkage, each described by "
                                "loop_closures.<name>.type (point, revolute, weld), link_a, "
                                "link_b and the frames xyz_a, rpy_a, xyz_b, rpy_b [m, rad] on "
                                "them.", READ_ONLY),
    "joint_springs.joints": Spec(None, STRINGS, "Joints of a closed linkage with a spring "
                                 "or a damper (passive ones too), each given a value in "
                                 "joint_springs.stiffness and, optionally, reference and "
                                 "damping.", READ_ONLY),
    "joint_springs.stiffness": Spec(None, DOUBLES, "Spring stiffness [N·m/rad or N/m] per "
                                    "joint of joint_springs.joints.", READ_ONLY),
    "joint_springs.reference": Spec(None, DOUBLES, "Where each spring is relaxed [rad or m]; "
                                    "unset: 0.", READ_ONLY),
    "joint_springs.damping": Spec(None, DOUBLES, "Viscous damping [N·m·s/rad or N·s/m] per "
                                  "joint; unset: 0.", READ_ONLY),
}
SPRING_FIELDS = ("joints", "stiffness", "reference", "damping")
CLOSURE_FIELDS = {"type": "", "link_a": "", "link_b": "", "xyz_a": [0.0] * 3,
                  "rpy_a": [0.0] * 3, "xyz_b": [0.0] * 3, "rpy_b": [0.0] * 3}

DYNAMICS_NODE = {
    **CHAIN,
    **FOLLOW_TRAJECTORY,
    **CLOSED_LINKAGE,
    **NEXT_TO_A_PERSON,
    "passive_joint_tolerance": Spec(0.02, DOUBLE,
                                    "A closed linkage's passive joints that joint_states "
                                    "carry [rad or m]: one further than this from where the "
                                    "loops put it (a broken link, a wrong encoder) starts "
                                    "the safe hold, naming it.", READ_ONLY),
    "strict_model": Spec(False, BOOL,
                         "Refuse a robot description whose chain has a doubtful inertia "
                         "(triangle inequality broken, massless link with inertia) instead of "
                         "loading it with a warning (logged once and listed on /diagnostics).",
                         READ_ONLY),
    "armature": Spec(None, DOUBLES, "Rotor inertia each drive reflects into its joint [kg·m² "
                     "or kg] (J_rotor N² for a gear ratio N; a datasheet figure, not in "
                     "URDF), one per chain joint or one for all: added to M(q) and to the "
                     "inverse dynamics. Unset: none.", READ_ONLY),
    "kp": Spec([100.0], DOUBLES, "Computed-torque position gains [1/s^2], one per chain joint "
               "(model order) or one for all.", RUNTIME),
    "kd": Spec([20.0], DOUBLES, "Computed-torque velocity gains [1/s], one per chain joint or "
               "one for all.", RUNTIME),
    "torque_limit_scale": Spec(1.0, DOUBLE, "Commands are clamped to this fraction of the URDF "
                               "effort limits.", RUNTIME),
    "max_torque_rate": Spec([1000.0], DOUBLES,
                            "Largest rate of change of every published command [N m/s], one "
                            "per chain joint or one for all (libfranka's limit: 1000). Any "
                            "change of command (mode, trajectory, payload, gains, resuming) is "
                            "a ramp.", RUNTIME),
    "start_tolerance": Spec([0.01], DOUBLES,
                            "A desired trajectory or set-point whose desired position now is "
                            "farther than this [rad or m] from the measured position is "
                            "refused; one per chain joint or one for all.", RUNTIME),
    "max_tracking_error": Spec([0.25], DOUBLES,
                               "While tracking, an error |q_d - q| beyond this [rad or m] "
                               "abandons the desired motion for the safe hold; one per chain "
                               "joint or one for all.", RUNTIME),
    "velocity_limit_scale": Spec(1.0, DOUBLE, "|qd| beyond this fraction of the URDF velocity "
                                 "limit switches to the safe hold.", RUNTIME),
    "hold_decay_rate": Spec(20.0, DOUBLE,
                            "Rate lambda [1/s] at which the safe hold brings every joint's "
                            "velocity down (qdd = -lambda qd by computed torque, at every "
                            "pose; time constant 1/lambda), capped at 1/(control period).",
                            RUNTIME),
    "hold_push_force": Spec(50.0, DOUBLE,
                            "A person's push [N] at the tool that the safe hold yields to at "
                            "no more than half the velocity bound: joints it would spin "
                            "faster decay faster than hold_decay_rate (from M and J at the "
                            "pose, up to 0.5/(control period)); 0: hold_decay_rate alone.",
                            RUNTIME),
    "hold_damping": Spec(None, DOUBLES,
                         "Joint damping D [N m s/rad] of the safe hold instead of "
                         "hold_decay_rate's law: gravity compensation - D qd, one per chain "
                         "joint or one for all. Unset: hold_decay_rate's law.", RUNTIME),
    "stale_timeout": Spec(0.1, DOUBLE, "Joint states older than this [s] stop the command "
                          "stream.", RUNTIME),
    "hold_timeout": Spec(0.5, DOUBLE, "A joint still beyond the velocity bound this long [s] "
                         "after the safe hold began stops the command stream (the hold's "
                         "damping cannot stop it; the arm's own watchdog must brake).",
                         RUNTIME),
    "cross_check_rate": Spec(1.0, DOUBLE, "How often [Hz] the other backend recomputes a "
                             "state, one quantity of one backend per joint state after its "
                             "command is published; 0 disables the cross-check.", RUNTIME),
    "cross_check_tolerance": Spec(1e-6, DOUBLE, "Largest relative difference between backends "
                                  "before diagnostics report ERROR.", RUNTIME),
    "friction_compensation": Spec(False, BOOL, "Add viscous + Coulomb friction torques to the "
                                  "commands.", RUNTIME),
    "viscous_friction": Spec(None, DOUBLES, "Viscous coefficients [N m s/rad], one per chain "
                             "joint or one for all. Unset: the URDF's <dynamics damping>.",
                             RUNTIME),
    "coulomb_friction": Spec(None, DOUBLES, "Coulomb friction [N m], one per chain joint or one "
                             "for all. Unset: the URDF's <dynamics friction>.", RUNTIME),
    "observer_gain": Spec([50.0], DOUBLES,
                          "Bandwidth K_O [1/s] of the external-torque observer (generalized "
                          "momentum, from JointState.effort), one per chain joint or one for "
                          "all; [0.0]: no observer.", RUNTIME),
    "effort_source": Spec("torque", STRING,
                          "What JointState.effort carries: torque (joint torque [N m or N]) or "
                          "current (motor current [A], times torque_constants).", READ_ONLY),
    "torque_constants": Spec(None, DOUBLES,
                             "With effort_source current: joint torque per ampere [N m/A], "
                             "gear ratio included, one per chain joint or one for all.",
                             READ_ONLY),
    "hardware_compensates_gravity": Spec(
        False, BOOL, "The drives add gravity compensation themselves (Franka, UR direct torque "
        "control, some KUKA modes): the published command leaves g(q) out. Every clamp, rate "
        "limit and check still applies to the full torque. docs/moveit.md lists vendors.",
        RUNTIME),
    "contact_thresholds": Spec(None, DOUBLES,
                               "|tau_ext| beyond this [N m or N] is a contact, one per chain "
                               "joint or one for all. Unset: 3 % of the URDF effort limits.",
                               RUNTIME),
    "collision_thresholds": Spec(None, DOUBLES,
                                 "|tau_ext| beyond this [N m or N] is a collision, one per "
                                 "chain joint or one for all. Unset: 6 % of the URDF effort "
                                 "limits.", RUNTIME),
    "collision_reaction": Spec("hold", STRING,
                               "What a collision does: hold (leave any desired motion for the "
                               "safe hold, latched until a new desired motion or "
                               "~/reset_observer) or none (reported only).", RUNTIME),
    "wrench_damping": Spec(0.02, DOUBLE,
                           "Damping of the least squares that turns tau_ext into the tip "
                           "wrench ~/external_wrench (keeps it finite at singular poses).",
                           RUNTIME),
    "max_payload_mass": Spec(5.0, DOUBLE, "Largest payload mass [kg] accepted at start-up and "
                             "by ~/set_payload.", READ_ONLY),
    "allow_model_changes": Spec(True, BOOL, "Whether ~/set_payload, ~/identify_payload and "
                                "~/identify_arm (apply) may change the model while running.",
                                READ_ONLY),
    "marker_rate": Spec(10.0, DOUBLE, "Rate [Hz] of the rviz2 markers and the tip wrench; 0 "
                        "disables them.", RUNTIME),
    "frame_prefix": Spec("", STRING, "Prefix of every frame_id the node publishes and takes, as "
                         "robot_state_publisher's frame_prefix: two arms on one /tf, each with "
                         "its own (two_arms.launch.py: left/, right/).", READ_ONLY),
    "marker_labels": Spec(True, BOOL, "Whether ~/markers carries the table of gravity "
                          "torques beside the base.", RUNTIME),
    "diagnostics_rate": Spec(1.0, DOUBLE, "Rate [Hz] of /diagnostics.", RUNTIME),
    "thread_priority": Spec(0, INTEGER,
                            "SCHED_FIFO priority (1-99) of the thread that takes joint_states "
                            "and publishes the commands, like ros2_control's "
                            "controller_manager thread_priority; 0: the normal scheduler. "
                            "Needs permission (root, or an rtprio limit in "
                            "/etc/security/limits.conf): without it the node warns and runs on "
                            "the normal scheduler.", READ_ONLY),
}

ENGINES = ("internal", "mujoco")

SIM_ARM = {
    **CHAIN,
    **CLOSED_LINKAGE,
    "engine": Spec("internal", STRING, "What advances the arm: internal (the library's "
                   "dynamics and `integrator`) or mujoco (MuJoCo from the same URDF, its "
                   "scheme of the same kind; checked against the library at start-up).",
                   READ_ONLY),
    "armature": Spec(None, DOUBLES, "Rotor inertia per joint [kg·m² or kg], n values or one "
                     "for all; engine mujoco. Unset: none.", READ_ONLY),
    "obstacle_box": Spec(None, DOUBLES, "A box the arm's links can touch; engine mujoco: "
                         "centre x, y, z in base_link's frame and edge lengths [m]. Unset: "
                         "none.", READ_ONLY),
    "hand_stand_in": Spec(None, DOUBLES, "A hand in the tool's way (ISO/TS 15066's: 75 N/mm "
                          "before 0.6 kg): its face x, y, z [m] and the direction the tool "
                          "comes from, base frame; its force on ~/hand_force. Unset: none.",
                          READ_ONLY),
    "hand_stand_in_clamped": Spec(False, BOOL, "The hand against a wall (it cannot move "
                                  "away).", READ_ONLY),
    "integrator": Spec("rk4", STRING, f"One of {sorted(INTEGRATORS)}.", READ_ONLY),
    "time_step": Spec(0.001, DOUBLE, "Integration step [s].", READ_ONLY),
    "publish_rate": Spec(1000.0, DOUBLE, "joint_states rate [Hz]; the simulation advances in "
                         "real time.", READ_ONLY),
    "command_timeout": Spec(0.05, DOUBLE, "A command older than this [s] engages the brakes "
                            "(zero torque without brakes).", READ_ONLY),
    "lockstep": Spec(False, BOOL, "Advance by one publish period only once an effort command "
                     "has arrived for the last joint_states, and publish simulated time on "
                     "/clock from 0 (run the other nodes with use_sim_time): a closed loop that "
                     "does not depend on the machine's speed or load. Never advances without "
                     "the command: after lockstep_timeout of wall time it publishes the same "
                     "state again. False: simulated time follows the clock.", READ_ONLY),
    "lockstep_timeout": Spec(0.05, DOUBLE, "With lockstep: wall time [s] without the command "
                             "after which the last /clock and joint_states are published "
                             "again (identical: a message lost or a controller starting).",
                             READ_ONLY),
    "lockstep_silence": Spec(5.0, DOUBLE, "With lockstep, once commands have come: wall time "
                             "[s] without one after which the controller is taken as silent, "
                             "as a drive's watchdog takes it: simulated time goes on without "
                             "it, one publish period per timer tick (the last command held for "
                             "command_timeout, then the brakes), until a command comes again. "
                             "The loop stays the same on any machine while the controller "
                             "answers within this.", READ_ONLY),
    "lockstep_max_speed": Spec(1.0, DOUBLE, "With lockstep: the fastest simulated time may "
                               "run, as a multiple of real time (1: never faster than real "
                               "time, as a real arm; 0: as fast as the loop goes).",
                               READ_ONLY),
    "lockstep_supervised": Spec(False, BOOL, "With lockstep: simulated time never passes the "
                                "latest time received on ~/run_until (rosgraph_msgs/Clock, "
                                "reliable, transient local), 0 until one arrives: a supervisor "
                                "(a test, the demo) acts on a paused simulation; ~/paused (the same type "
                                "and QoS) says where it holds, its last state answered.",
                                READ_ONLY),
    "friction": Spec(False, BOOL, "Apply joint friction: the URDF's <dynamics damping "
                     "friction>, or joint_damping / joint_friction when set.", READ_ONLY),
    "joint_damping": Spec(None, DOUBLES, "Viscous joint friction of the simulated arm "
                          "[N·m·s/rad or N·s/m], n values or one for all (with friction). "
                          "Unset: the URDF's.", READ_ONLY),
    "joint_friction": Spec(None, DOUBLES, "Coulomb joint friction of the simulated arm [N·m "
                           "or N], n values or one for all (with friction). Unset: the "
                           "URDF's.", READ_ONLY),
    "brakes": Spec(True, BOOL, "Hold the arm still until the first effort command arrives, and "
                   "again whenever the command times out.", READ_ONLY),
    "effort_noise": Spec(0.0, DOUBLE, "Standard deviation [N m or N] of Gaussian noise added to "
                         "the published efforts (a torque sensor's noise).", READ_ONLY),
    "noise_seed": Spec(0, INTEGER, "Seed of effort_noise (the same seed, the same noise: "
                       "runs repeat exactly); negative: a fresh seed each run.", READ_ONLY),
    "initial_positions": Spec(None, DOUBLES, "Initial joint positions, chain order [rad or m]. "
                              "Unset: zeros.", READ_ONLY),
}

# the optional parameters of both nodes (no default: an empty array when unset)
OPTIONAL = {name: spec for name, spec in {**DYNAMICS_NODE, **SIM_ARM}.items()
            if spec.default is None}

# per-joint parameters (n values or one for all) → whether 0 is excluded
PER_JOINT = {"kp": False, "kd": False, "viscous_friction": False, "coulomb_friction": False,
             "max_torque_rate": True, "start_tolerance": True, "max_tracking_error": True,
             "hold_damping": False, "armature": False, "joint_damping": False,
             "effort_limits": True, "velocity_limits": True,
             "joint_friction": False, "observer_gain": False, "torque_constants": True,
             "contact_thresholds": True, "collision_thresholds": True, "stop_deceleration": True,
             "cartesian.nullspace_stiffness": False, "cartesian.nullspace_torque_max": True}

# name → the test its value must pass (the reason names the parameter and its value)
RANGES = {
    "stale_timeout": lambda v: 0.0 < v < math.inf,
    "hold_timeout": lambda v: 0.0 < v < math.inf,
    "hold_decay_rate": lambda v: 0.0 < v <= 1000.0,
    "hold_push_force": lambda v: 0.0 <= v < math.inf,
    "cross_check_rate": lambda v: 0.0 <= v <= 1000.0,
    "cross_check_tolerance": lambda v: 0.0 < v < math.inf,
    "marker_rate": lambda v: 0.0 <= v <= 100.0,
    "diagnostics_rate": lambda v: 0.0 < v <= 100.0,
    "thread_priority": lambda v: 0 <= v <= 99,
    "max_payload_mass": lambda v: 0.0 <= v < math.inf,
    "payload_mass": lambda v: 0.0 <= v < math.inf,
    "time_step": lambda v: 0.0 < v <= 0.1,
    "hand_stand_in": lambda v: v is None or len(v) in (0, 6),
    "passive_joint_tolerance": lambda v: 0.0 < v < math.inf,
    "publish_rate": lambda v: 0.0 < v <= 10_000.0,
    "command_timeout": lambda v: 0.0 < v < math.inf,
    "lockstep_timeout": lambda v: 0.0 < v < math.inf,
    "lockstep_silence": lambda v: 0.0 < v < math.inf,
    "lockstep_max_speed": lambda v: 0.0 <= v < math.inf,
    "wrench_damping": lambda v: 0.0 <= v < math.inf,
    "effort_noise": lambda v: 0.0 <= v < math.inf,
    "constraints.goal_time": lambda v: 0.0 <= v < math.inf,
    "constraints.stopped_velocity_tolerance": lambda v: 0.0 <= v < math.inf,
    "action_monitor_rate": lambda v: 0.0 < v <= 1000.0,
    "cartesian.stiffness": lambda v: len(v) == 6 and all(0.0 <= x < math.inf for x in v),
    "cartesian.max_stiffness": lambda v: len(v) == 6 and all(0.0 <= x < math.inf for x in v),
    "cartesian.damping_ratio": lambda v: 0.0 < v <= 2.0,
    "cartesian.max_position_error": lambda v: 0.0 < v <= 1.0,
    "cartesian.max_orientation_error": lambda v: 0.0 < v <= math.pi,
    **PERSON_RANGES,
}
CHOICES = {"backend": list(BACKENDS), "integrator": sorted(INTEGRATORS),
           "engine": list(ENGINES), "effort_source": ["torque", "current"],
           "collision_reaction": list(COLLISION_REACTIONS), "cartesian.law": list(LAWS),
           **PERSON_CHOICES}
# fractions of the URDF limits, in control/limits.py's SCALE_RANGE
SCALES = ("torque_limit_scale", "velocity_limit_scale")

"""A payload identification driven by the node: the goal's rules, the pose plan, the
recording, the provisional payloads between poses and what is applied. No ROS here:
ros/actions/identify_payload.py serves it as ~/identify_payload.

A goal has the fields of robo_dynamics_interfaces/IdentifyPayload's goal (link, poses given
as an array here, pose_count, move_time, settle_time, record_time, duration, tare, use_tare,
estimate_inertia, apply). Times in s, poses (K, n) in model joint order.
"""

import numpy as np

from ..control import controller as core
from ..io.state_derivatives import velocities_and_accelerations
from .payload_identification import (SIGNIFICANT, identify_payload, provisional_payload,
                                     static_poses)
from .pose_recording import PoseRecording, TimedRecording

DEFAULT_POSES, MAX_POSES = 8, 50
MAX_RECORD_SECONDS = 120.0      # a recording of the arm moving on its own (goal.duration)
MODEL_CHANGE_DELAY = 0.1        # s after its data that a model change takes effect
VELOCITY_SHARE = 0.5            # of each joint's velocity bound: the fastest a planned move goes


def pose_spread(n):
    """How far [rad or m] chosen poses go from the current pose, per joint: the two wrist
    joints before the last turn the payload against gravity in every direction; the last
    joint, the lightest, stays (the payload's unknown inertia would pull it off the moves),
    the others stay near."""
    spread = np.full(n, 0.2)
    spread[-3:-1] = 0.6
    spread[-1] = 0.0
    return spread


def timing(goal):
    """(move, settle, record) times of a goal [s], its zeros replaced by the defaults."""
    return goal.move_time or 3.0, goal.settle_time or 1.0, goal.record_time or 1.0


class IdentificationSession:
    """The identification of one node: at most one recording under way, and the last tare."""

    def __init__(self):
        self.recording = None     # the PoseRecording or TimedRecording under way
        self.tare = None          # (poses (K, n), mean torques (K, n)) of the last tare

    def check(self, goal, controller, model):
        """ValueError with the reason when `goal` cannot start now."""
        if self.recording is not None:
            raise ValueError("an identification is already under way")
        model.payload_frame(goal.link)        # a moving link or the tip, else refused
        if goal.tare and goal.use_tare:
            raise ValueError("tare and use_tare exclude each other")
        if goal.duration and (goal.tare or goal.use_tare):
            raise ValueError("a tare is recorded at poses: not with duration")
        if not 0.0 <= goal.duration <= MAX_RECORD_SECONDS:
            raise ValueError(f"duration must be 0 (poses) or up to {MAX_RECORD_SECONDS} s, "
                             f"got {goal.duration}")
        if goal.use_tare and self.tare is None:
            raise ValueError("use_tare: no tare recorded yet (a goal with tare: true)")
        if not controller.running:
            raise ValueError("no fresh joint states: the arm is not under control")
        missing = [name for name, tau in zip(model.joint_names, controller.measured_torque())
                   if tau != tau]
        if missing:
            raise ValueError(f"the joint states carry no effort for {missing}: nothing to "
                             "identify from")

    def poses(self, goal, given, q, solver, velocity_bound):
        """The goal's poses (K, n): `given` (an array, or None), the tare's, or chosen near
        q so that every quintic move stays well inside VELOCITY_SHARE of the bound."""
        if given is not None:
            if len(given) > MAX_POSES:
                raise ValueError(f"at most {MAX_POSES} poses, got {len(given)}")
            if goal.use_tare and not np.allclose(given, self.tare[0], atol=1e-6):
                raise ValueError("use_tare: the poses must be the tare's (or empty)")
            return given
        if goal.use_tare:
            return self.tare[0]
        count = goal.pose_count or DEFAULT_POSES
        if not 2 <= count <= MAX_POSES:
            raise ValueError(f"pose_count must be 2 to {MAX_POSES}, got {count}")
        # consecutive poses up to 2 × spread apart, a quintic move's peak speed 15/8 of the
        # mean: every move at most 0.9 VELOCITY_SHARE of the bound
        reach = (0.9 * VELOCITY_SHARE * velocity_bound * timing(goal)[0]
                 / (2.0 * 15.0 / 8.0))
        return static_poses(solver, goal.link, q, np.minimum(pose_spread(len(q)), reach),
                            count)

    def start(self, goal, q, poses, now):
        """The recording of a goal from state q at `now`: timed (goal.duration) or through
        `poses`."""
        if goal.duration:
            return TimedRecording(now, goal.duration)
        return PoseRecording(q, poses, now, *timing(goal))

    @staticmethod
    def too_fast(trajectory, velocity_bound, joint_names):
        """Why a planned motion is too fast (a joint beyond VELOCITY_SHARE of its velocity
        bound), or None."""
        times = np.arange(0.0, trajectory.times[-1], 0.01)
        _, qd, _ = trajectory.sample_many(times)
        peak = np.abs(qd).max(axis=0) if len(times) else np.zeros(len(velocity_bound))
        over = np.flatnonzero(peak > VELOCITY_SHARE * velocity_bound)
        if not over.size:
            return None
        j = over[0]
        return (f"'{joint_names[j]}' would move at {peak[j]:.3g} rad/s, beyond "
                f"{VELOCITY_SHARE:.0%} of its velocity bound {velocity_bound[j]:.3g}: give "
                "a longer move_time or closer poses")

    def record(self, now, controller):
        """Give the controller's state to the recording; False when the arm has left the
        plan (a hold, another desired motion): the recording is then interrupted."""
        run = self.recording
        if run.trajectory is None or (controller.motion is run.trajectory
                                      and controller.mode == core.TRACKING):
            merger = controller.merger
            run.add(now, merger.q, merger.qd, controller.measured_torque())
            return True
        run.interrupted = (f"safe hold: {controller.hold_reason}"
                           if controller.mode == core.HOLD
                           else "another desired motion replaced the poses")
        self.recording = None
        return False

    @staticmethod
    def provisional(run, pose, fit_solver, link, original_com):
        """(mass, com) the states of poses 0 … `pose` suggest (provisional_payload), or
        None; the centre of mass `original_com` until the poses show it."""
        if not run.samples:
            return None
        q, qd, tau, index = run.arrays()
        mine = index <= pose
        return provisional_payload(fit_solver, link, q[mine], qd[mine],
                                   np.zeros_like(q[mine]), tau[mine], original_com,
                                   index[mine])

    def fit(self, run, fit_solver, goal, submit):
        """After the recording: the PayloadEstimate, or for a tare goal its sentence (the
        tare kept). submit(function, *args) runs the fit (a background thread). ValueError
        with the reason."""
        if run.trajectory is None:            # recorded while the arm moved: q̈ from q̇
            times, q, qd, tau = run.arrays()
            qd, qdd = velocities_and_accelerations(times, q, qd)
            return submit(identify_payload, fit_solver, goal.link, q, qd, qdd, tau, None,
                          goal.estimate_inertia)
        if run.interrupted:
            hint = ("; an unknown payload can pull light joints off the poses: declare an "
                    "approximate one first (~/set_payload) or raise kp"
                    if "tracking error" in run.interrupted else "")
            raise ValueError(f"the poses were interrupted: {run.interrupted}{hint}")
        q, qd, tau, pose = run.arrays()
        if goal.tare:
            self.tare = (run.poses, run.pose_means())
            return f"tare recorded at {len(run.poses)} poses ({len(q)} joint states)"
        tare = self.tare[1][pose] if goal.use_tare else None
        return submit(identify_payload, fit_solver, goal.link, q, qd, np.zeros_like(q), tau,
                      tare, False, pose)


def applied_com(estimate):
    """(com to apply, the axes set to 0): what the fit cannot tell from zero is applied as
    zero (on a light last joint a tenth of a millimetre off its axis is a pull)."""
    found = np.abs(estimate.com) > SIGNIFICANT * estimate.com_std
    return (np.where(found, estimate.com, 0.0),
            [axis for axis, f in zip("xyz", found) if not f])


def interrupted_sentence(reason, moved, duration):
    """Why an arm identification that had been moving the arm for `moved` of its `duration`
    [s] ended early (`reason`: the recording's interruption), with what to change."""
    if "tracking error" in reason:
        hint = ("the URDF's error pulls a joint off the excitation at these gains: raise kp "
                "and kd (e.g. 400 and 40), raise max_tracking_error, or lower the goal's "
                "velocity_share")
    elif "velocity" in reason:
        hint = "lower the goal's velocity_share, or raise velocity_limit_scale"
    elif "collision" in reason:
        hint = ("the external-torque observer took the URDF's error for a push: set "
                "collision_reaction none, or raise collision_thresholds, while identifying")
    else:
        hint = "send the goal again once the arm is still"
    return (f"interrupted after {moved:.2f} s of its {duration:.3g} s motion: {reason}; "
            f"{hint}")

"""~/identify_arm (robo_dynamics_interfaces/IdentifyArm): the whole arm identified by driving
it through an excitation (identification/arm_identification.py,
consistent_parameters.py), served on the identification helper's node and threads
(identify_payload.py), one identification at a time.

The goal's execute callback designs the excitation around the pose where the arm stands,
has the controller track it (its safety envelope, as any desired motion) while the
joint-state thread records (node.session, as for a payload), then fits on all periods but
the last, writes the corrected URDF and predicts the held-out period. With `apply` the
corrected model replaces the node's, scheduled MODEL_CHANGE_DELAY after the recording's end
(control/model_changes.py: on simulated time on the same joint state on every machine),
where the arm holds still.
"""

import threading
import traceback

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup

from robo_dynamics_interfaces.action import IdentifyArm

from ...backends import make_solver
from ...control.model_changes import WAIT as MODEL_CHANGE_WAIT, resolve
from ...control.trajectory import SetPoint
from ...identification import arm_identification as ai
from ...identification.arm_fit import fit_recording
from ...identification.consistent_parameters import require_solver
from ...identification.fit_process import BACKGROUND_NICE, run_in_process
from ...identification.identification_session import MODEL_CHANGE_DELAY, interrupted_sentence
from ...identification.pose_recording import TimedRecording
from ...model.loader import load_robot

POLL = 0.05           # s between looks at the recording
LATE = 1.0            # s of node time after which a state not yet recorded is not awaited


class ArmIdentification:
    """The ~/identify_arm server of `owner` (a DynamicsNode) on `helper` (the
    IdentificationAction, whose node, threads and one-goal lock it shares)."""

    def __init__(self, owner, helper):
        self.owner, self.helper = owner, helper
        self.server = ActionServer(
            helper.node, IdentifyArm, f"{owner.get_fully_qualified_name()}/identify_arm",
            execute_callback=self._execute, goal_callback=self._goal,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup())

    def _goal(self, _request):
        return GoalResponse.REJECT if self.helper.busy.locked() else GoalResponse.ACCEPT

    def _execute(self, goal_handle):
        result = IdentifyArm.Result()
        try:
            with self.helper.busy:
                return self._run(goal_handle, goal_handle.request, result)
        except ValueError as exc:
            return self._end(goal_handle, result, f"refused: {exc}", goal_handle.abort)
        except Exception as exc:
            self.owner.get_logger().error(f"identify_arm failed:\n{traceback.format_exc()}")
            return self._end(goal_handle, result, f"internal error ({type(exc).__name__}: "
                             f"{exc}); logged by the node", goal_handle.abort)

    def _end(self, goal_handle, result, message, state):
        result.message = message
        state()
        self.owner.get_logger().info(f"identify_arm: {message}")
        return result

    def _run(self, goal_handle, goal, result):
        """The goal checked, the arm held where it stands, the excitation designed there and
        started, then recorded and fitted."""
        period, periods, share = self._checked(goal)
        model, q0, settings = self._hold_where_it_stands()
        solver = make_solver(model, "pinocchio")       # this thread's own
        excitation, condition = ai.excitation_for(
            model, solver, ai.BaseParameters(model), q0, settings, period,
            goal.harmonics or 5, share, goal.max_acceleration or 10.0)
        run, change = self._start(excitation, q0, periods, goal.apply)
        try:
            ended, message = self._record_and_fit(goal_handle, goal, result, run, model,
                                                  excitation, condition, change)
        finally:
            live, node = self.owner.live, self.owner
            with live.lock:
                if node.session.recording is run:
                    node.session.recording = None
            if change is not None:
                node.model_changes.drop([change])    # nothing left to wait for
        if ended is not None:                         # cancelled, interrupted, not fitted
            return ended
        result.success = result.applied or change is None
        return self._end(goal_handle, result, message,
                         goal_handle.succeed if result.success else goal_handle.abort)

    def _checked(self, goal):
        """(period [s], periods, velocity share) of the goal, its defaults applied;
        ValueError with the reason where the goal or the node cannot run it."""
        period = goal.period or 10.0
        periods = goal.periods or 2
        share = goal.velocity_share or 0.5
        if not (0.0 < period < np.inf and periods >= 2 and 0.0 < share <= 1.0
                and goal.harmonics <= 20 and goal.max_acceleration >= 0.0):
            raise ValueError("period > 0, periods ≥ 2, 0 < velocity_share ≤ 1, harmonics ≤ "
                             "20, max_acceleration ≥ 0")
        require_solver()            # before the arm moves, not after its motion
        if getattr(self.owner.live.model, "mechanism", None) is not None:
            raise ValueError("whole-arm identification of a closed linkage is not written yet")
        if goal.apply and not self.owner.get_parameter("allow_model_changes").value:
            raise ValueError("apply: model changes are disabled (allow_model_changes is false)")
        return period, periods, share

    def _hold_where_it_stands(self):
        """(model, q0, settings): the arm held at q0, where it stands, while the motion is
        designed. ValueError where it cannot be identified now."""
        node, live = self.owner, self.owner.live
        with live.lock:
            state = None if live.controller is None else live.controller.measured_state()
            if state is None:
                raise ValueError("no complete joint state yet")
            if node.session.recording is not None:
                raise ValueError("an identification is recording already")
            model, q0 = live.model, state[0]
            if model.is_coupled or len(model.payloads):
                raise ValueError("chains with mimic joints or payloads are not identified yet")
            if not np.isfinite(live.controller.measured_torque()).all():
                raise ValueError("the joint states carry no effort for every joint")
            settings = live.controller.settings
            event = live.controller.desire(SetPoint(q0, np.zeros_like(q0)), live.now())
            live.report(event)
            if event.kind != "tracking":
                raise ValueError(event.message)
        return model, q0, settings

    def _start(self, excitation, q0, periods, apply):
        """(the recording, its model change or None): the excitation started from where the
        hold keeps the arm (within MARGIN of the design's q0) and recorded."""
        node, live = self.owner, self.owner.live
        with live.lock:
            now, q_start = live.now(), live.controller.measured_state()[0]
            if np.max(np.abs(q_start - q0)) > ai.MARGIN:
                raise ValueError(f"the arm did not stay within {ai.MARGIN:g} rad of where it "
                                 "stood while the motion was designed")
            excitation.q0, excitation.start, excitation.periods = q_start, now, periods
            run = TimedRecording(now, periods * excitation.period)
            run.trajectory = excitation           # recorded while the controller tracks it
            event = live.controller.desire(excitation, now)
            live.report(event)
            if event.kind != "tracking":
                raise ValueError(event.message)
            node.session.recording = run
            return run, (node.model_changes.add(run.end + MODEL_CHANGE_DELAY) if apply
                         else None)

    def _record_and_fit(self, goal_handle, goal, result, run, model, excitation, condition,
                        change):
        """Follow the recording to its end, fit it, apply the corrected chain if asked:
        (the goal's ended result, None) where it ends early, else (None, the sentence)."""
        if not self._follow(goal_handle, run):
            return self._end(goal_handle, result, "cancelled: the arm holds where it is",
                             goal_handle.canceled), None
        with self.owner.live.lock:
            if self.owner.session.recording is run:
                self.owner.session.recording = None
        if run.interrupted:
            return self._end(goal_handle, result, interrupted_sentence(
                run.interrupted, max(run.seen - run.windows[0][0], 0.0),
                run.end - run.windows[0][0]), goal_handle.abort), None
        try:
            corrected = self._fit(run, model, goal, result, excitation, condition)
        except ValueError as exc:        # the arm has moved: not a refusal
            return self._end(goal_handle, result, f"the fit failed after the motion: {exc}",
                             goal_handle.abort), None
        message = (f"{result.identified} of {result.base_parameters} base parameters "
                   f"identified; held out: {100 * result.identified_error_all:.1f} % "
                   f"against the URDF's {100 * result.urdf_error_all:.1f} %")
        if change is not None:
            refused = self._apply(corrected, result, change)
            result.applied = refused is None
            message += f"; not applied: {refused}" if refused else "; applied"
        return None, message

    def _apply(self, corrected, result, change):
        """Schedule the corrected model (through `change`) if it predicts the held-out period
        better than the URDF. None once the node uses it, else why not."""
        node, prepared = self.owner, None
        try:
            if not result.identified_error_all < result.urdf_error_all:
                return "it predicts the held-out period no better than the URDF"
            prepared = node.prepare_chain(
                corrected, f"identified model in use (held out: "
                f"{100 * result.identified_error_all:.1f} % against the URDF's "
                f"{100 * result.urdf_error_all:.1f} %)")
        except ValueError as exc:
            return str(exc)
        finally:
            resolve(change.change, prepared)
        if node.model_changes.wait(change, MODEL_CHANGE_WAIT) is None:
            return "the change was dropped (the arm left the motion)"
        return None

    def _follow(self, goal_handle, run):
        """Feedback until the recording's end; False when cancelled (the arm then holds)."""
        live = self.owner.live
        feedback = IdentifyArm.Feedback(duration=run.end - run.windows[0][0])
        wake = threading.Event()
        while max(run.seen, live.now() - LATE) <= run.end and not run.interrupted:
            if goal_handle.is_cancel_requested:
                with live.lock:
                    state = live.controller.measured_state()
                    if state is not None:
                        live.report(live.controller.desire(
                            SetPoint(state[0], np.zeros_like(state[0])), live.now()))
                return False
            feedback.elapsed = max(run.seen - run.windows[0][0], 0.0)
            feedback.samples = run.samples
            goal_handle.publish_feedback(feedback)
            wake.wait(POLL)
        return True

    def _fit(self, run, model, goal, result, excitation, condition):
        """Fill the result from the recording (the fit in a process of its own: it never
        holds this process's GIL, which the joint-state thread needs); the corrected model
        (a RobotModel)."""
        t, q, qd, tau = run.arrays()
        # below the node's priority on the system clock (the command stream goes first); at
        # its own on simulated time, where the loop waits for the fit (model_changes.py)
        fit = run_in_process(fit_recording, model, t, q, qd, tau, run.end - excitation.period,
                             nice=0 if self.owner.on_simulated_time() else BACKGROUND_NICE)
        # the held-out states are those fit_recording held out: from the last period on
        if goal.output_urdf:
            with open(goal.output_urdf, "w", encoding="utf-8") as stream:
                stream.write(fit["text"])
            result.corrected_urdf = goal.output_urdf
        measured = tau[t >= run.end - excitation.period]
        for field, name in (("urdf", "URDF"), ("identified", "identified")):
            predicted = fit["predicted"][name]
            setattr(result, f"{field}_error", ai.nrms(measured, predicted).tolist())
            setattr(result, f"{field}_error_all", ai.pooled_nrms(measured, predicted))
        result.base_parameters, result.identified = fit["base_parameters"], fit["identified"]
        result.condition_number, result.samples = float(condition), fit["samples"]
        result.joint_names = list(model.joint_names)
        result.sigma = fit["sigma"].tolist()
        result.viscous_friction = fit["friction"][:, 0].tolist()
        result.coulomb_friction = fit["friction"][:, 1].tolist()
        return load_robot(fit["text"], base_link=model.base_link, tip_link=model.tip_link,
                          gravity=model.gravity).with_armature(model.armature)

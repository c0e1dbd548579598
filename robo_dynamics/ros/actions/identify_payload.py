"""~/identify_payload (robo_dynamics_interfaces/IdentifyPayload): the action server, on a
helper node and thread of its own, over identification/identification_session.py.

A goal runs for as long as the arm takes through its poses (tens of seconds): its execute
callback waits for that, so it must not be on the main node's executor (its timers and
services would wait too) nor on the joint-state thread. The helper's executor has two
threads, so that a cancel request is taken while a goal waits. The helper node
(`<node>_identification`, same namespace, no parameters) serves the action under the main
node's name. The joint-state thread feeds the recording meanwhile (node.session) and swaps
in the model changes at the times scheduled here (node.model_changes: on simulated time
the same joint state on every machine, however late this thread looks).
"""

import threading
import traceback

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from robo_dynamics_interfaces.action import IdentifyPayload

from ...backends import make_solver
from ...control.joint_order import order_of
from ...control.model_changes import WAIT as MODEL_CHANGE_WAIT
from ...control.model_changes import resolve
from ...control.solver_set import model_with
from ...control.trajectory import SetPoint
from ...identification.identification_session import MODEL_CHANGE_DELAY, applied_com
from ...identification.payload_identification import SIGNIFICANT
from ...identification.pose_recording import DONE
from .. import conversions
from ..helper_node import HelperNode
from .identify_arm import ArmIdentification

POLL = 0.05              # s between looks at the recording (feedback, end, cancel)
LATE = 1.0               # s of node time after which a state not yet recorded is not awaited


class IdentificationAction(HelperNode):
    """The action server of `owner` (a DynamicsNode), spun on a daemon thread."""

    def __init__(self, owner):
        super().__init__(owner, "identification")
        self.owner = owner
        self.busy = threading.Lock()         # one identification at a time (either action)
        self.server = ActionServer(
            self.node, IdentifyPayload, f"{owner.get_fully_qualified_name()}/identify_payload",
            execute_callback=self._execute, goal_callback=self._goal,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup())
        self.arm = ArmIdentification(owner, self)        # ~/identify_arm, on this node
        # two threads: one waits in a goal's execute callback, the other takes cancel,
        # goal and result requests meanwhile
        self.start(MultiThreadedExecutor(num_threads=2, context=owner.context))

    def _goal(self, _request):
        return GoalResponse.REJECT if self.busy.locked() else GoalResponse.ACCEPT

    def _execute(self, goal_handle):
        """Drive, record, fit: the result, success false with the reason when refused,
        interrupted or cancelled (the arm then holds where it is). A bug is logged with its
        traceback and ends the goal as aborted, "internal error"; the node carries on."""
        try:
            return self._run(goal_handle)
        except Exception as exc:
            self.owner.get_logger().error(f"identify_payload failed:\n{traceback.format_exc()}")
            return self._end(goal_handle, IdentifyPayload.Result(),
                             f"internal error ({type(exc).__name__}: {exc}); logged by the node",
                             goal_handle.abort)

    def _run(self, goal_handle):
        goal, result = goal_handle.request, IdentifyPayload.Result()
        with self.busy:
            try:
                run, solver, original, (refinements, final) = \
                    self._begin(goal)
            except ValueError as exc:
                return self._end(goal_handle, result, f"refused: {exc}", goal_handle.abort)
            try:
                return self._follow(goal_handle, goal, result, run, solver, original,
                                    refinements, final)
            finally:
                self.owner.model_changes.drop(refinements + [final])
                if not result.applied:
                    self._restore(goal.link, original)

    def _follow(self, goal_handle, goal, result, run, solver, original, refinements, final):
        """Feedback until the last pose is recorded (a provisional payload prepared after
        each pose, for the node to apply at the time it scheduled), then the fit."""
        feedback = IdentifyPayload.Feedback(poses=len(run.windows))
        wake, refined = threading.Event(), 0
        while True:
            if goal_handle.is_cancel_requested:
                self._cancel(run)
                return self._end(goal_handle, result, "cancelled: the arm holds where it is",
                                 goal_handle.canceled)
            # the recording's time: the latest state it has kept (the node's clock runs
            # ahead of the joint-state thread), or the clock LATE behind if states stop
            now = max(run.seen, self.owner.live.now() - LATE)
            pose, phase = run.phase(now)
            while refined < len(refinements) and now > run.windows[refined][1]:
                self._refine(run, refined, solver, goal, original, refinements[refined])
                refined += 1
            if phase == DONE or run.interrupted:
                break
            feedback.pose, feedback.phase, feedback.samples = pose + 1, phase, run.samples
            goal_handle.publish_feedback(feedback)
            wake.wait(POLL)
        try:
            message = self._finish(run, solver, goal, result, final)
        except ValueError as exc:
            return self._end(goal_handle, result, str(exc), goal_handle.abort)
        result.success = True
        return self._end(goal_handle, result, message, goal_handle.succeed)

    def _end(self, goal_handle, result, message, state):
        result.message = message
        state()
        self.owner.get_logger().info(f"identify_payload: {message}")
        return result

    # -- the session, on the node -------------------------------------------------------------
    def _begin(self, goal):
        """Check the goal, plan its poses and start driving the arm through them: (the
        recording, the solver to fit with: the arm without a payload at goal.link, the payload
        in use at goal.link or None, (ScheduledChange per provisional payload, the result's)).
        ValueError with the reason."""
        node, live, session = self.owner, self.owner.live, self.owner.session
        with live.lock:
            controller, model = live.controller, live.model
            if controller is None:
                raise ValueError("no robot description yet")
            session.check(goal, controller, model)
            payloads = {k: v for k, v in live.payloads.items() if k != goal.link}
            original = live.payloads.get(goal.link)
            q = controller.measured_state()[0]
            bound = controller.settings.velocity_bound
        fit_solver = make_solver(model_with(live.urdf_model, payloads), "rnea")  # code
        changes = not goal.tare and node.get_parameter("allow_model_changes").value  # generation
        given = _given_poses(goal, model) if goal.poses.points else None        # unlocked
        poses = None if goal.duration else session.poses(goal, given, q, fit_solver, bound)
        with live.lock:
            now = live.now()
            run = session.start(goal, live.controller.measured_state()[0], poses, now)
            if run.trajectory is None:
                session.recording = run
                return run, fit_solver, original, self._schedule(run, [])
            fault = session.too_fast(run.trajectory, bound, model.joint_names)
            event = (live.controller.refuse(f"identification poses refused: {fault}") if fault
                     else live.controller.desire(run.trajectory, now))
            if event.kind == "tracking":
                session.recording = run
                scheduled = self._schedule(
                    run, [end for _, end in run.windows[:-1]] if changes else [])
        live.report(event)
        if event.kind != "tracking":
            raise ValueError(event.message)
        return run, fit_solver, original, scheduled

    def _schedule(self, run, refinements):
        """The model changes of an identification, each MODEL_CHANGE_DELAY after the data it
        rests on: a provisional payload after each recorded pose but the last (`refinements`:
        their window ends), then the result."""
        add = self.owner.model_changes.add
        return ([add(end + MODEL_CHANGE_DELAY) for end in refinements],
                add(run.end + MODEL_CHANGE_DELAY))

    def _refine(self, run, pose, fit_solver, goal, original, item):
        """After pose `pose` is recorded (not the last): item.change := the payload the poses
        so far suggest, at most max_payload_mass (prepared), or None. It takes effect
        MODEL_CHANGE_DELAY after that pose's window, so that the arm carries the payload
        better on the next moves (an unknown payload gives light wrist joints tracking
        errors)."""
        node, change = self.owner, None
        try:
            guess = node.session.provisional(run, pose, fit_solver, goal.link,
                                             (0.0, 0.0, 0.0) if original is None
                                             else original[1])
            if guess is not None:
                mass = min(guess[0], node.get_parameter("max_payload_mass").value)
                change = node.prepare_payload(goal.link, mass, guess[1], np.zeros((3, 3)))
        finally:
            resolve(item.change, change)

    def _cancel(self, run):
        """Stop recording; when the arm was driven through poses, it holds where it is."""
        node, live = self.owner, self.owner.live
        with live.lock:
            if node.session.recording is not run:
                return
            node.session.recording = None
            if run.trajectory is None:
                return
            q = live.controller.measured_state()[0]
            event = live.controller.desire(SetPoint(q, np.zeros_like(q)), live.now())
        live.report(event)

    def _finish(self, run, fit_solver, goal, result, final):
        """Fit (or keep the tare), fill the result, apply through `final` if asked; the
        result's message. ValueError with the reason."""
        node, live = self.owner, self.owner.live
        with live.lock:
            if node.session.recording is run:
                node.session.recording = None
        estimate = node.session.fit(run, fit_solver, goal,
                                    lambda *args: node.background.submit(*args).result())
        if isinstance(estimate, str):          # a tare
            return estimate
        conversions.fill_inertia(result.payload, estimate.mass, estimate.com, estimate.inertia)
        result.mass_std = estimate.mass_std
        result.com_std.x, result.com_std.y, result.com_std.z = estimate.com_std.tolist()
        result.inertia_identified = estimate.inertia_identified
        result.condition_number = estimate.condition_number
        result.joint_names = list(live.model.joint_names)
        result.rms_before = estimate.rms_before.tolist()
        result.rms_after = estimate.rms_after.tolist()
        result.samples = estimate.samples
        message = (f"{estimate.mass:.4g} ± {estimate.mass_std:.2g} kg at "
                   f"{np.array2string(estimate.com, precision=4)} m in '{goal.link}' "
                   f"({estimate.reason})")
        if goal.apply:
            com, zeroed = applied_com(estimate)
            try:
                final.change.set_result(node.prepare_payload(goal.link, estimate.mass, com,
                                                             estimate.inertia))
            except Exception:
                resolve(final.change, None)
                raise
            node.model_changes.wait(final, MODEL_CHANGE_WAIT)
            result.applied = True
            message += "; applied" + (f" (centre of mass {', '.join(zeroed)} within "
                                      f"{SIGNIFICANT:g} standard deviations of 0: applied "
                                      "as 0)" if zeroed else "")
        return message

    def _restore(self, link, payload):
        """Put back the payload (mass, com, inertia) or none (None) at `link`, unless it is
        still the one in use."""
        node, live = self.owner, self.owner.live
        with live.lock:
            unchanged = live.payloads.get(link) is payload
        if not unchanged and node.get_parameter("allow_model_changes").value:
            node.apply_payload(link, *(payload or (0.0, np.zeros(3), np.zeros((3, 3)))))

    def stop(self):
        """Stop the thread, the action servers and the helper node (idempotent). Each server
        is destroyed while its node lives: one left to the garbage collector would be
        finalised after the node, a crash."""
        if self.node is not None:
            self.server.destroy()
            self.arm.server.destroy()
        super().stop()


def _given_poses(goal, model):
    """The goal's poses (K, n) in model joint order."""
    names, n = model.joint_names, model.dof
    index = order_of(list(goal.poses.joint_names), names, "poses joint_names")
    return np.array([conversions.vector(point.positions, n, f"poses point {k} positions")[index]
                     for k, point in enumerate(goal.poses.points)])

"""~/identify_payload (robo_dynamics_interfaces/IdentifyPayload): the action server, on a
helper node and thread of its own.

A goal runs for as long as the arm takes through its poses (tens of seconds): its execute
callback waits for that, so it must not be on the main node's executor (its timers and
services would wait too) nor on the joint-state thread. The helper's executor has two
threads, so that a cancel request is taken while a goal waits. The helper node
(`<node>_identification`, same namespace, no parameters) serves the action under the main
node's name and calls the main node's public methods: begin_pose_recording,
refine_pose_recording, end_pose_recording, finish_pose_recording, end_model_changes
(dynamics_node.py); the joint-state thread feeds the recording meanwhile and swaps in the
model changes at the times the node scheduled (on simulated time, the same joint state on
every machine, however late this thread looks).
"""

import threading
import traceback

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor

from robo_dynamics_interfaces.action import IdentifyPayload

from ..control.pose_recording import DONE
from .helper_node import HelperNode

POLL = 0.05         # s between looks at the recording (feedback, end, cancel)


class IdentificationAction(HelperNode):
    """The action server of `owner` (a DynamicsNode), spun on a daemon thread."""

    def __init__(self, owner):
        super().__init__(owner, "identification")
        self.owner = owner
        self._busy = threading.Lock()        # one goal at a time
        self.server = ActionServer(
            self.node, IdentifyPayload, f"{owner.get_fully_qualified_name()}/identify_payload",
            execute_callback=self._execute, goal_callback=self._goal,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup())
        # two threads: one waits in a goal's execute callback, the other takes cancel,
        # goal and result requests meanwhile
        self.start(MultiThreadedExecutor(num_threads=2, context=owner.context))

    def _goal(self, _request):
        return GoalResponse.REJECT if self._busy.locked() else GoalResponse.ACCEPT

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
        with self._busy:
            try:
                run, solver, original, (refinements, final) = \
                    self.owner.begin_pose_recording(goal)
            except ValueError as exc:
                return self._end(goal_handle, result, f"refused: {exc}", goal_handle.abort)
            try:
                return self._follow(goal_handle, goal, result, run, solver, original,
                                    refinements, final)
            finally:
                self.owner.end_model_changes(refinements + [final])
                if not result.applied:
                    self.owner.restore_payload(goal.link, original)

    def _follow(self, goal_handle, goal, result, run, solver, original, refinements, final):
        """Feedback until the last pose is recorded (a provisional payload prepared after
        each pose, for the node to apply at the time it scheduled), then the fit."""
        feedback = IdentifyPayload.Feedback(poses=len(run.windows))
        wake, refined = threading.Event(), 0
        while True:
            if goal_handle.is_cancel_requested:
                self.owner.end_pose_recording(run)
                return self._end(goal_handle, result, "cancelled: the arm holds where it is",
                                 goal_handle.canceled)
            now = self.owner.now()
            pose, phase = run.phase(now)
            while refined < len(refinements) and now > run.windows[refined][1]:
                self.owner.refine_pose_recording(run, refined, solver, goal, original,
                                                 refinements[refined])
                refined += 1
            if phase == DONE or run.interrupted:
                break
            feedback.pose, feedback.phase, feedback.samples = pose + 1, phase, run.samples
            goal_handle.publish_feedback(feedback)
            wake.wait(POLL)
        try:
            message = self.owner.finish_pose_recording(run, solver, goal, result, final)
        except ValueError as exc:
            return self._end(goal_handle, result, str(exc), goal_handle.abort)
        result.success = True
        return self._end(goal_handle, result, message, goal_handle.succeed)

    def _end(self, goal_handle, result, message, state):
        result.message = message
        state()
        self.owner.get_logger().info(f"identify_payload: {message}")
        return result

    def stop(self):
        """Stop the thread, the action server and the helper node (idempotent)."""
        if self.node is not None:
            self.server.destroy()
        super().stop()

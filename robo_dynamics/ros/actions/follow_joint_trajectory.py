"""~/follow_joint_trajectory (control_msgs/FollowJointTrajectory): how MoveIt runs a plan on
this node, tracked by computed torque inside the controller's safety envelope
(control/follow_trajectory.py decides; this module converts and waits).

Every goal is accepted, then checked, so that one that cannot run ends ABORTED with the
error_code MoveIt reads and a sentence in error_string (a rejected goal would carry neither).
Besides the core's checks, the trajectory's torques with the payload in use must fit the
effort bounds (control/trajectory_check.py), else INVALID_GOAL naming the first violation
and the time scale that would fit. A new goal replaces a running one from its desired state:
the old one ends ABORTED, INVALID_GOAL, "replaced" (joint_trajectory_controller ends it so,
as cancelled; rclpy cannot cancel a goal nobody asked to cancel). A cancel slows the arm to a
stop along the path at stop_deceleration, then holds it there: CANCELED, SUCCESSFUL, with when.
Feedback at action_monitor_rate on the node's clock (simulated time under use_sim_time; the
goal's end is looked for at least every POLL_SECONDS of wall time): desired (desired.effort:
the model's torque for the desired motion, ID(q_d, q̇_d, q̈_d)), actual, error, in the
chain's joint order.

Tolerance defaults are parameters of the node, named as joint_trajectory_controller's:
constraints.<joint>.trajectory and .goal (declared once the chain is known),
constraints.goal_time, constraints.stopped_velocity_tolerance. Served from a helper node and
thread (helper_node.py), as ~/identify_payload: a goal's execute callback waits for its end.
"""

import math
import threading
import traceback

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.time import Time

from ...control import follow_trajectory as ft
from ...control.settings import per_joint
from ...control.trajectory import Trajectory
from ...control.trajectory_check import check_trajectory
from ..conversions import seconds
from ..helper_node import HelperNode
from ..parameter_tables import DOUBLE, JOINT_CONSTRAINTS

CHECK_PERIOD = 2e-3      # s between the samples of a goal's effort check
MAX_CHECK_SAMPLES = 200_000
POLL_SECONDS = 5e-3      # s of wall time between two looks at a running goal, at most


class TrajectoryAction(HelperNode):
    """The action server of `owner` (a DynamicsNode), spun on a daemon thread."""

    def __init__(self, owner):
        super().__init__(owner, "trajectory")
        self.owner = owner
        self.declared = set()          # the per-joint constraints declared on the owner
        self.closing = threading.Event()   # set by stop(): running goals end
        owner.add_on_set_parameters_callback(self._validate)
        self.declare_constraints()
        self.server = ActionServer(
            self.node, FollowJointTrajectory,
            f"{owner.get_fully_qualified_name()}/follow_joint_trajectory",
            execute_callback=self._execute, goal_callback=lambda _: GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
            callback_group=ReentrantCallbackGroup())
        # goals wait in their execute callbacks: a running one, its replacement, and one
        # thread for cancel and result requests meanwhile
        self.start(MultiThreadedExecutor(num_threads=4, context=owner.context))

    # -- parameters ---------------------------------------------------------------------------
    def declare_constraints(self):
        """Declare constraints.<joint>.trajectory and .goal for the chain's joints (once the
        chain is known; a params file's values apply then)."""
        model = self.owner.live.model
        for name in [] if model is None else model.joint_names:
            for kind, (default, description) in JOINT_CONSTRAINTS.items():
                parameter = f"constraints.{name}.{kind}"
                if parameter not in self.declared:
                    self.owner.declare_parameter(parameter, default, ParameterDescriptor(
                        name=parameter, type=DOUBLE, description=description))
                    self.declared.add(parameter)

    @staticmethod
    def _validate(changed):
        for p in changed:
            kind = p.name.rsplit(".", 1)[-1]
            if p.name.startswith("constraints.") and kind in JOINT_CONSTRAINTS and not (
                    isinstance(p.value, float) and math.isfinite(p.value) and p.value >= 0.0):
                return SetParametersResult(successful=False,
                                           reason=f"{p.name} must be finite and >= 0")
        return SetParametersResult(successful=True)

    def _tolerances(self, request, names):
        get = self.owner.get_parameter
        return ft.tolerances(
            names, [get(f"constraints.{n}.trajectory").value for n in names],
            [get(f"constraints.{n}.goal").value for n in names],
            get("constraints.goal_time").value,
            [(t.name, t.position, t.velocity, t.acceleration) for t in request.path_tolerance],
            [(t.name, t.position, t.velocity, t.acceleration) for t in request.goal_tolerance],
            seconds(request.goal_time_tolerance),
            get("constraints.stopped_velocity_tolerance").value)

    # -- a goal -------------------------------------------------------------------------------
    def _execute(self, goal_handle):
        """Admit, then wait for the end, with feedback; a bug is logged with its traceback
        and ends the goal ABORTED, INVALID_GOAL, "internal error"; the node carries on."""
        result = FollowJointTrajectory.Result()
        try:
            return self._run(goal_handle, result)
        except Exception as exc:
            self.owner.get_logger().error("follow_joint_trajectory failed:\n"
                                          f"{traceback.format_exc()}")
            return self._end(goal_handle, result, ft.INVALID_GOAL, f"internal error "
                             f"({type(exc).__name__}: {exc}); logged by the node",
                             goal_handle.abort)

    def _run(self, goal_handle, result):
        try:
            goal = self._admit(goal_handle.request)
        except ft.GoalRefused as refused:
            return self._end(goal_handle, result, refused.code, f"refused: {refused}",
                             goal_handle.abort)
        node, live = self.owner, self.owner.live
        last_feedback = -math.inf        # [s] on the node's clock
        while not self.closing.is_set():
            period = 1.0 / node.get_parameter("action_monitor_rate").value
            with live.lock:
                outcome = goal.outcome
                now = live.now()
                if outcome is None and goal_handle.is_cancel_requested:
                    goal.cancel(now, self._deceleration())
                due = outcome is None and not 0.0 <= now - last_feedback < period
                feedback = self._feedback(goal) if due else None
            if outcome is not None:
                break
            if feedback is not None:
                last_feedback = now
                goal_handle.publish_feedback(feedback)
            self.closing.wait(min(period, POLL_SECONDS))
        else:
            return self._end(goal_handle, result, ft.INVALID_GOAL, "the node is shutting down",
                             goal_handle.abort)
        state = (goal_handle.canceled if outcome.cancelled else goal_handle.succeed
                 if outcome.code == ft.SUCCESSFUL else goal_handle.abort)
        return self._end(goal_handle, result, outcome.code, outcome.message, state)

    def _admit(self, request):
        """The goal, admitted by the controller and tracked from now; GoalRefused."""
        live, msg = self.owner.live, request.trajectory
        if request.multi_dof_trajectory.joint_names or request.multi_dof_trajectory.points:
            raise ft.GoalRefused(ft.INVALID_JOINTS, "this arm has no multi-DOF joints: "
                                                    "multi_dof_trajectory must be empty")
        self.declare_constraints()
        points = [(seconds(p.time_from_start), p.positions, p.velocities, p.accelerations,
                   p.effort) for p in msg.points]
        stamp = seconds(msg.header.stamp)
        with live.lock:
            controller = live.controller
            if controller is None:
                raise ft.GoalRefused(ft.INVALID_GOAL, "no robot description yet")
            names, payloads = list(live.model.joint_names), dict(live.payloads)
            bound = controller.settings.effort_bound
            now, current = live.now(), controller.desired_state(live.now())
        if current is None:
            raise ft.GoalRefused(ft.INVALID_GOAL, "no complete joint state yet")
        tolerances = self._tolerances(request, names)
        trajectory, efforts, _ = ft.plan(names, msg.joint_names, points, stamp, now, current)
        self._check_efforts(trajectory, efforts, payloads, bound, names)
        with live.lock:         # planned again from the desired state of this very moment
            now = live.now()
            trajectory, efforts, first = ft.plan(names, msg.joint_names, points, stamp, now,
                                                 live.controller.desired_state(now))
            goal = ft.TrajectoryGoal(trajectory, efforts, first, tolerances, names)
            event = live.controller.desire(goal, now)
        live.report(event)
        if event.kind != "tracking":
            raise ft.GoalRefused(ft.INVALID_GOAL, event.message)
        return goal

    def _check_efforts(self, trajectory, efforts, payloads, bound, names):
        """INVALID_GOAL unless the model torques along `trajectory`, plus the points'
        feed-forward `efforts` (or None), fit `bound` (the clamp's effort bounds) with
        `payloads`; on the node's background thread (its solver's)."""
        node, live = self.owner, self.owner.live
        shifted = Trajectory(0.0, trajectory.times, trajectory.positions,
                             trajectory.velocities, trajectory.accelerations)
        result = node.background.submit(
            lambda: check_trajectory(live.checking_solvers.solver(payloads), shifted, bound,
                                     CHECK_PERIOD, 1.0, MAX_CHECK_SAMPLES)).result()
        if not result.feasible:            # the reason names the time scale that fits
            raise ft.GoalRefused(ft.INVALID_GOAL, "the trajectory exceeds the arm's limits "
                                                  f"with the payload in use: {result.reason}")
        if efforts is None:
            return
        total = result.efforts + np.column_stack([np.interp(result.times, trajectory.times,
                                                            column) for column in efforts.T])
        beyond = np.abs(total) > bound
        if beyond.any():
            k, i = np.argwhere(beyond)[0]
            raise ft.GoalRefused(ft.INVALID_GOAL, f"with its efforts (feed-forward), the torque "
                                                  f"of '{names[i]}' {total[k, i]:+.4g} N·m is "
                                                  f"beyond its bound {bound[i]:.4g} at t = "
                                                  f"{result.times[k]:.3f} s")


    def _deceleration(self):
        values = self.owner.get_parameter("stop_deceleration").value
        return np.array(per_joint(values, self.owner.live.model.dof, "stop_deceleration"))

    def _feedback(self, goal):
        """The Feedback of the last joint state the goal saw (None before one); under the
        node's lock."""
        if goal.actual is None:
            return None
        now, q, qd = goal.actual
        q_d, qd_d, qdd_d = (np.asarray(x, dtype=float) for x in goal.sample(now))
        feedback = FollowJointTrajectory.Feedback()
        feedback.header.stamp = Time(nanoseconds=round(now * 1e9)).to_msg()
        feedback.joint_names = goal.names
        feedback.index = goal.index(now)
        since = goal.trajectory.elapsed(now)     # the path's time: slower where speed-scaled
        for point in (feedback.desired, feedback.actual, feedback.error):
            point.time_from_start.sec = math.floor(since)
            point.time_from_start.nanosec = int((since - math.floor(since)) * 1e9)
        feedback.desired.positions, feedback.desired.velocities = q_d.tolist(), qd_d.tolist()
        feedback.desired.accelerations = qdd_d.tolist()
        feedback.desired.effort = self.owner.live.solver.inverse_dynamics(q_d, qd_d,
                                                                     qdd_d).tolist()
        feedback.actual.positions, feedback.actual.velocities = q.tolist(), qd.tolist()
        feedback.error.positions = (q_d - q).tolist()
        feedback.error.velocities = (qd_d - qd).tolist()
        return feedback

    def _end(self, goal_handle, result, code, message, state):
        result.error_code, result.error_string = code, message
        if code == ft.SUCCESSFUL:      # (rclpy: one severity per logging call site)
            self.owner.get_logger().info(f"follow_joint_trajectory: {message}")
        else:
            self.owner.get_logger().warning(f"follow_joint_trajectory: {message}")
        state()
        return result

    def stop(self):
        """Stop the thread, the action server and the helper node (idempotent)."""
        self.closing.set()
        if self.node is not None:
            self.server.destroy()
        super().stop()

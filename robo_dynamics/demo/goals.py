"""The goals the demo sends as a supervisor would: a trajectory as MoveIt sends a plan
(control_msgs/FollowJointTrajectory), the payload identification (~/identify_payload) and
the arm's (~/identify_arm)."""

import numpy as np

from ..ros.conversions import seconds
from .scenario import IDENTIFY_GOAL, STOP_SECONDS


def ending_at_rest(msg):
    """`msg` with a last point STOP_SECONDS after its end, where it comes to rest (the
    velocity's half-way distance on: a smooth stop), as a plan MoveIt sends ends."""
    from trajectory_msgs.msg import JointTrajectoryPoint
    import rclpy.duration
    last = msg.points[-1]
    q = np.add(last.positions, 0.5 * STOP_SECONDS * np.asarray(last.velocities))
    zero = [0.0] * len(q)
    msg.points.append(JointTrajectoryPoint(
        positions=q.tolist(), velocities=zero, accelerations=zero,
        time_from_start=rclpy.duration.Duration(
            seconds=seconds(last.time_from_start) + STOP_SECONDS).to_msg()))
    return msg


def send_goal(sup, msg):
    """Send `msg` as a FollowJointTrajectory goal, as MoveIt does: (the node's event,
    tracking or refused; the future of the goal's result)."""
    from rclpy.action import ActionClient
    from control_msgs.action import FollowJointTrajectory
    client = ActionClient(sup.node, FollowJointTrajectory,
                          "/dynamics_node/follow_joint_trajectory")
    sup.spin_until(client.server_is_ready, "no ~/follow_joint_trajectory action")
    answered = len(sup.events)
    msg.header.stamp.sec = msg.header.stamp.nanosec = 0     # MoveIt's: start on receipt
    sent = client.send_goal_async(FollowJointTrajectory.Goal(trajectory=msg))
    sup.spin_until(sent.done, "the FollowJointTrajectory goal was not answered")
    result = sent.result().get_result_async()
    sup.spin_until(lambda: result.done() or any(e.kind in ("tracking", "refused")
                                                for _, e in sup.events[answered:]),
                   "no answer to the FollowJointTrajectory goal")
    event = next((e for _, e in sup.events[answered:] if e.kind in ("tracking", "refused")),
                 None)
    if event is None:          # ended before the controller saw it: its reason
        raise RuntimeError(f"FollowJointTrajectory goal: {result.result().result}")
    return event, result


def identify(sup, phase, progress):
    """The ~/identify_payload goal (poses the node chooses around the current one, apply),
    sent on the paused simulation: its Result once the node has moved through the poses,
    fitted and applied the payload (MODEL_CHANGE_DELAY after the last pose)."""
    from rclpy.action import ActionClient
    from robo_dynamics_interfaces.action import IdentifyPayload
    from ..identification.identification_session import MODEL_CHANGE_DELAY
    client = ActionClient(sup.node, IdentifyPayload, "/dynamics_node/identify_payload")
    shown = [None]

    def show(message):
        f = message.feedback
        if (f.pose, f.phase) != shown[0]:       # a line per step, not per feedback
            shown[0] = (f.pose, f.phase)
            progress(f"  identifying the payload: pose {f.pose}/{f.poses}, {f.phase:<9}, "
                     f"{f.samples} states")
    try:
        sup.spin_until(lambda: client.server_is_ready(), "no ~/identify_payload action")
        answered, now = len(sup.events), sup.now()
        sent = client.send_goal_async(
            IdentifyPayload.Goal(link="tool0", apply=True, **IDENTIFY_GOAL),
            feedback_callback=show)
        sup.spin_until(sent.done, "the identification goal was not answered")
        if not sent.result().accepted:
            raise RuntimeError(f"phase '{phase.name}': the identification goal was rejected")
        result = sent.result().get_result_async()
        # the node plans on the paused simulation: its answer, then time runs
        sup.spin_until(lambda: result.done() or any(e.kind in ("tracking", "refused")
                                                    for _, e in sup.events[answered:]),
                       "the identification did not start")
        if not result.done():
            g = IDENTIFY_GOAL
            plan = g["pose_count"] * (g["move_time"] + g["settle_time"] + g["record_time"])
            sup.run_to(now + plan + MODEL_CHANGE_DELAY + 2 * sup.period)
            sup.spin_until(result.done, "the identification did not end", 600.0)
        return result.result().result
    finally:
        client.destroy()


def identify_arm(sup, goal, progress):
    """The ~/identify_arm goal (IdentifyArm fields in `goal`), sent on the paused
    simulation: its Result once the node has held the arm, designed the excitation on the
    paused loop, driven it `periods` times, fitted and (apply) swapped its model in."""
    from rclpy.action import ActionClient
    from robo_dynamics_interfaces.action import IdentifyArm
    from ..identification.identification_session import MODEL_CHANGE_DELAY
    client = ActionClient(sup.node, IdentifyArm, "/dynamics_node/identify_arm")

    def show(message):
        f = message.feedback
        progress(f"  identifying the arm: {f.elapsed:4.1f}/{f.duration:.0f} s, "
                 f"{f.samples} states")
    try:
        sup.spin_until(client.server_is_ready, "no ~/identify_arm action")
        answered = len(sup.events)
        sent = client.send_goal_async(IdentifyArm.Goal(**goal), feedback_callback=show)
        sup.spin_until(sent.done, "the arm identification goal was not answered")
        if not sent.result().accepted:
            raise RuntimeError("the arm identification goal was rejected")
        result = sent.result().get_result_async()

        def answers():          # the hold, then the excitation (designed meanwhile)
            return [e for _, e in sup.events[answered:] if e.kind in ("tracking", "refused")]
        sup.spin_until(lambda: result.done() or len(answers()) >= 2 or any(
            e.kind == "refused" for e in answers()), "the arm identification did not start",
            600.0)
        if not result.done():
            now = sup.now()
            sup.run_to(now + goal["periods"] * goal["period"] + MODEL_CHANGE_DELAY
                       + 2 * sup.period)
            sup.spin_until(result.done, "the arm identification did not end", 600.0)
        return result.result().result
    finally:
        client.destroy()

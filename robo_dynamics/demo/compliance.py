"""The demo's Cartesian phase (scenario.py, 10.): the node holds the tip where it is by
Cartesian impedance (~/target_pose), the tip is pushed for TIP_PUSH_SECONDS, then let go."""

import numpy as np

from .scenario import (TIP_FORCE, TIP_HOLD_SECONDS, TIP_PUSH_SECONDS, TIP_RAMP_SECONDS,
                       TIP_RELEASE_SECONDS)

SECONDS = TIP_HOLD_SECONDS + TIP_PUSH_SECONDS + TIP_RELEASE_SECONDS   # the phase's length
RAMP_STEP = 0.01       # s: the push changes in steps this long while it rises or falls


def target_pose(frame, R, p):
    """PoseStamped in `frame` at rotation R (3, 3) and position p (3,) [m]."""
    from geometry_msgs.msg import PoseStamped
    from ..ros.dynamics_node.markers import quaternion_from_matrix
    msg = PoseStamped()
    msg.header.frame_id = frame
    (msg.pose.position.x, msg.pose.position.y, msg.pose.position.z) = np.asarray(
        p, dtype=float).tolist()
    msg.pose.orientation = quaternion_from_matrix(R)
    return msg


def tip_push(frame, R_tip, force):
    """WrenchStamped on the tip link `frame` (whose rotation is R_tip (3, 3)): `force` (3,)
    [N] given in base axes, at the link's origin, in the link's axes as sim_arm takes it."""
    from geometry_msgs.msg import WrenchStamped
    msg = WrenchStamped()
    msg.header.frame_id = frame
    (msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = (
        R_tip.T @ np.asarray(force, dtype=float)).tolist()
    return msg


def hold_tip(sup, solver):
    """Send the tip's pose at the latest state as ~/target_pose: the node's event (tracking:
    held there by Cartesian impedance), and the target (R (3, 3), p (3,) [m])."""
    model = solver.model
    R, p = solver.tip_pose(sup.measured())
    event = sup.desire(sup.pose_pub, target_pose(model.base_link, R, p), "target pose")
    return event, (R, p)


def push_and_let_go(sup, solver, start, report):
    """The phase's timeline from `start` [s]: held, pushed at the tip with TIP_FORCE (base
    axes), let go, held; the push rises and falls over TIP_RAMP_SECONDS each, as a hand's
    does, in steps of RAMP_STEP. Returns the push's start [s] after `start`."""
    frame = solver.model.tip_link

    def push(t, scale):
        sup.run_to(t, report)
        R_tip, _ = solver.tip_pose(sup.measured())
        sup.push(tip_push(frame, R_tip, scale * TIP_FORCE))

    rising = np.arange(1, round(TIP_RAMP_SECONDS / RAMP_STEP) + 1) * RAMP_STEP
    for dt in rising:                       # on: TIP_FORCE at TIP_HOLD + TIP_RAMP_SECONDS
        push(start + TIP_HOLD_SECONDS + dt - RAMP_STEP, dt / TIP_RAMP_SECONDS)
    off = start + TIP_HOLD_SECONDS + TIP_PUSH_SECONDS
    for dt in rising:                       # off at TIP_HOLD + TIP_PUSH_SECONDS
        push(off - TIP_RAMP_SECONDS + dt, 1.0 - dt / TIP_RAMP_SECONDS)
    sup.run_to(start + SECONDS, report)
    return TIP_HOLD_SECONDS

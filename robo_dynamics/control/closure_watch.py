"""Joint states a closed linkage's loops cannot close (the motors measured outside the
mechanism's workspace, or at a singular pose: a wrong encoder offset, a broken link, a
model that is not the arm), and passive joints measured off the closure. No ROS here.

Each such state is rejected with the reason (no command is computed from it). When they
go on for longer than stale_timeout, as for joint states that stop coming, the safe hold
takes over: its torque computed at the last state that closed, with the velocities the
states carry (Controller.step).
"""


class ClosureWatch:
    """The last state that closed, and since when the states have not."""

    def __init__(self):
        self.last = None       # (q, g(q)) of the last state that closed
        self.since = None      # [s] the first of the states that have not closed since
        self.rejected = 0      # states rejected so far

    def closed(self, q, g):
        """A state that closed, at positions q (n,) with gravity torques g (n,)."""
        self.last, self.since = (q.copy(), g), None

    def unclosed(self, now, timeout):
        """A state at `now` [s] that did not close: the last state that closed (q, g) when
        they have not closed for longer than `timeout` [s] (hold there), else None (reject
        it)."""
        if self.since is None:
            self.since = now
        if self.last is None or now - self.since <= timeout:
            self.rejected += 1
            return None
        return self.last


def passive_joint_fault(motors, theta, measured, tolerance):
    """Why a linkage's passive joints as a driver measured them (`measured`: {name: position
    [rad or m]}) do not fit its loops closed with the motors at θ (motors: the solver's
    MotorSpace), by more than `tolerance` [rad or m]: the reason, naming the joint, for the
    safe hold; None where they fit (or none was measured)."""
    if not measured:
        return None
    gap, joint = motors.passive_disagreement(theta, measured)
    if gap <= tolerance:
        return None
    return (f"passive joint '{joint}' measured {gap:.3g} from where the loops put it "
            f"(passive_joint_tolerance {tolerance:g}): a broken link or a wrong encoder?")

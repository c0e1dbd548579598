"""Merge joint-state messages (possibly partial, from several publishers) into one state.

Joints are mapped by name, never by index. Joints the robot description knows but the chain
does not use (gripper fingers, other arms) are ignored; names the description does not know
are an error, as are non-finite or implausibly large positions or velocities, duplicated
names and arrays whose lengths disagree. Efforts (measured joint torques) are optional: a
joint whose message carries none, or a non-finite one, has effort NaN (unknown).
A rejected message changes nothing.

A state is as old as its oldest joint: on the receiver's clock (when each joint's message
arrived), and, where the messages carry header stamps on the receiver's clock, by how far
its joints' measurement stamps lie apart. A burst of queued messages (a receiver starved for
a while, then taking them all at once) must not join one driver's old measurement to
another's new one. A stamp more than SAME_CLOCK from the receiver's clock when it arrives is
on another clock (a controller's time since boot, a sequence number) and is not compared.
"""

import numpy as np

# Positions [rad or m] and velocities [rad/s or m/s] beyond this are sensor faults, not states
# of an arm (a continuous joint would need 160 turns); they are rejected before they can
# overflow the dynamics.
PLAUSIBLE = 1e3
SAME_CLOCK = 10.0   # s: a stamp this close to the receiver's clock is taken to be on it


class JointStateMerger:
    """The latest position, velocity and effort of every chain joint, with when each arrived.

    chain_joints: joint names in model order. known_joints: every joint name of the robot
    description (a superset); None accepts any extra name.
    """

    def __init__(self, chain_joints, known_joints=None):
        self.joint_names = tuple(chain_joints)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self._known = None if known_joints is None else frozenset(known_joints)
        n = len(self.joint_names)
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self.effort = np.full(n, np.nan)           # measured torque [N·m or N]; NaN: unknown
        self.received_at = np.full(n, -np.inf)     # seconds, the caller's clock
        self.measured_at = np.full(n, np.nan)      # header stamps [s]; NaN: not stamped
        self.rejected = 0
        self._complete = False
        self._one_message = True   # every joint from the last message: its stamps coincide
        self._names = None       # names of the last accepted message, and where the chain
        self._source = self._target = np.zeros(0, dtype=int)   # joints are in it

    def update(self, names, positions, velocities, now, efforts=(), stamp=0.0):
        """Take one message; return None if accepted, else the reason it was rejected.

        names, positions, velocities, efforts: the JointState fields (velocities may be
        empty: the velocity of those joints is then taken as zero; efforts may be empty:
        unknown). now: receipt time in seconds. stamp: the header's measurement time in
        seconds (0: not stamped; compared with other joints' only when on the clock of
        `now`, within SAME_CLOCK of it).
        The name → index mapping is kept from one message to the next while the names
        repeat, so a steady stream costs a few array operations per message.
        """
        if names != self._names:
            reason = self._map(names)
            if reason is not None:
                self.rejected += 1
                return reason
        count = len(names)
        if len(positions) != count:
            return self._reject(f"{count} names but {len(positions)} positions")
        if len(velocities) not in (0, count):
            return self._reject(f"{count} names but {len(velocities)} velocities")
        if len(efforts) not in (0, count):
            return self._reject(f"{count} names but {len(efforts)} efforts")
        measured = stamp if stamp > 0.0 and abs(now - stamp) <= SAME_CLOCK else np.nan
        if self._target is None:    # exactly the chain in model order: check, then copy
            if not (_plausible(positions) and _plausible(velocities)):
                return self._reject(self._fault(np.asarray(positions, dtype=float),
                                                np.asarray(velocities, dtype=float)
                                                if len(velocities) else np.zeros(count)))
            self.q[:] = positions
            self.qd[:] = velocities if len(velocities) else 0.0
            self.effort[:] = efforts if len(efforts) else np.nan
            self.received_at[:] = now
            self.measured_at[:] = measured
            self._one_message = True
            return None
        q = np.asarray(positions, dtype=float)[self._source]
        qd = (np.asarray(velocities, dtype=float)[self._source] if len(velocities)
              else np.zeros(len(self._source)))
        if not ((np.abs(q) <= PLAUSIBLE).all() and (np.abs(qd) <= PLAUSIBLE).all()):
            return self._reject(self._fault(q, qd))   # NaN and ±inf fail the test above too
        self.q[self._target] = q
        self.qd[self._target] = qd
        self.effort[self._target] = (np.asarray(efforts, dtype=float)[self._source]
                                     if len(efforts) else np.nan)
        self.received_at[self._target] = now
        self.measured_at[self._target] = measured
        self._one_message = False
        return None

    def _fault(self, q, qd):
        """Why values that failed the plausibility test were rejected, naming the joint."""
        finite = np.isfinite(q) & np.isfinite(qd)
        plausible = (np.abs(q) <= PLAUSIBLE) & (np.abs(qd) <= PLAUSIBLE)
        index = np.argmin(finite) if not finite.all() else np.argmin(plausible)
        bad = self.joint_names[index if self._target is None else self._target[index]]
        if not finite.all():
            return f"non-finite value for joint '{bad}'"
        return f"implausible value for joint '{bad}' (|q| or |qd| > {PLAUSIBLE:g})"

    def _reject(self, reason):
        self.rejected += 1
        return reason

    def _map(self, names):
        """Check a new list of names and remember where the chain joints are in it."""
        if len(names) == 0:
            return "empty message: no joint names"
        if self._known is not None and len(names) > len(self._known):
            # checked first: a message of 100 000 names costs nothing more to refuse
            return (f"{len(names)} joint names, more than the {len(self._known)} joints of "
                    "the robot description")
        if len(set(names)) != len(names):
            return "duplicated joint names"
        if self._known is not None:
            unknown = [name for name in names if name not in self._known]
            if unknown:
                return f"unknown joint names {unknown[:5]}"
        pairs = [(k, self._index[name]) for k, name in enumerate(names) if name in self._index]
        self._source = np.array([k for k, _ in pairs], dtype=int)
        self._target = np.array([i for _, i in pairs], dtype=int)
        if list(names) == list(self.joint_names):
            self._target = None      # the message is the chain in model order: copy directly
        self._names = list(names)
        return None

    def complete(self):
        """True once every chain joint has been received at least once."""
        if not self._complete:      # once complete, always complete: test until then
            self._complete = bool(np.all(np.isfinite(self.received_at)))
        return self._complete

    def age(self, now):
        """Seconds since the oldest chain joint was last received (inf before complete), or,
        if larger, how long before the newest stamp the oldest stamped joint was measured."""
        received = float(now - self.received_at.min())
        if self._one_message:                 # one driver's message: nothing to compare
            return received
        spread = self.measured_at.max() - self.measured_at.min()   # NaN if any unstamped
        return received if not spread > received else float(spread)

    def stale_joints(self, now, timeout):
        """Names of chain joints not received within `timeout` seconds, or measured more than
        `timeout` seconds before the newest stamp."""
        newest = self.measured_at.max()
        return [name for name, t, m in zip(self.joint_names, self.received_at, self.measured_at)
                if now - t > timeout or newest - m > timeout]


def _plausible(values):
    """Every value within ±PLAUSIBLE; false for NaN and ±inf (they fail the comparison).
    Plain Python: for a handful of joints cheaper than NumPy's per-call overhead."""
    return all(-PLAUSIBLE <= x <= PLAUSIBLE for x in values)

"""Merge joint-state messages (possibly partial, from several publishers) into one state.

Joints are mapped by name, never by index. Joints the robot description knows but the chain
does not use (gripper fingers, other arms) are ignored; names the description does not know
are an error, as are non-finite values, duplicated names and arrays whose lengths disagree.
A rejected message changes nothing.
"""

import math

import numpy as np


class JointStateMerger:
    """The latest position and velocity of every chain joint, with when each arrived.

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
        self.received_at = np.full(n, -math.inf)   # seconds, the caller's clock
        self.rejected = 0

    def update(self, names, positions, velocities, now):
        """Take one message; return None if accepted, else the reason it was rejected.

        names, positions, velocities: the JointState fields (velocities may be empty: the
        velocity of those joints is then taken as zero). now: receipt time in seconds.
        """
        reason = self._check(names, positions, velocities)
        if reason is not None:
            self.rejected += 1
            return reason
        has_velocity = len(velocities) > 0
        for k, name in enumerate(names):
            i = self._index.get(name)
            if i is None:
                continue
            self.q[i] = positions[k]
            self.qd[i] = velocities[k] if has_velocity else 0.0
            self.received_at[i] = now
        return None

    def _check(self, names, positions, velocities):
        count = len(names)
        if count == 0:
            return "empty message: no joint names"
        if len(positions) != count:
            return f"{count} names but {len(positions)} positions"
        if len(velocities) not in (0, count):
            return f"{count} names but {len(velocities)} velocities"
        if len(set(names)) != count:
            return "duplicated joint names"
        if self._known is not None:
            unknown = [name for name in names if name not in self._known]
            if unknown:
                return f"unknown joint names {unknown[:5]}"
        for k, name in enumerate(names):
            if name in self._index and not (
                    math.isfinite(positions[k])
                    and (not velocities or math.isfinite(velocities[k]))):
                return f"non-finite value for joint '{name}'"
        return None

    def complete(self):
        """True once every chain joint has been received at least once."""
        return bool(np.all(np.isfinite(self.received_at)))

    def age(self, now):
        """Seconds since the oldest chain joint was last received (inf before complete)."""
        return float(now - self.received_at.min())

    def stale_joints(self, now, timeout):
        """Names of chain joints not received within `timeout` seconds."""
        return [name for name, t in zip(self.joint_names, self.received_at) if now - t > timeout]

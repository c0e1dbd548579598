"""Driving the arm through poses and recording it at rest at each (PoseRecording), or
recording it for a while as it moves (TimedRecording): the data of payload identification
(payload_identification.py).

A PoseRecording plans one desired Trajectory (control/trajectory.py) from the current pose
through every pose: a move of move_time (quintic, from rest to rest), then a hold of
settle_time (the arm comes to rest) and record_time (the joint states are kept). The
controller tracks it like any desired motion (its safety envelope applies); the node gives
each joint state to add(). Times are the node's clock [s].
"""

import numpy as np

from ..control.trajectory import Trajectory

MOVING, SETTLING, RECORDING, DONE = "moving", "settling", "recording", "done"


class PoseRecording:
    """The plan and the recorded states: poses (K, n) in model order, starting from
    start_q (n,) at start_time [s]."""

    def __init__(self, start_q, poses, start_time, move_time=3.0, settle_time=1.0,
                 record_time=1.0):
        poses = np.asarray(poses, dtype=float)
        if poses.ndim != 2 or len(poses) == 0 or poses.shape[1] != len(start_q):
            raise ValueError("poses must be one or more rows of every chain joint")
        if not np.isfinite(poses).all():
            raise ValueError("poses must be finite")
        if not (move_time > 0.0 and settle_time >= 0.0 and record_time > 0.0
                and np.isfinite([move_time, settle_time, record_time]).all()):
            raise ValueError("move_time and record_time must be > 0, settle_time >= 0, all "
                             "finite")
        self.poses = poses
        times, positions, self._windows = [0.0], [np.asarray(start_q, dtype=float)], []
        for pose in poses:
            arrive = times[-1] + move_time
            leave = arrive + settle_time + record_time
            times += [arrive, leave]
            positions += [pose, pose]
            self._windows.append((arrive + settle_time, leave))
        zeros = np.zeros((len(times), len(start_q)))
        self.trajectory = Trajectory(start_time, times, positions, zeros, zeros)
        self._end = times[-1]
        self._rows = [[] for _ in poses]        # per pose: (q, q̇, τ_m) of each state
        self._pose = 0                          # the window add() is at
        self.seen = -np.inf                     # [s] the latest state given to add()
        self.interrupted = None                 # why the arm left the plan (the caller's)

    @property
    def windows(self):
        """[(begin, end)] [s] of each pose's recording, on the node's clock (later than
        planned where the controller's speed scaling slows the moves)."""
        wall = self.trajectory.wall
        return [(wall(begin), wall(end)) for begin, end in self._windows]

    @property
    def end(self):
        """[s] when the plan ends, on the node's clock."""
        return self.trajectory.wall(self._end)

    def add(self, t, q, qd, tau):
        """One joint state at time t [s]: kept when inside a pose's recording window. Cheap
        enough for the joint-state callback (copies of three short arrays)."""
        windows = self.windows
        while self._pose < len(windows) and t > windows[self._pose][1]:
            self._pose += 1
        if self._pose < len(windows) and t >= windows[self._pose][0]:
            self._rows[self._pose].append((q.copy(), qd.copy(), tau.copy()))
        self.seen = t                # last: a reader that sees t finds its state kept

    def phase(self, t):
        """(pose index from 0, MOVING / SETTLING / RECORDING / DONE) at time t [s]."""
        for k, (begin, end) in enumerate(self.windows):
            if t <= end:
                if t >= begin:
                    return k, RECORDING
                arrive = self.trajectory.wall(self.trajectory.times[1 + 2 * k])
                return k, SETTLING if t >= arrive else MOVING
        return len(self.windows) - 1, DONE

    @property
    def samples(self):
        """States recorded so far."""
        return sum(len(rows) for rows in self._rows)

    def arrays(self):
        """(q, q̇, τ_m) (N, n) of every recorded state and the pose (N,) each was taken at."""
        rows = [(row, k) for k, pose_rows in enumerate(self._rows) for row in pose_rows]
        if not rows:
            raise ValueError("no joint state was recorded")
        q, qd, tau = (np.array([row[i] for row, _ in rows]) for i in range(3))
        return q, qd, tau, np.array([k for _, k in rows])

    def pose_means(self):
        """(K, n) the mean measured torque at each pose (a tare); ValueError when a pose has
        no recorded state."""
        if any(len(rows) == 0 for rows in self._rows):
            raise ValueError("a pose has no recorded joint state")
        return np.array([np.mean([row[2] for row in rows], axis=0) for rows in self._rows])


class TimedRecording:
    """The joint states from start_time for `duration` [s], however the arm moves (the node
    does not drive it): the same interface as PoseRecording, one 'pose', no trajectory."""

    def __init__(self, start_time, duration):
        if not 0.0 < duration < np.inf:
            raise ValueError(f"duration must be > 0 and finite, got {duration}")
        self.trajectory, self.poses = None, None
        self.windows = [(start_time, start_time + duration)]
        self.end = start_time + duration
        self._rows = []
        self.seen = -np.inf                     # [s] the latest state given to add()
        self.interrupted = None

    def add(self, t, q, qd, tau):
        """One joint state at time t [s]: kept when inside the recording window."""
        if self.windows[0][0] <= t <= self.end:
            self._rows.append((t, q.copy(), qd.copy(), tau.copy()))
        self.seen = t

    def phase(self, t):
        """(0, RECORDING) until the end, then (0, DONE)."""
        return 0, RECORDING if t <= self.end else DONE

    @property
    def samples(self):
        return len(self._rows)

    def arrays(self):
        """(times (N,) [s], q, q̇, τ_m (N, n)) of the recorded states."""
        if len(self._rows) < 3:
            raise ValueError(f"{len(self._rows)} joint states recorded: at least 3 needed")
        return tuple(np.array([row[i] for row in self._rows]) for i in range(4))

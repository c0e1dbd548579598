"""Model changes scheduled at node times: how an identification swaps payloads in on the
same joint state on every machine. No ROS here.

A change is prepared on another thread (building solvers takes tens of ms) and takes effect
at its time `at` [s, node clock], in the order scheduled, on the thread that handles joint
states (`apply_due`). With simulated time that thread waits for a change that is due but
not ready, so the swap happens on the same state however late the preparing thread is;
with the system clock it never waits: the change takes effect on the first state after it
is ready.
"""

import collections
import concurrent.futures
import threading

WAIT = 60.0    # s of wall time a change may take to be prepared or to take effect

ScheduledChange = collections.namedtuple("ScheduledChange", ["at", "change", "done"])
ScheduledChange.__doc__ = """A model change due at node time `at` [s]: `change` (a Future of
the prepared change, or None: nothing to change), `done` (a Future of the sentence once in
effect)."""


def resolve(future, value):
    """Set `future` to `value` unless it is set already (two threads may try)."""
    try:
        future.set_result(value)
    except concurrent.futures.InvalidStateError:
        pass


class ModelChangeSchedule:
    """The scheduled changes of one node. commit(change) swaps a prepared change in and
    returns its sentence."""

    def __init__(self, commit):
        self._commit = commit
        self._items = collections.deque()
        self._lock = threading.Lock()
        self.waiting_for = None     # the time [s] of the change apply_due waits for, or None

    def __bool__(self):
        return bool(self._items)

    def add(self, at):
        """A ScheduledChange due at `at`: set its `change` when prepared."""
        item = ScheduledChange(at, concurrent.futures.Future(), concurrent.futures.Future())
        with self._lock:
            self._items.append(item)
        return item

    def apply_due(self, now, wait, timeout):
        """Commit the changes due at `now` or earlier. wait: wait up to `timeout` s (wall
        time) for one due but not ready (simulated time), else leave it for a later state.
        Returns the times of the changes skipped for not being ready in time."""
        skipped = []
        while self._items and self._items[0].at <= now:
            item = self._items[0]
            if not item.change.done():
                if not wait:
                    break
                self.waiting_for = item.at
                try:
                    item.change.result(timeout=timeout)
                except concurrent.futures.TimeoutError:
                    skipped.append(item.at)
                    resolve(item.change, None)
                finally:
                    self.waiting_for = None
            self.take(item)
        return skipped

    def take(self, item):
        """Commit `item` now (once, whichever thread comes first); item.done then holds its
        sentence (None: nothing changed) or the exception its commit raised."""
        with self._lock:
            if item not in self._items:
                return
            self._items.remove(item)
        change = item.change.result() if item.change.done() else None
        try:
            item.done.set_result(None if change is None else self._commit(change))
        except Exception as exc:
            item.done.set_exception(exc)

    def wait(self, item, timeout):
        """The sentence of `item` once in effect (None: no change). If no joint state has
        carried it within `timeout` s of wall time, it is committed now."""
        try:
            return item.done.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self.take(item)
            return item.done.result(timeout=0) if item.done.done() else None

    def drop(self, items=None):
        """Unschedule `items` (default: all), none left for the joint-state thread to wait
        for."""
        with self._lock:
            items = list(self._items) if items is None else items
            for item in items:
                resolve(item.change, None)
                if item in self._items:
                    self._items.remove(item)

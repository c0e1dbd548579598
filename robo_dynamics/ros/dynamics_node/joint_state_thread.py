"""The joint-state subscription on an executor and thread of its own.

rclpy's SingleThreadedExecutor rebuilds its wait set from every entity of its nodes for
each message it takes, in Python. dynamics_node has about 25 (its own and the parameter
services, timers, three subscriptions, QoS-event handlers), a cost per joint state on top of
what any rclpy node pays (BENCHMARKS.md, "Design measurements"). Here the joint_states
subscription lives on a helper node that has nothing else (`<node>_joint_states`, same
namespace, no parameters, no services), spun in a daemon thread; the main node's executor
serves everything else. The owner serialises the two threads' callbacks with a lock. With
use_sim_time the owner's clock follows the /clock this thread takes (follow_clock_here): the
main executor is not woken by every simulated step.

The helper subscribes to the name the main node resolves (its remappings included) and
ignores the global command-line arguments, so nothing is remapped twice. It takes the owner's
use_sim_time: its `clock` then follows /clock on this thread, and a /clock message is taken
before a joint state that arrived with it (its subscription is the older one); one that
arrives after its state is made up for by `state_time`, so that a state stamped by a
simulation is never handled on the clock of the step before.

With `priority` > 0 the thread asks for SCHED_FIFO at that priority before it spins, the
real-time setting ros2_control's controller_manager gives its update loop: the callback is
then not preempted by the process's other threads (the middleware's, the main executor's)
or by ordinary processes. Only this thread changes. If the system refuses (no permission),
the thread runs on the normal scheduler and `scheduling` says why.

Work on this thread that no command waits for (the cross-check, after the state's command
is out) runs inside `giving_way()`: on the normal scheduler for its duration, so that it
takes the processor from nobody, the process that waits for the command included. At
SCHED_FIFO it would keep a core from them until it is done.

The scheduler is half of it: the callback also needs Python's global interpreter lock, and
a thread of the process that runs Python code (the main executor building rviz2 markers,
say) keeps it until the interpreter's switch interval has passed, 5 ms by default: five
joint states at 1 kHz. The thread therefore sets the interval to GIL_SWITCH_INTERVAL when it
starts (a process-wide setting; it costs a thread switch only when another thread waits).
"""

import contextlib
import os
import sys
import threading

from rclpy.executors import SingleThreadedExecutor

from ..helper_node import HelperNode

CLOCK_LAG = 0.1
"""s: how far ahead of a simulated clock a state's stamp may be and still be its time."""
GIL_SWITCH_INTERVAL = 2e-4
"""s: the longest a thread running Python keeps the interpreter from the joint-state
thread (sys.setswitchinterval), a fifth of a 1 kHz period."""


class JointStateThread(HelperNode):
    """Subscribe `callback` to `topic` (resolved by `owner`) with `msg_type` and `qos` (a
    QoSProfile or a depth); spin at SCHED_FIFO `priority` (1–99) or, with 0, on the normal
    scheduler. `clock`: the helper node's clock (the owner's time source)."""

    def __init__(self, owner, msg_type, topic, callback, qos, priority=0):
        simulated = owner.get_parameter("use_sim_time").value
        super().__init__(owner, "joint_states", simulated)
        self.clock = self.node.get_clock()
        if simulated:
            follow_clock_here(owner, self.node)
        self.topic = owner.resolve_topic_name(topic)
        self.subscription = self.node.create_subscription(msg_type, self.topic, callback, qos)
        self.priority, self.logger = priority, owner.get_logger()
        self.scheduling = "starting"       # then what the thread runs on (for diagnostics)
        self.fifo = False                  # the thread runs at SCHED_FIFO `priority`
        self.start(SingleThreadedExecutor(context=owner.context))

    @contextlib.contextmanager
    def giving_way(self):
        """On the thread itself: run the block on the normal scheduler (when the thread is at
        SCHED_FIFO), then back at its priority."""
        if not self.fifo:
            yield
            return
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        try:
            yield
        finally:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.priority))

    def on_thread_start(self):
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL))
        self.scheduling = self._set_scheduling()

    def _set_scheduling(self):
        """Apply the priority to the calling thread; a description of the outcome."""
        if self.priority <= 0:
            return "normal"
        reason = use_fifo(self.priority)
        if reason is not None:
            self.logger.warning(f"joint_states thread: SCHED_FIFO priority {self.priority} "
                                f"refused ({reason}); running on the normal scheduler. Allow "
                                "it with an rtprio limit (/etc/security/limits.conf).")
            return f"normal (SCHED_FIFO {self.priority} refused: {reason})"
        self.logger.info(f"joint_states thread: SCHED_FIFO priority {self.priority}")
        self.fifo = True
        return f"SCHED_FIFO {self.priority}"


def state_time(now, measured, simulated):
    """The time [s] at which to handle a state stamped `measured` [s] (its header's stamp,
    conversions.seconds) when the clock reads `now` [s]: on a simulated clock its stamp,
    when at most CLOCK_LAG ahead of it. The
    /clock of a simulated step is sent before its state, but on another topic: it may be
    taken after the state, which would then be handled on the clock of the step before (a
    trajectory sampled a period early, a model change one state late: the same loop would
    give other figures on a loaded machine). conversions.seconds converts a stamp as the
    node's clock is: a state and the /clock of its time are then the same number, to the
    bit, whichever of the two was taken first."""
    return measured if simulated and 0.0 < measured - now <= CLOCK_LAG else now


def follow_clock_here(owner, helper):
    """Drive the owner's clock from the helper's /clock subscription, and drop the owner's:
    /clock comes with every simulated state, and on the owner's executor each message woke
    the main thread (a third of a core in the lockstep demo, holding the interpreter lock
    the joint-state thread waits for). rclpy keeps a node's time source in `_time_source`
    (rclpy/node.py) and has no public way to share one."""
    owner._time_source.detach_node()
    helper._time_source.attach_clock(owner.get_clock())


def use_fifo(priority):
    """Put the calling thread on SCHED_FIFO at `priority`: None when done, else why not."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:   # EPERM without root or an rtprio limit;
        return getattr(exc, "strerror", None) or "not supported here"   # not Linux
    return None


def fifo_permitted(priority):
    """Whether this process may run a thread at SCHED_FIFO `priority`, tried in a scratch
    thread (the calling thread keeps its scheduling)."""
    outcome = []
    scratch = threading.Thread(target=lambda: outcome.append(use_fifo(priority) is None))
    scratch.start()
    scratch.join()
    return outcome[0]

"""Running a node until Ctrl-C or shutdown: the body of every node's main().

rclpy's SingleThreadedExecutor. (rclpy.experimental.EventsExecutor is cheaper per message
but hung the nodes with the rclpy from PyPI; BENCHMARKS.md, "Design measurements".)

SIGINT: rclpy's handler shuts the context down (the executor then stops at its next wait,
between callbacks) and calls Python's handler after it. Python's default one raises
KeyboardInterrupt wherever the main thread is — in a callback, or half way through rclpy
building the Task of the next one, which then fails noisily when collected. run() puts a
handler there that only remembers the signal.

rclpy's handler is installed only once the node and its executor are built: it shuts the
context down from a thread of its own, and an object rclpy was building on that context
then fails half way and again, noisily, when collected (an Executor's __del__ reads an
attribute its __init__ had not reached). A Ctrl-C while the node starts is remembered and
ends the process as soon as the node is built (the node waits for nothing while it is
built: a robot description on a topic is taken by a subscription); a SIGTERM meanwhile
ends it at once, its default action.
"""

import concurrent.futures
import gc
import os
import signal
import sys
import threading
import warnings

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException

from ..blas_threads import single_threaded_blas
from ..errors import RoboDynamicsError

BACKGROUND_NICE = 10      # a background thread's nice value above the process's


def spin(node, executor):
    """Spin `node` on `executor`, then destroy both and shut rclpy down.

    Everything built at start-up is moved out of the garbage collector's view first
    (gc.freeze): a full collection then walks only what the running node allocates, not the
    tens of thousands of start-up objects of rclpy, NumPy and Pinocchio (BENCHMARKS.md,
    "Design measurements")."""
    gc.collect()
    gc.freeze()
    # a message that became ready as the executor shut down leaves its handler coroutine
    # unstarted; Python reports that at exit. Nothing is lost: the node is stopping.
    warnings.filterwarnings("ignore", message="coroutine 'Executor._make_handler",
                            category=RuntimeWarning)
    report_dropped_responses()
    try:
        executor.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    except RuntimeError:
        # rclpy's SIGINT/SIGTERM handler shuts the context down from another thread; a
        # message being taken at that moment fails with a RuntimeError: that is the shutdown,
        # not a fault. With the context still valid it is a real error.
        if rclpy.ok():
            raise
    finally:
        stop(node, executor)


def report_dropped_responses():
    """A service response the middleware dropped (Fast DDS gives up when the client's
    reader is not matched within its writer's max_blocking_time: ros2/rmw_fastrtps#842)
    leaves the caller waiting; rclpy warns: say it every time, not only the first. Appended
    after the filters the environment gave (PYTHONWARNINGS, -W): a process that asks
    while discovery is under way on purpose, and asks again, can still silence it (the
    demo: demo/supervisor.py, node_environment)."""
    warnings.filterwarnings("always", message="failed to send response",
                            category=RuntimeWarning, append=True)


def stop(node, executor):
    """Stop spinning, destroy the node, shut rclpy down (and so uninstall its handlers)."""
    executor.shutdown()
    node.destroy_node()
    rclpy.try_shutdown()


def run(node_class, args=None):
    """main() of a node: build it (a configuration error is one line on stderr and exit
    status 1, no traceback; Ctrl-C while it starts, a quiet exit once it is built), spin it,
    return the exit status."""
    interrupted = threading.Event()
    signal.signal(signal.SIGINT, lambda signum, frame: interrupted.set())
    single_threaded_blas()
    rclpy.init(args=args, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    try:
        node = node_class()
    except (RoboDynamicsError, ValueError, KeyError, InvalidParameterTypeException,
            InvalidParameterValueException) as exc:      # the last two: -p name:=value
        rclpy.try_shutdown()
        print(f"{node_class.__name__}: cannot start: {exc}", file=sys.stderr)
        return 1
    except BaseException:
        rclpy.try_shutdown()
        raise
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    rclpy.signals.install_signal_handlers(rclpy.signals.SignalHandlerOptions.ALL)
    if interrupted.is_set():              # before rclpy's handler was there to see it
        stop(node, executor)
        return 0
    spin(node, executor)
    return 0


def restart_timers(node, timers, rates):
    """(Re)create node's periodic timers: rates {name: (rate [Hz], callback)}, a rate ≤ 0
    none; timers {name: Timer}, the running ones, updated."""
    for name, (rate, callback) in rates.items():
        timer = timers.pop(name, None)
        if timer is not None:
            node.destroy_timer(timer)
        if rate > 0.0:
            timers[name] = node.create_timer(1.0 / rate, callback)


def background_executor(name):
    """A one-thread executor for long computations a node is asked for (a trajectory check, a
    payload fit), at BACKGROUND_NICE below the process's priority: the joint-state thread and
    ROS's own threads get the processor first."""
    return concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=name,
                                                 initializer=_lower_priority)


def _lower_priority():
    """Lower the calling thread's priority by BACKGROUND_NICE (Linux: nice is per thread).
    Raising it back would need privileges: only for threads that stay background."""
    thread = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, thread,
                       os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICE)
    except OSError:
        pass         # not permitted here: the thread runs at the process's priority

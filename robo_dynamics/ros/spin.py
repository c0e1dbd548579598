"""Running a node until Ctrl-C or shutdown: the body of every node's main().

rclpy's SingleThreadedExecutor. (rclpy.experimental.EventsExecutor is cheaper per message
but hung the nodes with the rclpy from PyPI; BENCHMARKS.md, "Design measurements".)
"""

import gc
import sys
import warnings

import rclpy

from ..errors import RoboDynamicsError


def spin(node):
    """Spin `node`, then destroy it and shut rclpy down.

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
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
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
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def run(node_class, args=None):
    """main() of a node: build it (a configuration error is one line on stderr and exit
    status 1, no traceback; Ctrl-C while it starts, a quiet exit), spin it, return the exit
    status."""
    rclpy.init(args=args)
    try:
        node = node_class()
    except (RoboDynamicsError, ValueError, KeyError) as exc:
        print(f"{node_class.__name__}: cannot start: {exc}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    except KeyboardInterrupt:
        rclpy.try_shutdown()
        return 0
    spin(node)
    return 0

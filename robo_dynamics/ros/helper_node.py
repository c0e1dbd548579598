"""A helper node of a node, spun by an executor of its own on a daemon thread.

What must not wait for the main node's executor (the joint states) or must not make it wait
(an action goal that lasts tens of seconds) lives on such a helper: `<node>_<suffix>`, same
namespace and context, no parameters, no global command-line arguments (the main node has
already applied them).
"""

import threading

from rclpy.executors import ExternalShutdownException, ShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter


class HelperNode:
    """`node`: the helper of `owner`; start(executor) spins it on a daemon thread."""

    def __init__(self, owner, suffix, use_sim_time=False):
        self.node = Node(f"{owner.get_name()}_{suffix}", namespace=owner.get_namespace(),
                         context=owner.context, use_global_arguments=False,
                         start_parameter_services=False,
                         parameter_overrides=[
                             Parameter("start_type_description_service", value=False),
                             Parameter("use_sim_time", value=use_sim_time)])
        self.executor = self.thread = None
        self.stopping = False

    def start(self, executor):
        """Spin the helper with `executor` on a thread named after it."""
        self.executor = executor
        executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name=self.node.get_name(),
                                       daemon=True)
        self.thread.start()

    def on_thread_start(self):
        """Called on the helper's thread before it spins (e.g. to set its scheduling)."""

    def _spin(self):
        self.on_thread_start()
        try:
            self.executor.spin()
        except (ExternalShutdownException, ShutdownException):
            pass
        except Exception:
            # rcl errors once the context is shut down, or once stop() has begun (its
            # executor may still be in a callback when, 2 s later, the node is destroyed
            # under it): the shutdown, not a fault
            node = self.node
            if not self.stopping and node is not None and node.context.ok():
                raise

    def stop(self):
        """Stop the thread and destroy the helper node (idempotent)."""
        if self.node is None:
            return
        self.stopping = True
        self.executor.shutdown(timeout_sec=2.0)    # a callback that does not return must
        self.thread.join(timeout=2.0)              # not keep the process from exiting
        self.node.destroy_node()
        self.node = None

"""The joint-state subscription on an executor and thread of its own.

rclpy's SingleThreadedExecutor rebuilds its wait set from every entity of its nodes for
each message it takes, in Python. dynamics_node has about 25 (its own and the parameter
services, timers, three subscriptions, QoS-event handlers), which costs ≈ 60 µs per joint
state on the test machine on top of the ≈ 170 µs any rclpy node pays. Here the joint_states
subscription lives on a helper node that has nothing else (`<node>_joint_states`, same
namespace, no parameters, no services), spun in a daemon thread; the main node's executor
serves everything else. The owner serialises the two threads' callbacks with a lock.

The helper subscribes to the name the main node resolves (its remappings included) and
ignores the global command-line arguments, so nothing is remapped twice.
"""

import threading

from rclpy.executors import (ExternalShutdownException, ShutdownException,
                              SingleThreadedExecutor)
from rclpy.node import Node
from rclpy.parameter import Parameter


class JointStateThread:
    """Subscribe `callback` to `topic` (resolved by `owner`) with `msg_type` and `depth`."""

    def __init__(self, owner, msg_type, topic, callback, depth):
        self.node = Node(f"{owner.get_name()}_joint_states", namespace=owner.get_namespace(),
                         context=owner.context, use_global_arguments=False,
                         start_parameter_services=False,
                         parameter_overrides=[Parameter("start_type_description_service",
                                                        value=False)])
        self.topic = owner.resolve_topic_name(topic)
        self.subscription = self.node.create_subscription(msg_type, self.topic, callback,
                                                          depth)
        self.executor = SingleThreadedExecutor(context=owner.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self._spin, name=self.node.get_name(),
                                       daemon=True)
        self.thread.start()

    def _spin(self):
        try:
            self.executor.spin()
        except (ExternalShutdownException, ShutdownException):
            pass
        except Exception:          # rcl errors once the context is shut down: not a fault
            if self.node is not None and self.node.context.ok():
                raise

    def stop(self):
        """Stop the thread and destroy the helper node (idempotent)."""
        if self.node is None:
            return
        self.executor.shutdown()
        self.thread.join(timeout=2.0)
        self.node.destroy_node()
        self.node = None

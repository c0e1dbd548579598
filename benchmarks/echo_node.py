"""The zero-compute floor: subscribe to joint_states, copy, publish on echo. Run by
benchmarks/run.py in its own process, on the loopback like everything else there.

    python -m benchmarks.echo_node [--priority N] [--ros-args ...]

--priority N spins at SCHED_FIFO priority N, as dynamics_node's thread_priority does for
its joint-state thread: the like-for-like floor for a node run that way.
"""

import sys

import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState

from robo_dynamics.ros.dynamics_node.joint_state_thread import use_fifo
from robo_dynamics.ros.spin import spin


class EchoNode(Node):
    def __init__(self):
        super().__init__("echo_node")
        self.pub = self.create_publisher(JointState, "echo", 10)
        self.create_subscription(JointState, "joint_states", self._on_state, 10)

    def _on_state(self, msg):
        self.pub.publish(JointState(header=msg.header, name=msg.name, effort=msg.position))


def main():
    args = sys.argv[1:]
    if args[:1] == ["--priority"]:
        reason = use_fifo(int(args[1]))
        if reason is not None:
            sys.exit(f"echo_node: SCHED_FIFO {args[1]} refused: {reason}")
        args = args[2:]
    rclpy.init(args=args)
    spin(EchoNode())          # the same executor as dynamics_node: a like-for-like floor
    return 0


if __name__ == "__main__":
    sys.exit(main())

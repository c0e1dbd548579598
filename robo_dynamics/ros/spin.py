"""Running a node until Ctrl-C or shutdown.

rclpy's SingleThreadedExecutor. (rclpy.experimental.EventsExecutor, which promises less
overhead per message, was tried with this rclpy 9.1.2 from PyPI: dynamics_node then never
answered and sim_arm spun at 100 % CPU ignoring SIGTERM, so it is not used.)
"""

import rclpy


def spin(node):
    """Spin `node`, then destroy it and shut rclpy down."""
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    try:
        executor.spin()
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()

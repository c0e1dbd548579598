"""A planner's load on dynamics_node: ~/check_trajectory called every PERIOD seconds with a
10 s Panda trajectory (10 001 samples at 1 ms), until interrupted; then one line of figures
on stdout. Run by benchmarks/run.py in its own process, in that run's isolated ROS domain.

    python -m benchmarks.check_client [PERIOD]
"""

import os
import sys
import time

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robo_dynamics_interfaces.srv import CheckTrajectory

Q0 = np.array([0.1, -0.5, 0.2, -2.0, 0.1, 1.6, 0.7])


def trajectory():
    """10 s through 101 points of a swing of every Panda joint, positions and velocities."""
    msg = JointTrajectory(joint_names=[f"panda_joint{i}" for i in range(1, 8)])
    shape = np.linspace(1.0, 0.4, 7)
    for k in range(101):
        t = 0.1 * k
        msg.points.append(JointTrajectoryPoint(
            positions=(Q0 + 0.3 * np.sin(t) * shape).tolist(),
            velocities=(0.3 * np.cos(t) * shape).tolist(),
            time_from_start=Duration(sec=k // 10, nanosec=(k % 10) * 100_000_000)))
    return msg


def main():
    if os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE") != "LOCALHOST":
        sys.exit("check_client: run by benchmarks/run.py only (loopback discovery)")
    period = float(sys.argv[1]) if len(sys.argv) > 1 else 0.5
    rclpy.init()
    node = rclpy.create_node("check_client")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    client = node.create_client(CheckTrajectory, "/dynamics_node/check_trajectory")
    request = CheckTrajectory.Request(trajectory=trajectory(), sample_period=1e-3)
    round_trips = []
    try:
        while not client.wait_for_service(timeout_sec=0.5):
            pass
        while True:
            start = time.perf_counter()
            future = client.call_async(request)
            executor.spin_until_future_complete(future)
            if not future.result().success:
                sys.exit(f"check_client: {future.result().message}")
            round_trips.append(time.perf_counter() - start)
            time.sleep(max(0.0, period - round_trips[-1]))
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        median = np.median(round_trips) * 1e3 if round_trips else float("nan")
        print(f"calls {len(round_trips)} round_trip_ms {median:.1f}", flush=True)
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()

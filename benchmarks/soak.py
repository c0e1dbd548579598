"""Soak: the closed loop (sim_arm at 1 kHz → dynamics_node → sim_arm) for a long run.

    make soak             (= .venv/bin/python -m benchmarks.soak, 10 minutes)
    python -m benchmarks.soak [--minutes 10] [--rate 1000]

Computed-torque tracking of the demo's smooth 6-joint motion, sent as overlapping 10 s
trajectory segments of one periodic path, each sent when it starts (so that it starts where
the arm is, as the node's start_tolerance requires), and the arm moves for the whole run. Reports
RSS of both processes at start and end, joint states published and accepted (drops), the
node's rejections, computation errors and callback times, the longest gap between two
consecutive commands (at the driver, and between the joint states they answer) and between
two joint states (the source's own), and the most consecutive joint states the node left
unanswered. Loopback only, own ROS domain.
"""

import argparse
import subprocess
import sys
import time

import numpy as np

from benchmarks.measure import REPO, process_stats
from robo_dynamics.ros.isolation import isolate
from robo_dynamics.demo.scenario import Q0, desired
from robo_dynamics.ros.processes import node_command, spin_for, spin_until, stop_processes

SEGMENT = 10.0       # s of trajectory per message
OVERLAP = 1.0        # s: each segment starts this long before the previous one ends


def unanswered_run(published, answered):
    """The most consecutive stamps of `published` with no command between two commands
    answering the stamps `answered` (both sorted)."""
    published, answered = np.sort(published), np.unique(answered)
    if len(answered) < 2:
        return len(published)
    # published stamps strictly between consecutive answered ones
    between = (np.searchsorted(published, answered[1:], side="left")
               - np.searchsorted(published, answered[:-1], side="right"))
    return int(between.max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--thread-priority", type=int, default=0,
                        help="dynamics_node's thread_priority (SCHED_FIFO; 0: normal)")
    args = parser.parse_args(argv)
    isolate()
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    urdf = REPO / "urdf" / "rd_ur5e.urdf"
    common = ["--log-level", "warn", "-p", f"robot_description_file:={urdf}"]
    processes = [
        subprocess.Popen([*node_command("sim_arm", *common),
                          "-p", f"initial_positions:={Q0.tolist()}",
                          "-p", f"publish_rate:={args.rate}",
                          "-r", "effort_commands:=/dynamics_node/commands"]),
        subprocess.Popen([*node_command("dynamics_node", *common),
                          "-p", "marker_rate:=0.0",
                          # segments of one path sent while the arm tracks it: the default
                          # 10 mrad admission is below the tracking error at a switch
                          "-p", "start_tolerance:=[0.05]",
                          "-p", f"thread_priority:={args.thread_priority}"])]
    rclpy.init()
    node = rclpy.create_node("soak_driver")
    counts, diagnostics = {"states": 0, "last_state": None, "state_gap": 0.0}, {}
    published, answered = [], []       # stamps of the joint states, and of those answered

    def on_state(msg):
        """Count the joint states; the longest gap between consecutive ones (by stamp): the
        source's own, which the commands cannot do better than."""
        counts["states"] += 1
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if counts["last_state"] is not None and gaps["measuring"]:
            counts["state_gap"] = max(counts["state_gap"], stamp - counts["last_state"])
            published.append(stamp)
        counts["last_state"] = stamp
    node.create_subscription(JointState, "/joint_states", on_state, 1000)
    # the command stream as a controller would see it: each command's receipt time and the
    # stamp of the joint state it answers; the longest gaps between consecutive ones
    gaps = {"last": None, "receipt": 0.0, "stamp": 0.0, "commands": 0}

    def on_command(msg):
        received = time.monotonic()
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if gaps["last"] is not None and gaps["measuring"]:
            last_received, last_stamp = gaps["last"]
            gaps["receipt"] = max(gaps["receipt"], received - last_received)
            gaps["stamp"] = max(gaps["stamp"], stamp - last_stamp)
            answered.append(stamp)
            gaps["commands"] += 1
        gaps["last"] = (received, stamp)
    gaps["measuring"] = False
    node.create_subscription(JointState, "/dynamics_node/commanded_torques", on_command, 1000)

    def on_diagnostics(msg):
        for status in msg.status:
            if status.name.startswith("robo_dynamics"):
                diagnostics.update({kv.key: kv.value for kv in status.values})
                diagnostics["level"] = int.from_bytes(status.level, "little") \
                    if isinstance(status.level, bytes) else int(status.level)

    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    trajectory = node.create_publisher(JointTrajectory, "/dynamics_node/desired_trajectory", 10)
    names = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
             "wrist_2_joint", "wrist_3_joint"]

    def segment(start_time, offset):
        """Points of the periodic path from `offset` s on, stamped to start at start_time."""
        msg = JointTrajectory(joint_names=names)
        msg.header.stamp = rclpy.time.Time(seconds=start_time).to_msg()
        for t in np.arange(0.0, SEGMENT + 1e-9, 0.02):
            q, qd, qdd = desired(offset + t)
            point = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                         accelerations=qdd.tolist())
            point.time_from_start = rclpy.duration.Duration(seconds=float(t)).to_msg()
            msg.points.append(point)
        return msg
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        spin_until(executor, lambda: diagnostics, 30.0, processes)  # both nodes are up
        time.sleep(1.0)
        stats0 = [process_stats(p.pid) for p in processes]
        executor.spin_once(timeout_sec=0.1)
        accepted0 = int(diagnostics.get("messages_accepted", 0))
        counts["states"] = 0
        gaps["measuring"] = True
        clock_start = node.get_clock().now().nanoseconds * 1e-9
        start, next_offset = time.monotonic(), 0.0
        duration = 60.0 * args.minutes
        while time.monotonic() - start < duration:
            now = node.get_clock().now().nanoseconds * 1e-9
            if now >= clock_start + next_offset:                   # the next segment starts
                trajectory.publish(segment(clock_start + next_offset, next_offset))
                next_offset += SEGMENT - OVERLAP
            executor.spin_once(timeout_sec=0.01)
            if any(p.poll() is not None for p in processes):
                raise RuntimeError("a node died during the soak")
        spin_for(executor, 2.5)
        stats1 = [process_stats(p.pid) for p in processes]
        elapsed = time.monotonic() - start
    finally:
        stop_processes(processes)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()
    accepted = int(diagnostics.get("messages_accepted", 0)) - accepted0
    print(f"  commands received: {gaps['commands']}; longest gap between consecutive commands: "
          f"{gaps['receipt'] * 1e3:.2f} ms at the driver, {gaps['stamp'] * 1e3:.2f} ms between "
          "the joint states they answer (target ≤ 2.5 ms); longest gap between consecutive "
          f"joint states: {counts['state_gap'] * 1e3:.2f} ms")
    print(f"  most consecutive joint states left unanswered: {unanswered_run(published, answered)}"
          " (the node's share of a gap)")
    print(f"soak: {elapsed / 60:.1f} min at {args.rate:.0f} Hz, dynamics_node's joint-state "
          f"thread: {diagnostics.get('joint_state_thread')}")
    for name, (cpu0, rss0), (cpu1, rss1) in zip(("sim_arm", "dynamics_node"), stats0, stats1):
        print(f"  {name:<14} RSS {rss0:.1f} → {rss1:.1f} MiB, "
              f"CPU {100 * (cpu1 - cpu0) / elapsed:.0f} %")
    print(f"  joint states seen by the driver: {counts['states']} "
          f"({counts['states'] / elapsed:.0f} /s); accepted by the node: {accepted} "
          f"(≈ {max(counts['states'] - accepted, 0)} not processed)")
    print(f"  node: rejected {diagnostics.get('messages_rejected')}, errors "
          f"{diagnostics.get('computation_errors')}, "
          f"clamped {diagnostics.get('commands_clamped')}, "
          f"input {diagnostics.get('input_rate_hz')} Hz, "
          f"callback p50/p99/max {diagnostics.get('callback_p50_us')}/"
          f"{diagnostics.get('callback_p99_us')}/{diagnostics.get('callback_max_us')} µs, "
          f"cross-check max relative difference "
          f"{diagnostics.get('cross_check_max_relative_difference')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

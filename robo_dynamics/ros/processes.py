"""Processes of ROS nodes and waiting on them: the one way the demo, the benchmarks, the
soak and the tests start nodes, spin until something happens, and stop them.

A wait is for an event (a condition on what has arrived); its deadline only ends a wait
that would otherwise never end (a node that died, a message that never comes).
"""

import signal
import subprocess
import sys
import time


NODE_MODULES = {"dynamics_node": "robo_dynamics.ros.dynamics_node.node",
                "sim_arm": "robo_dynamics.ros.sim_arm.node"}


def node_command(node, *ros_args):
    """The command line of one of this package's nodes ("dynamics_node", "sim_arm") run by
    this Python, with `ros_args` after --ros-args."""
    return [sys.executable, "-m", NODE_MODULES[node], "--ros-args", *ros_args]


def spin_until(executor, condition, seconds, processes=(), action=None):
    """Spin `executor` (10 ms at most per wait) until condition() holds: True; False once
    `seconds` of wall time have passed or one of `processes` has exited. action: called
    before each spin (e.g. publish the next input)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
            return False
        if action is not None:
            action()
        executor.spin_once(timeout_sec=0.01)
    return True


def spin_for(executor, seconds):
    """Spin `executor` for `seconds` of wall time (a benchmark's run, or its last outputs
    arriving)."""
    spin_until(executor, lambda: False, seconds)


def stop_processes(processes):
    """SIGINT (the nodes shut down cleanly), then SIGKILL whatever is left after 5 s."""
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
    for process in processes:
        try:
            process.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

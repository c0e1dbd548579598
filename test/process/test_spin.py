"""A node's main() (ros/spin.py run) started and stopped with Ctrl-C at the awkward moments.

Each case runs in a process of its own (conftest's isolation is inherited): run() installs
signal handlers, which a pytest process must keep.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import conftest  # noqa: F401  (isolates this process and so its children)

NODE_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.signals import SignalHandlerOptions, get_current_signal_handlers_options
    from robo_dynamics.ros.isolation import isolate
    from robo_dynamics.ros.spin import run

    isolate(int(os.environ["ROS_DOMAIN_ID"]))
    WHEN = sys.argv[1]

    class Starting(Node):
        '''A node that gets Ctrl-C half way through being built, as dynamics_node does when
        the signal comes while it builds its helpers' executors.'''

        def __init__(self):
            super().__init__("starting")
            if WHEN == "while_building":
                os.kill(os.getpid(), signal.SIGINT)
                if get_current_signal_handlers_options() != SignalHandlerOptions.NO:
                    # rclpy's handler shuts the context down from its own thread: let it
                    # finish, as it does on a machine slower to build the rest
                    while self.context.ok():
                        pass
            self.helper = SingleThreadedExecutor(context=self.context)
            self.helper.add_node(Node("starting_helper", context=self.context))
            print("built", flush=True)
            if WHEN == "after_building":
                os.kill(os.getpid(), signal.SIGINT)

    sys.exit(run(Starting))
""")


def started_and_interrupted(when):
    return subprocess.run([sys.executable, "-c", NODE_SCRIPT, when], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ))


@pytest.mark.parametrize("when", ["while_building", "after_building"])
def test_ctrl_c_while_a_node_starts_ends_it_quietly_once_built(when):
    done = started_and_interrupted(when)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "built" in done.stdout, done.stderr        # the node was built all the same
    for noise in ("Traceback", "Exception ignored"):
        assert noise not in done.stderr, done.stderr


@pytest.mark.parametrize("argument, named", [
    ("kp:=100.0", "'kp' to '100.0' of type 'DOUBLE', expecting type 'DOUBLE_ARRAY'"),
    ("stale_timeout:=fast", "'stale_timeout' to 'fast' of type 'STRING', expecting type "
                            "'DOUBLE'")])
def test_a_parameter_of_the_wrong_type_on_the_command_line_is_one_line_and_exit_status_1(
        argument, named):
    """dynamics_node -p kp:=100.0 (a number where the gains are a list): the parameter, what
    was given and what is expected, on one line; no traceback."""
    from conftest import SHIPPED
    result = subprocess.run(
        [sys.executable, "-m", "robo_dynamics.ros.dynamics_node.node", "--ros-args", "-p",
         f"robot_description_file:={SHIPPED / 'rd_ur5e.urdf'}", "-p", argument],
        capture_output=True, text=True, timeout=60, env=dict(os.environ))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert f"DynamicsNode: cannot start: Trying to set parameter {named}" in result.stderr, (
        result.stderr)


DROPPED = """
import warnings
from robo_dynamics.ros.spin import report_dropped_responses
report_dropped_responses()
for _ in range(3):
    warnings.warn("failed to send response (timeout): client will not receive response",
                  RuntimeWarning)
"""


@pytest.mark.parametrize("environment, shown", [("", 3), (
    "ignore:failed to send response:RuntimeWarning", 0)])
def test_a_dropped_response_is_said_every_time_unless_the_environment_silences_it(
        environment, shown):
    """The nodes report each service response the middleware dropped (not only the first);
    a process started with PYTHONWARNINGS ignoring it (the demo's nodes: their discovery
    queries are asked again on purpose) prints none: the environment's filter comes first."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    if environment:
        env["PYTHONWARNINGS"] = environment
    result = subprocess.run([sys.executable, "-c", DROPPED], capture_output=True, text=True,
                            env=env, timeout=120, check=True)
    assert result.stderr.count("failed to send response") == shown, result.stderr

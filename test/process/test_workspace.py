"""A ROS 2 workspace as a ROS user builds it: colcon builds both packages (the manifests
order them), and dynamics_node starts from the workspace's install space, reading its URDF
from the package's share directory. colcon comes from requirements.txt (`make venv`).

Then the real `ros2 launch`, `ros2 param`, `ros2 node`, `ros2 topic` on that workspace, from
../shared/ros2-cli-kit (installed by conftest; skipped where it is absent, as on a machine
with ROS 2 installed): the default arm in a namespace with its own params file and a
simulated arm in lockstep, two arms (one a xacro arm with its own arguments) in namespaces
of their own, a missing URDF; every parameter in `ros2 param dump`; Ctrl-C exits 0."""

import contextlib
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import threading

import pytest
import yaml

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import NodeNameNonExistentError
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import REPO, flat
from robo_dynamics.ros import parameters
from robo_dynamics.ros.processes import spin_until
from palletizer import MOTORS

VENV = pathlib.Path(sys.prefix)
COLCON = shutil.which("colcon", path=str(VENV / "bin"))


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    if COLCON is None:
        pytest.skip("colcon is not installed in this environment (make venv installs it)")
    ws = tmp_path_factory.mktemp("ws")
    result = subprocess.run(["bash", str(REPO / "scripts" / "build_workspace.sh"), str(VENV),
                             str(ws)], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return ws, result.stdout


def test_colcon_builds_the_interfaces_first_and_the_graph_has_the_edge(workspace):
    ws, output = workspace
    lines = [line.split() for line in output.splitlines() if line.startswith("robo_dynamics")]
    graph = {parts[0]: parts[1] for parts in lines if len(parts) == 2}
    # colcon graph: the interfaces package is used ('*') by robo_dynamics, the line below it
    assert graph == {"robo_dynamics_interfaces": "+*", "robo_dynamics": "+"}, output[-2000:]
    finished = [line for line in output.splitlines() if line.startswith("Finished <<<")]
    assert [line.split()[2] for line in finished] == ["robo_dynamics_interfaces",
                                                      "robo_dynamics"]
    for package in ("robo_dynamics", "robo_dynamics_interfaces"):
        assert (ws / "install" / package / "share" / package / "package.xml").is_file()
    assert not list((ws / "install").rglob("site-packages/benchmarks"))


def test_dynamics_node_starts_from_the_install_space(workspace):
    ws, _ = workspace
    share = ws / "install" / "robo_dynamics" / "share" / "robo_dynamics"
    executable = ws / "install" / "robo_dynamics" / "lib" / "robo_dynamics" / "dynamics_node"
    script = (f"source {ws}/install/setup.bash && cd / && exec {executable} --ros-args "
              f"-p robot_description_file:={share}/urdf/rd_ur5e.urdf")
    env = dict(os.environ, PATH=f"{VENV / 'bin'}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    node = subprocess.Popen(["bash", "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        seen = lines_until(node, lambda line: "chain base_link -> tool0, 6 joints" in line)
        assert any("chain base_link -> tool0" in line for line in seen), "".join(seen)
        node.send_signal(signal.SIGINT)
        rest, _ = node.communicate(timeout=30)
    finally:
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()
    assert node.returncode == 0, "".join(seen) + rest
    assert "Traceback" not in "".join(seen) + rest


def test_the_installed_module_is_the_workspace_copy(workspace):
    ws, _ = workspace
    script = (f"source {ws}/install/setup.bash && cd / && python -c "
              "'import robo_dynamics, robo_dynamics_interfaces as i; "
              "print(robo_dynamics.__file__); print(i.__file__)'")
    env = dict(os.environ, PATH=f"{VENV / 'bin'}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    out = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    assert all(path.startswith(str(ws / "install")) for path in out), out


# -- ros2 launch -----------------------------------------------------------------------------
READY = re.compile(r"\[(\S+)\.dynamics_node\]: (\w+): chain base_link -> \w+, (\d) joints")

STAND_IN = """#!{python}
# robot_state_publisher stand-in, for this test only (the real one is C++, not a wheel):
# latches robot_description, subscribes to joint_states as it does, publishes no TF
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import String
rclpy.init()
node = Node("robot_state_publisher")
text = node.declare_parameter("robot_description", "").value
node.create_publisher(String, "robot_description", QoSProfile(
    depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)).publish(String(data=text))
node.create_subscription(JointState, "joint_states", lambda msg: None, 10)
try:
    rclpy.spin(node)
except KeyboardInterrupt:
    pass
finally:
    node.destroy_node()
    rclpy.try_shutdown()
"""


@pytest.fixture(scope="module")
def ros2(workspace, tmp_path_factory):
    """A function running a command in a shell with the kit's ROS 2 environment, the
    workspace and a robot_state_publisher stand-in (ROS_DOMAIN_ID: this test process's)."""
    if os.environ.get("ROS2_CLI_KIT") != "installed":
        reason = os.environ.get("ROS2_CLI_KIT", "conftest did not run")
        if "absent" in reason:
            pytest.skip(f"no ros2 CLI and launch to test with: {reason}")
        pytest.fail(f"ros2-cli-kit: {reason}")
    ws, _ = workspace
    stand_in = tmp_path_factory.mktemp("stand_in")
    (stand_in / "share/ament_index/resource_index/packages").mkdir(parents=True)
    (stand_in / "share/ament_index/resource_index/packages/robot_state_publisher").touch()
    executable = stand_in / "lib/robot_state_publisher/robot_state_publisher"
    executable.parent.mkdir(parents=True)
    executable.write_text(STAND_IN.format(python=VENV / "bin" / "python"))
    executable.chmod(0o755)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    prelude = (f"set +u; source {VENV}/bin/ros2-env.sh && source {ws}/install/setup.bash && "
               f"export AMENT_PREFIX_PATH={stand_in}:$AMENT_PREFIX_PATH && cd / && exec ")

    def start(command, **kwargs):
        # Ctrl-C must work whatever this process inherited: a runner started in the
        # background of a shell without job control ignores SIGINT, and so would launch
        return subprocess.Popen(["bash", "-c", prelude + command], env=env, text=True,
                                start_new_session=True, preexec_fn=_default_sigint, **kwargs)
    return start


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# Hz: sim_arm's rate in these launches. What they show (wiring, parameters, lifecycle) does
# not depend on it; at its default, 1000 Hz, each simulated arm and its node take about a
# core between them for as long as the launch runs.
SIM_RATE = 100
START_WAIT = 120.0        # s: a liveness bound on a node's start-up log, not a speed claim


def lines_until(process, found, timeout=START_WAIT):
    """The lines of `process`'s text stdout up to the first for which `found` is true, or
    all it printed by the time it exited or `timeout` passed (a reader thread: a node alive
    but silent cannot hang the test)."""
    lines, done = [], threading.Event()

    def read():
        for line in process.stdout:
            lines.append(line)
            if found(line):
                break
        done.set()
    threading.Thread(target=read, daemon=True).start()
    done.wait(timeout)
    return list(lines)


CLI_CALLS = 3     # a CLI call that died by a signal is made again, at most this many in all


def run(ros2, command, timeout=60, again_if_killed=True):
    """(exit code, output) of a ros2 CLI command, without the daemon (none is left behind).

    The CLI now and then dies by a signal as it tears its node down: SIGSEGV in rclpy's
    destroy_node (ros2cli's DirectNode.__exit__; 1 call in 40 here beside a running launch,
    faulthandler's stack), and in CI a SIGABRT on a corrupted heap. Such a call is made
    again (again_if_killed: for calls that change nothing), up to CLI_CALLS in all; the CLI
    runs unbuffered with faulthandler on, so what it printed and where it died are in the
    output a failure shows."""
    for _ in range(CLI_CALLS if again_if_killed else 1):
        process = ros2(f"env PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 {command}",
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            output, _ = process.communicate(timeout=timeout)
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if process.returncode >= 0:
            break
    return process.returncode, output


DUMP_CALLS = 3    # `ros2 param dump` calls that may run out of the CLI's own service wait


def param_dump(ros2, node):
    """`ros2 param dump` of `node`: (its text, the parameters it lists). The CLI waits a fixed
    5 s for the node's parameter services (its --timeout is for finding the node): on a
    loaded machine that wait can run out, which it says, and it is then asked again, at most
    DUMP_CALLS times. A failure shows its exit status and output."""
    for _ in range(DUMP_CALLS):
        code, output = run(ros2, f"ros2 param dump --no-daemon --timeout 20 {node}")
        if "Wait for service timed out" in output:
            continue
        parsed = yaml.safe_load(output) if output.strip() else None
        assert isinstance(parsed, dict) and node in parsed, f"exit status {code}: {output!r}"
        return output, parsed[node]["ros__parameters"]
    raise AssertionError(f"ros2 param dump {node}: the CLI's service wait ran out "
                         f"{DUMP_CALLS} times: {output!r}")


class Launch:
    """`ros2 launch ...` running until stop(). A thread reads its output all along (a pipe
    left unread fills, and launch, then every node it started, would block on logging);
    the constructor returns once each dynamics_node it started has said which chain it has."""

    def __init__(self, ros2, arguments, arms):
        self.process = ros2(f"ros2 launch robo_dynamics {arguments}", stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
        self.lines, self.arms = [], {}           # namespace → (robot name, joint count)
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, args=(arms,), daemon=True)
        self.reader.start()
        if arms:                  # 0: a managed node says nothing before it is configured
            self.ready.wait(timeout=120)
        if len(self.arms) != arms:      # stopped, not left running (with its nodes) by a failure
            _, output = self.stop()
            raise AssertionError(f"{len(self.arms)} of {arms} arms ready:\n{output}")

    def _read(self, arms):
        for line in self.process.stdout:
            self.lines.append(line)
            found = READY.search(line)
            if found:
                self.arms[found[1]] = (found[2], int(found[3]))
                if len(self.arms) == arms:
                    self.ready.set()
        self.ready.set()                          # the output ended (launch exited)

    def stop(self):
        """SIGINT, as Ctrl-C: (exit code, the whole output)."""
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.reader.join(timeout=10)
        return self.process.returncode, "".join(self.lines)


@contextlib.contextmanager
def launched(ros2, arguments, arms=1):
    launch = Launch(ros2, arguments, arms)
    try:
        yield launch
    finally:
        if launch.process.poll() is None:
            launch.result = launch.stop()


def discovered(ros2, command, found, attempts=20):
    """The output of `command` (a ros2 CLI graph query without the daemon) once `found`
    holds for it: each query sees what discovery has found by then."""
    for _ in range(attempts):
        code, output = run(ros2, command)
        if code == 0 and found(output):
            return output
    raise AssertionError(f"{command}: {output}")


def echo_once(topic, kind):
    """The first message on `topic` that reaches this test process's own subscriber (`kind`:
    the message class). Not `ros2 topic echo --once`: that CLI crashes now and then as it
    exits (SIGSEGV in rclpy's shutdown, after printing the message), which is not the
    launched nodes' doing."""
    node = rclpy.create_node("workspace_test_echo")
    inbox = []
    node.create_subscription(kind, topic, inbox.append, 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        assert spin_until(executor, lambda: inbox, 60.0), f"nothing on {topic}"
        return inbox[0]
    finally:
        executor.shutdown()
        node.destroy_node()


def subscriptions_of(node_name, namespace, found):
    """The topics node `namespace`/`node_name` subscribes to, once `found` holds for them (as
    this test process's own node discovers them)."""
    node = rclpy.create_node("workspace_test_graph")
    try:
        for _ in range(200):
            with contextlib.suppress(NodeNameNonExistentError):
                topics = {name for name, _ in node.get_subscriber_names_and_types_by_node(
                    node_name, namespace)}
                if found(topics):
                    return topics
            rclpy.spin_once(node, timeout_sec=0.1)
        raise AssertionError(f"{namespace}/{node_name} subscribes to no such topics")
    finally:
        node.destroy_node()


def test_ros2_launch_of_the_default_arm_in_a_namespace_with_a_simulated_arm(ros2, ros, tmp_path):
    """namespace, use_sim_time and sim: the node, robot_state_publisher and sim_arm in
    /cell/left; the arm's own params file by default (rd_ur5e.yaml: torque_limit_scale 0.8);
    commands reach the simulated arm in lockstep (its state advances on /clock); `ros2 param
    dump` lists every parameter (unset optional ones as []), and a node started from that
    dump gets the same values; Ctrl-C exits 0."""
    with launched(ros2, "dynamics.launch.py namespace:=cell/left sim:=true "
                        f"use_sim_time:=true sim_rate:={SIM_RATE}") as launch:
        assert launch.arms == {"cell.left": ("rd_ur5e", 6)}
        discovered(ros2, "ros2 node list --no-daemon --spin-time 3", lambda output: {
            "/cell/left/dynamics_node", "/cell/left/robot_state_publisher",
            "/cell/left/sim_arm"} <= set(output.split()))
        code, output = run(ros2, "ros2 param get --no-daemon --timeout 20 /cell/left/dynamics_node "
                                 "torque_limit_scale")
        assert code == 0 and output.strip() == "Double value is: 0.8", output
        commands = echo_once("/cell/left/dynamics_node/commands", Float64MultiArray).data
        assert len(commands) == 6 and all(math.isfinite(c) for c in commands)
        assert abs(commands[1]) > 10.0           # the shoulder carries the arm's weight
        first = echo_once("/cell/left/joint_states", JointState)
        later = echo_once("/cell/left/joint_states", JointState)
        stamp = lambda m: m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec
        assert 0.0 <= stamp(first) < stamp(later) < 600.0     # simulated time, from 0
        output, dumped = param_dump(ros2, "/cell/left/dynamics_node")
    assert launch.result[0] == 0, launch.result[1][-3000:]
    assert "Traceback" not in launch.result[1]
    assert f"joint_states at {SIM_RATE:.1f} Hz" in launch.result[1]      # sim_rate:= taken
    dumped = flat(dumped)
    assert set(parameters.DYNAMICS_NODE) <= set(dumped), set(parameters.DYNAMICS_NODE) - set(
        dumped)
    assert dumped["hold_damping"] == [] and dumped["torque_limit_scale"] == 0.8
    assert dumped["use_sim_time"] is True and dumped["kp"] == [100.0, 100.0, 100.0, 64.0,
                                                               64.0, 64.0]
    # the dump as a params file: the node it starts has every value again
    dump = tmp_path / "dump.yaml"
    dump.write_text(output)
    node = ros2(f"dynamics_node --ros-args -r __ns:=/cell/left --params-file {dump} "
                f"-p use_sim_time:=false", stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        seen = lines_until(node, lambda line: READY.search(line) or "Traceback" in line)
        assert seen and READY.search(seen[-1]), "".join(seen)
        # read back by this process's own client: a second CLI call adds nothing the first
        # did not show, and the CLI now and then dies in it (SIGSEGV, no output; CI 2026-11-27)
        redumped = parameters_over_rclpy("/cell/left/dynamics_node")
        assert {k: v for k, v in redumped.items() if k != "use_sim_time"} == {
            k: v for k, v in dumped.items() if k != "use_sim_time"}
        node.send_signal(signal.SIGINT)
        node.communicate(timeout=30)
    finally:
        if node.poll() is None:
            os.killpg(node.pid, signal.SIGKILL)
            node.wait()
    assert node.returncode == 0


def call_over_rclpy(kind, service, request):
    """The response of `service` to `request`, asked by this process's own client, or None
    if none comes within PROBE_WAIT. The request is sent again every PROBE_AGAIN s: a new
    client's request or its response can be lost while the two discover each other (the
    CLI's reason in `lifecycle` below); only requests that change nothing are asked this way."""
    node = rclpy.create_node("workspace_probe")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        client = node.create_client(kind, service)
        if not client.wait_for_service(timeout_sec=PROBE_WAIT):
            return None
        futures = []
        for _ in range(int(PROBE_WAIT / PROBE_AGAIN)):
            futures.append(client.call_async(request))
            if spin_until(executor, lambda: any(f.done() for f in futures), PROBE_AGAIN):
                return next(f for f in futures if f.done()).result()
        return None
    finally:
        executor.shutdown()
        node.destroy_node()


def parameters_over_rclpy(node_name):
    """{name: value} of every parameter of `node_name` (arrays as lists), asked by this
    process's own client (`call_over_rclpy`): ListParameters, then GetParameters."""
    from rcl_interfaces.srv import GetParameters, ListParameters
    from rclpy.parameter import parameter_value_to_python
    listed = call_over_rclpy(ListParameters, f"{node_name}/list_parameters",
                             ListParameters.Request())
    assert listed is not None, f"{node_name}/list_parameters answered nothing"
    names = list(listed.result.names)
    got = call_over_rclpy(GetParameters, f"{node_name}/get_parameters",
                          GetParameters.Request(names=names))
    assert got is not None, f"{node_name}/get_parameters answered nothing"
    found = {name: parameter_value_to_python(value) for name, value in zip(names, got.values)}
    return {name: list(value) if not isinstance(value, (str, bytes, bool, int, float))
            and value is not None else value for name, value in found.items()}


def test_ros2_launch_of_two_arms_each_in_its_namespace_with_its_own_files(ros2, ros):
    """two_arms.launch.py: left the default arm, right the xacro arm with l1:=0.8 l2:=0.4;
    each node has its own params file's values, and the right arm's gravity torques are
    those of the closed form with the lengths given to xacro (the file's defaults are 1 and
    0.5 m), at the state its simulated arm publishes."""
    with launched(ros2, f"two_arms.launch.py sim:=true sim_rate:={SIM_RATE}",
                  arms=2) as launch:
        assert launch.arms == {"left": ("rd_ur5e", 6), "right": ("planar_2link", 2)}
        # read by this process's own client (`ros2 param get` and dump: the test above)
        files = {ns: yaml.safe_load((REPO / "config" / name).read_text())[
            "/**/dynamics_node"]["ros__parameters"] for ns, name in (
                ("left", "rd_ur5e.yaml"), ("right", "planar_2link.yaml"))}
        for namespace, values in files.items():
            found = parameters_over_rclpy(f"/{namespace}/dynamics_node")
            for name, value in flat(values).items():
                assert found[name] == value, (namespace, name, found.get(name))
        q1, q2 = 0.3, -0.5
        code, output = run(ros2, "ros2 service call /right/dynamics_node/inverse_dynamics "
                                 "robo_dynamics_interfaces/srv/InverseDynamics "
                                 f"'{{positions: [{q1}, {q2}]}}'")
        commands = echo_once("/right/dynamics_node/commands", Float64MultiArray).data
    assert launch.result[0] == 0, launch.result[1][-3000:]
    assert code == 0 and "success=True" in output, output
    effort = [float(x) for x in re.search(r"effort=\[([^\]]*)\]", output)[1].split(",")]
    m1, m2, l1, l2, g0 = 2.0, 1.0, 0.8, 0.4, 9.81      # planar_2link.urdf.xacro's point masses
    g2 = m2 * g0 * l2 * math.cos(q1 + q2)               # at the ends of the links
    g1 = (m1 + m2) * g0 * l1 * math.cos(q1) + g2
    assert abs(abs(effort[0]) - g1) < 1e-9 * g1 and abs(abs(effort[1]) - g2) < 1e-9 * g2, (
        effort, g1, g2)
    assert len(commands) == 2 and all(math.isfinite(c) for c in commands)


def test_ros2_launch_of_the_palletizer_simulates_and_runs_its_linkage(ros2, ros, workspace):
    """urdf:= the shipped palletizer, sim:=true: its own params file's linkage reaches both
    dynamics_node and sim_arm (MuJoCo's linkage), in lockstep; the node commands its four
    motors, the rear link's holding the parallelogram as drawn (156.96 N·m: ∂V/∂θ of the
    drawing, test_shipped_linkages), and publishes the passive joints, and every joint on
    its ~/joint_states, which robot_state_publisher takes (a driver may report the motors
    only). managed:=true (and activate's default): the launch file has the lifecycle node
    configure and activate itself (active, and commanding)."""
    ws, _ = workspace
    share = ws / "install" / "robo_dynamics" / "share" / "robo_dynamics"
    with launched(ros2, f"dynamics.launch.py urdf:={share}/urdf/rd_palletizer.urdf "
                        f"namespace:=cell sim:=true use_sim_time:=true sim_rate:={SIM_RATE} "
                        "managed:=true") as launch:
        assert launch.arms == {"cell": ("rd_palletizer", 4)}
        states = [state_over_rclpy("/cell/dynamics_node")]  # configured (its chain in the
        while len(states) < 20 and states[-1] != "active [3]":    # log), then activated
            states.append(state_over_rclpy("/cell/dynamics_node"))
        assert states[-1] == "active [3]", states
        commands = echo_once("/cell/dynamics_node/commands", Float64MultiArray).data
        passive = echo_once("/cell/dynamics_node/passive_joint_states", JointState)
        drawn = subscriptions_of("robot_state_publisher", "/cell",
                                 lambda topics: "/cell/dynamics_node/joint_states" in topics)
        whole = echo_once("/cell/dynamics_node/joint_states", JointState)
    assert launch.result[0] == 0, launch.result[1][-3000:]
    assert "/cell/joint_states" not in drawn, drawn
    # every joint of the linkage: the motors where sim_arm holds them, the passive joints
    # where the parallelogram puts them (0 as drawn)
    held = dict(zip(whole.name, whole.position))
    assert sorted(held) == sorted(list(MOTORS) + ["elbow_joint", "rod_joint"]), held
    assert max(abs(held["elbow_joint"]), abs(held["rod_joint"])) < 1e-3, held
    assert "simulating rd_palletizer on engine mujoco (4 joints" in launch.result[1]
    assert len(commands) == 4 and abs(commands[2] - 156.96) < 0.01 * 156.96, commands
    assert list(passive.name) == ["elbow_joint", "rod_joint"]
    assert max(abs(x) for x in passive.position) < 1e-3        # at rest as drawn


@pytest.mark.parametrize("argument, reason", [
    ("urdf:=/nonexistent/arm.urdf.xacro", "urdf:=/nonexistent/arm.urdf.xacro: no such file"),
    ("sim:=true sim_rate:=fast", "sim_rate:=fast: a rate in Hz, above 0 and at most 10000")])
def test_ros2_launch_with_a_missing_urdf_or_a_bad_rate_says_so_and_starts_nothing(
        ros2, argument, reason):
    code, output = run(ros2, f"ros2 launch robo_dynamics dynamics.launch.py {argument}")
    assert code != 0
    assert reason in output, output
    assert "Traceback" not in output and "process started" not in output, output


GOAL = {"configure": "inactive [2]", "activate": "active [3]"}
START = {"configure": "unconfigured [1]", "activate": "inactive [2]"}
CLI_WAIT = 20.0          # s: a `ros2 lifecycle` call still waiting this long is stuck (it
                         # answers in 1-5 s, idle or in the suite)
STUCK_CALLS = 3          # stuck calls in one step: more is no longer the transport's doing
PROBE_WAIT = 180.0       # s: a liveness bound, not a speed claim: a transition (configure
                         # builds the model) holds the node's executor and get_state waits
                         # for it; on a loaded CI machine it once went unanswered for 60 s
PROBE_AGAIN = 10.0       # s: the probe's request is sent again this often


def lifecycle(ros2, transition, node="/dynamics_node", launch=None):
    """`ros2 lifecycle set` of `transition` (configure or activate): its output, once the
    node is discovered and the call answered.

    The CLI waits without a deadline for its service to be discovered by the fresh
    participant it creates for the call, and then for each response (ros2/ros2cli#853: as
    designed); Fast DDS drops a response when the caller's fresh participant is not yet
    discovered (ros2/rmw_fastrtps#842): alone, one call in a few hundred; in the suite (two
    workers, each with ROS processes of its own) one in three or four. `set` makes two calls: get_available_transitions, then change_state; a
    dropped first answer leaves the transition unsent. A call stuck for CLI_WAIT, or one
    that died by a signal (`run`), is therefore looked into with this process's own rclpy
    client:
    - the node answers no get_state within PROBE_WAIT: the node is at fault, fail;
    - the node still in the transition's start state (it never received the transition):
      the CLI is asked again;
    - the node in the transition's goal state: confirmed;
    - any other state: fail.
    launch: the Launch whose log a failure shows."""
    command = f"ros2 lifecycle set --no-daemon {node} {transition}"
    stuck = 0
    for _ in range(20):
        try:
            code, output = run(ros2, command, timeout=CLI_WAIT, again_if_killed=False)
        except subprocess.TimeoutExpired:
            code, output = None, "stuck"
        if code is None or code < 0:       # stuck, or died by a signal (run's reason):
            stuck += 1                     # whether a transition was made is unknown
            state = state_over_rclpy(node)
            log = "".join([line for line in launch.lines if "[sim_arm" not in line][-60:]
                          if launch is not None else [])      # the node's and launch's own
            assert state is not None, (f"{command}: {output}; and {node} answers no "
                                       f"get_state; the launch's last lines:\n{log}")
            assert stuck <= STUCK_CALLS, f"{command} stuck {stuck} times; {node} is {state}"
            if state == START[transition]:
                output = f"stuck; {node} is {state}"
                continue
            return ("Transitioning successful (the CLI stuck; the node's state confirms)"
                    if state == GOAL[transition] else f"the CLI stuck; state {state}")
        if code == 0 and "Node not found" not in output:
            return output
    raise AssertionError(f"{command}: {output}")


def deactivate_over_rclpy(node_name):
    """Deactivate `node_name` with this process's own client: the request is sent again
    until get_state says inactive (a request or its answer is lost as the CLI's are, above;
    a repeated one, once the node is inactive, is refused and changes nothing); the state
    seen last, 'label [id]'."""
    from lifecycle_msgs.msg import Transition
    from lifecycle_msgs.srv import ChangeState
    node = rclpy.create_node("workspace_transition")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    state = None
    try:
        client = node.create_client(ChangeState, f"{node_name}/change_state")
        assert client.wait_for_service(timeout_sec=PROBE_WAIT), f"{node_name}/change_state"
        for _ in range(int(PROBE_WAIT / PROBE_AGAIN)):
            answer = client.call_async(ChangeState.Request(
                transition=Transition(id=Transition.TRANSITION_DEACTIVATE)))
            spin_until(executor, answer.done, PROBE_AGAIN)
            state = state_over_rclpy(node_name)
            if state != "active [3]":
                break
    finally:
        executor.shutdown()
        node.destroy_node()
    return state


def state_over_rclpy(node_name):
    """'label [id]' of the node's lifecycle state, asked by this process's own client
    (`call_over_rclpy`), or None if it does not answer within PROBE_WAIT."""
    from lifecycle_msgs.srv import GetState
    answer = call_over_rclpy(GetState, f"{node_name}/get_state", GetState.Request())
    return None if answer is None else (
        f"{answer.current_state.label} [{answer.current_state.id}]")


def test_ros2_lifecycle_brings_up_a_managed_node_the_launch_file_left_unconfigured(ros2, ros):
    """managed:=true activate:=false: the node waits unconfigured and the simulated arm gets
    no command; `ros2 lifecycle set` configures it (its chain is then in the log) and
    activates it, and its commands then reach the arm; deactivate leaves it inactive. (The
    CLI for the two transitions a user makes to bring the node up; the first state and
    deactivate through this process's client: in the suite one CLI call in three or four
    sat out CLI_WAIT, 30 s each, 106 s for this test in one CI run.)
    (managed:=true alone, the launch file configuring and activating it: the palletizer's
    launch test.)"""
    # the transitions and the first state through the CLI (`ros2 lifecycle`); the states
    # after each transition through this process's own client: every CLI call is a fresh
    # process and participant, and its responses are what discovery loses (above)
    with launched(ros2, "dynamics.launch.py managed:=true activate:=false sim:=true "
                        f"use_sim_time:=true sim_rate:={SIM_RATE}", arms=0) as launch:
        # up first, as this process's client sees it: the CLI's first call to a node still
        # starting waited out CLI_WAIT in most suite runs
        assert state_over_rclpy("/dynamics_node") == "unconfigured [1]"
        assert "Transitioning successful" in lifecycle(ros2, "configure", launch=launch)
        assert state_over_rclpy("/dynamics_node") == "inactive [2]"
        assert any("rd_ur5e: chain base_link -> tool0" in line for line in launch.lines)
        assert "Transitioning successful" in lifecycle(ros2, "activate", launch=launch)
        assert state_over_rclpy("/dynamics_node") == "active [3]"
        command = echo_once("/dynamics_node/commands", Float64MultiArray)
        assert len(command.data) == 6
        assert deactivate_over_rclpy("/dynamics_node") == "inactive [2]"

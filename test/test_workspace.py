"""A ROS 2 workspace as a ROS user builds it: colcon builds both packages (the manifests
order them), and dynamics_node starts from the workspace's install space, reading its URDF
from the package's share directory. colcon comes from requirements.txt (`make venv`)."""

import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import REPO

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
    seen = []
    try:
        for line in node.stdout:      # the node's log, until it says it is configured
            seen.append(line)
            if "chain base_link -> tool0, 6 joints" in line:
                break
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

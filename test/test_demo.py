"""The README's main command, shortened: three phases run, the table and the plot appear,
and no process it started is left behind."""

import os
import subprocess
import sys

from conftest import REPO


def test_demo_runs_the_closed_loop(tmp_path):
    plot = tmp_path / "loop.png"
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-m", "robo_dynamics.ros.demo", "--duration", "1.5", "--rate", "500",
         "--output", str(plot)], cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    for phase in ("gravity compensation", "computed torque",
                  "computed torque, 1 kg unknown payload"):
        assert f"phase: {phase}" in out
    assert "loopback only" in out and plot.is_file() and plot.stat().st_size > 10_000
    # the physics (drift < 1e-9 rad, tracking, payload error) is asserted deterministically in
    # test_simulation.py and test_sim_arm_node.py; across processes a scheduling hiccup can
    # perturb gravity-only control (it has no position feedback), so here: reported, finite
    drift = float(out.split("drift after")[1].split("=")[1].split("rad")[0])
    assert 0.0 <= drift < float("inf")
    rows = [line for line in out.splitlines() if line.rstrip().endswith("%")]
    assert len(rows) == 18                     # 3 phases × 6 joints
    leftover = subprocess.run(["pgrep", "-f", "robo_dynamics.ros.sim_arm_node"],
                              capture_output=True, text=True)
    assert leftover.stdout.strip() == ""

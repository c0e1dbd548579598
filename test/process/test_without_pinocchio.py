"""Pinocchio is optional at run time: with `import pinocchio` blocked, the library's rnea
backend, dynamics_node (backend rnea, cross-check off and said so) and sim_arm work, and
what they compute equals Pinocchio's (computed here, in the test's own process)."""

import json
import subprocess
import sys

import numpy as np

import robo_dynamics as rd
from conftest import REPO, SHIPPED, rel

URDF = str(SHIPPED / "rd_ur5e.urdf")
Q = [0.3, -1.1, 1.4, -0.6, 0.9, 0.2]


def test_library_nodes_and_simulator_work_without_pinocchio():
    child = subprocess.run([sys.executable, str(REPO / "test" / "support" / "without_pinocchio.py"), URDF,
                            json.dumps(Q)], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    out = json.loads(child.stdout.strip().splitlines()[-1])
    assert out["pinocchio_imported"] is False
    assert "pinocchio" in out["pinocchio_backend"] and "not available" in out["pinocchio_backend"]

    robot = rd.load_robot(URDF)
    ref = rd.make_solver(robot, "pinocchio")
    q = np.array(Q)
    qd, qdd = np.linspace(-1.0, 1.0, robot.dof), np.linspace(2.0, -2.0, robot.dof)
    dq, dv, M = ref.inverse_dynamics_derivatives(q, qd, qdd)
    assert rel(np.array(out["tau"]), ref.inverse_dynamics(q, qd, qdd)) <= 1e-12
    assert rel(np.array(out["M"]), M) <= 1e-12
    assert rel(np.array(out["dq"]), dq) <= 1e-9 and rel(np.array(out["dv"]), dv) <= 1e-9
    assert rel(np.array(out["J"]), ref.jacobian(q)) <= 1e-12
    assert rel(np.array(out["Lambda"]), ref.operational_space_inertia(q)) <= 1e-8

    # the simulator held the arm at Q; the node answered with g(Q), Pinocchio's
    np.testing.assert_allclose(out["state"], Q, atol=1e-12)
    assert rel(np.array(out["gravity"]), ref.gravity(q)) <= 1e-9
    diagnostics = out["diagnostics"]
    assert diagnostics["backend"] == "rnea"
    assert diagnostics["cross_check"].startswith("off: backend 'pinocchio' is not available")

"""Shared fixtures: the arms the dynamics are proven on, and seeded random states."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from robo_dynamics.backends.cross_check import difference
from robo_dynamics.paths import example_robots
from robo_dynamics.ros.isolation import isolate



def worker_domain():
    """This test process's ROS domain: with pytest-xdist, worker k of a run takes the k-th
    domain after one drawn from the run's controller process, so that the workers (and the
    processes each starts, which inherit it) never share one; alone, one from its own id."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")          # gw0, gw1, ...
    if worker is None:
        return None
    return 1 + (os.getppid() + int(worker[2:])) % 100


# Any test that starts ROS stays on this machine, in a domain of its own (set before any
# test module imports rclpy).
isolate(worker_domain())

REPO = pathlib.Path(__file__).resolve().parent.parent
# the tiers (unit/, arms/, node/, process/) share the modules of support/
sys.path.insert(0, str(REPO / "test" / "support"))
# launch, launch_ros and the ros2 CLI as wheels (not on PyPI; a test tool, never a dependency
# of the package), where the developers' and CI's machines have them
ROS2_CLI_KIT = REPO.parent / "shared" / "ros2-cli-kit"


def pytest_configure(config):
    """Install ros2-cli-kit into this venv (idempotent, offline, ~3 s) once per run, before
    any test worker starts: test_workspace.py runs `ros2 launch` and `ros2 param` with it.
    ROS2_CLI_KIT in the environment then says how it went: "installed", or why not."""
    if hasattr(config, "workerinput"):          # a pytest-xdist worker: the controller did it
        return
    if not (ROS2_CLI_KIT / "install.sh").is_file():
        os.environ["ROS2_CLI_KIT"] = f"{ROS2_CLI_KIT} is absent"
        return
    result = subprocess.run(["bash", str(ROS2_CLI_KIT / "install.sh"), sys.prefix],
                            capture_output=True, text=True, timeout=600)
    os.environ["ROS2_CLI_KIT"] = "installed" if result.returncode == 0 else (
        f"install.sh failed ({result.returncode}): {result.stderr[-2000:]}")
# The files that take longest (minutes: a whole demo, a colcon build, a MuJoCo run per arm).
# `make test` hands whole files to its workers in collection order (--no-loadscope-reorder:
# pytest-xdist would otherwise order them by their number of tests), so these go first: a
# long file that started last would run alone while the other workers idle. The workspace
# (a colcon build, then several ROS processes at once) comes last of them: with two workers
# it starts about when the demo ends; with three (make test on two cores) a minute or so
# into it, the two then sharing the cores with one other worker.
LONG_FILES = ("test_demo.py", "test_arm_matrix.py", "test_example_robot_data.py",
              "test_identification_node.py", "test_payload_identification.py",
              "test_workspace.py")


def pytest_collection_modifyitems(session, config, items):
    """Run LONG_FILES first (in that order), every other file after them as collected."""
    def rank(item):
        name = item.path.name
        return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)
    items.sort(key=rank)          # stable: the tests of a file keep their order


SHIPPED = REPO / "urdf"
# Real arms' URDFs: example-robot-data, which no rosdep key provides (docs/install.md: the
# venv of `make test` installs it; a ROS workspace gets it with pip). Where it is absent, each
# test module that reads it skips as a whole, saying why (require_example_robots); with
# ROBO_DYNAMICS_REQUIRE_TEST_DATA=1 (make test, CI) its absence is an error.
EXAMPLE_ROBOTS = example_robots()
NO_EXAMPLE_ROBOTS = None if EXAMPLE_ROBOTS is not None else (
    "example-robot-data is not installed: `pip install example-robot-data==6.0.0` "
    "(docs/install.md)")
if NO_EXAMPLE_ROBOTS and os.environ.get("ROBO_DYNAMICS_REQUIRE_TEST_DATA") == "1":
    raise RuntimeError(NO_EXAMPLE_ROBOTS)


needs_example_robots = pytest.mark.skipif(NO_EXAMPLE_ROBOTS is not None,
                                          reason=NO_EXAMPLE_ROBOTS or "")


def example_robot(relative):
    """A URDF of example-robot-data (its robots/ folder), or None where it is absent (the
    test then carries needs_example_robots)."""
    return None if EXAMPLE_ROBOTS is None else EXAMPLE_ROBOTS / relative


def require_example_robots(module):
    """First thing in a test module (its __name__) that reads example-robot-data: skip the
    module, with the reason, where it is absent."""
    if NO_EXAMPLE_ROBOTS:
        pytest.skip(f"{module}: {NO_EXAMPLE_ROBOTS}", allow_module_level=True)


def pytest_report_header(config):
    return f"example-robot-data: {EXAMPLE_ROBOTS or NO_EXAMPLE_ROBOTS}"


# name → (URDF path, tip_link or None for the default)
ARMS = {
    "rd_ur5e": (SHIPPED / "rd_ur5e.urdf", None),
    "planar_2link": (SHIPPED / "planar_2link.urdf", None),
    "mixed_chain": (REPO / "test" / "data" / "mixed_chain.urdf", "tool"),
}
ARMS.update({} if EXAMPLE_ROBOTS is None else {
    "ur5": (EXAMPLE_ROBOTS / "ur_description/urdf/ur5_robot.urdf", "tool0"),
    "ur10": (EXAMPLE_ROBOTS / "ur_description/urdf/ur10_robot.urdf", "tool0"),
    "panda": (EXAMPLE_ROBOTS / "panda_description/urdf/panda.urdf", "panda_hand_tcp"),
    "xarm7": (EXAMPLE_ROBOTS / "xarm_description/urdf/xarm7.urdf", None),
    "z1": (EXAMPLE_ROBOTS / "z1_description/urdf/z1.urdf", None),
    "so101": (EXAMPLE_ROBOTS / "so_arm_description/urdf/so101.urdf", "gripper_frame_link"),
    "kinova": (EXAMPLE_ROBOTS / "kinova_description/robots/kinova.urdf",
               "j2s6s200_end_effector"),
    "double_pendulum": (EXAMPLE_ROBOTS / "double_pendulum_description/urdf/double_pendulum.urdf",
                        None),
    "double_pendulum_continuous": (
        EXAMPLE_ROBOTS / "double_pendulum_description/urdf/double_pendulum_continuous.urdf", None),
})


def rel(a, b):
    """Norm-wise relative error max |a − b| / max |b| of a result against its reference
    (cross_check.difference without its floor)."""
    return difference(a, b, floor=1e-300).max_rel


def worst_disagreement(solver, reference, q, qd, qdd, quantities=None):
    """(largest relative difference over rd.cross_check's quantities (or those named), the
    report). Λ inverts
    J M⁻¹ Jᵀ, so round-off in it grows with the condition number κ (≈ κ × 1e-16, and above
    κ_max Λ is regularised); where the reference's κ exceeds 1e6, J M⁻¹ Jᵀ itself is
    compared instead of Λ."""
    import robo_dynamics as rd
    from robo_dynamics.backends.cross_check import QUANTITIES
    report = rd.cross_check(solver, reference, q, qd, qdd,
                            QUANTITIES if quantities is None else quantities)
    if "operational_space_inertia" in report and not (
            reference.operational_space(q).condition_number <= 1e6):
        del report["operational_space_inertia"]
        J_a, J_b = solver.jacobian(q), reference.jacobian(q)
        report["J M^-1 J^T"] = difference(
            J_a @ solver.mass_matrix_inverse(q) @ J_a.T,
            J_b @ reference.mass_matrix_inverse(q) @ J_b.T)
    return max(d.max_rel for d in report.values()), report


@pytest.fixture(scope="module")
def ros():
    """rclpy initialised for the module's tests (isolated above), shut down after them."""
    import rclpy
    rclpy.init()
    yield
    rclpy.shutdown()


def load_arm(name, **kwargs):
    import robo_dynamics as rd
    if name not in ARMS and NO_EXAMPLE_ROBOTS:
        pytest.skip(f"arm '{name}': {NO_EXAMPLE_ROBOTS}")
    path, tip = ARMS[name]
    return rd.load_robot(path, tip_link=tip, **kwargs)


def random_states(robot, count, seed=0):
    """`count` seeded (q, qd, qdd): q inside joint limits (±π when wider or unset), qd ±2,
    qdd ±5 (rad or m, per second, per second squared)."""
    rng = np.random.default_rng(seed)
    unlimited = robot.upper - robot.lower < 1e-6     # URDF default lower = upper = 0
    lower = np.where(unlimited, -np.pi, np.maximum(robot.lower, -np.pi))
    upper = np.where(unlimited, np.pi, np.minimum(robot.upper, np.pi))
    q = rng.uniform(lower, upper, (count, robot.dof))
    qd = rng.uniform(-2.0, 2.0, (count, robot.dof))
    qdd = rng.uniform(-5.0, 5.0, (count, robot.dof))
    return q, qd, qdd


@pytest.fixture(params=sorted(ARMS))
def arm(request):
    """(name, RobotModel) for every arm of the test set."""
    return request.param, load_arm(request.param)


@pytest.fixture(scope="module", params=sorted(ARMS))
def solvers(request):
    """(in-house solver, Pinocchio solver) for every arm of the test set."""
    import robo_dynamics as rd
    robot = load_arm(request.param)
    return rd.make_solver(robot, "rnea"), rd.make_solver(robot, "pinocchio")


def flat(values):
    """A params file's nested mappings as ROS 2 parameter names (a.b.c)."""
    from robo_dynamics.ros.dynamics_node.closure_parameters import parameter_names
    return parameter_names(values)

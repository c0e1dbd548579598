"""The Dobot MG400 from the files its users have: its driver's URDF (a tree, every effort and
velocity limit 0; ../shared/realworld) and config/mg400.yaml beside it (its two
parallelograms as loop closures, its motors, its limits). References: the driver's own
coupling of the passive joints (HarvestX/MG400_ROS2, mg400_interface), Pinocchio's URDF
parser and constraint dynamics, and MuJoCo's URDF compiler with `connect` equalities; none
reads the URDF through robo_dynamics."""

import numpy as np
import pytest
import yaml

from conftest import REPO
import realworld
from pinocchio_loops import PinocchioLoops
from robo_dynamics.closed_chain import load_closed_chain
from robo_dynamics.closed_chain.tree_dynamics import tree_rnea

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

PARAMETERS = yaml.safe_load((REPO / "config" / "mg400.yaml").read_text())[
    "/**/dynamics_node"]["ros__parameters"]
MOTORS = PARAMETERS["actuated_joints"]
# Dobot's joint ranges [rad] (absolute angles: J3 is the forearm's angle to the horizontal)
RANGES = np.radians([(-160.0, 160.0), (-25.0, 85.0), (-25.0, 105.0), (-180.0, 180.0)])
CAD_TOLERANCE = 2e-4   # rad: the URDF's opposite sides of a parallelogram differ by up to
#                        1.7e-6 m, on a 45 mm elbow plate (the node's passive_joint_tolerance: 0.02)


@pytest.fixture(scope="module")
def urdf():
    return realworld.require(realworld.MG400_URDF).read_text()


@pytest.fixture(scope="module")
def chain(urdf):
    return load_closed_chain(urdf, PARAMETERS)


def driver_pose(names, J1, J2, J3, J4):
    """The 8 joints as the MG400's driver publishes them from Dobot's absolute angles."""
    joints = {"mg400_j1": J1, "mg400_j2_1": J2, "mg400_j3_1": J3 - J2, "mg400_j5": J4,
              "mg400_j2_2": J2, "mg400_j3_2": -J2, "mg400_j4_1": -J3, "mg400_j4_2": J3}
    return np.array([joints[name] for name in names])


def sweep(count, seed=3):
    """`count` sets of Dobot angles (J1..J4) across its ranges: the corners of J2 and J3,
    J1 a quarter turn either way (the loops' planes across the base's axes), then random."""
    rng = np.random.default_rng(seed)
    corners = [(J1, J2, J3, 0.0) for J1 in (-np.pi / 2, np.pi / 2) for J2 in RANGES[1]
               for J3 in RANGES[2]]
    return corners + [tuple(rng.uniform(RANGES[:, 0], RANGES[:, 1]))
                      for _ in range(count - len(corners))]


def test_the_loops_place_the_passive_joints_where_its_driver_does(chain):
    """Across Dobot's ranges (its corners and 60 random poses) the closure from the motors
    alone puts the four passive joints where the driver's coupling does, within the CAD's
    tolerance, on the assembly branch."""
    names = chain.tree.joint_names
    worst = 0.0
    for angles in sweep(64):
        expected = driver_pose(names, *angles)
        start = chain.reference.copy()
        start[list(chain.actuated)] = expected[list(chain.actuated)]
        q = chain.close(start)
        worst = max(worst, np.abs(q - expected).max())
        assert chain.on_branch(q)
    print(f"\nMG400: passive joints within {worst:.2g} rad of the driver's coupling")
    assert worst < CAD_TOLERANCE


def test_its_holding_torques_are_pinocchios_from_the_same_urdf(urdf, chain):
    """At 20 closed poses across Dobot's ranges: the motor torques that hold the arm equal
    Pinocchio's statics to 1e-9 N·m, and under them Pinocchio's constraint dynamics leaves
    every joint at rest (|q̈| < 1e-8 rad/s²)."""
    reference = PinocchioLoops(urdf, chain.tree.joint_names, PARAMETERS["loop_closures"])
    zero = np.zeros(chain.tree.dof)
    motors = list(chain.actuated)
    for angles in sweep(20, seed=5):
        q = chain.close(driver_pose(chain.tree.joint_names, *angles))
        tau, _ = chain.inverse_dynamics(q, zero, zero)
        np.testing.assert_allclose(tau, reference.holding_torques(q, motors), atol=1e-9)
        applied = np.zeros(chain.tree.dof)
        applied[motors] = tau
        assert np.abs(reference.accelerations(q, applied)).max() < 1e-8


def mujoco_mg400(urdf, time_step=1e-4):
    """MuJoCo's model of the URDF (its own compiler), the loops `connect` equalities at the
    params file's points (on link_a; MuJoCo finds link_b's where the URDF draws the arm),
    stiff (direct stiffness 1e8, damping 2e4; impedance 0.9999)."""
    spec = mujoco.MjSpec.from_string(urdf)
    spec.option.timestep, spec.option.integrator = time_step, mujoco.mjtIntegrator.mjINT_RK4
    loops = PARAMETERS["loop_closures"]
    for name in loops["names"]:
        loop = loops[name]
        spec.add_equality(type=mujoco.mjtEq.mjEQ_CONNECT, name1=loop["link_a"],
                          name2=loop["link_b"], objtype=mujoco.mjtObj.mjOBJ_BODY,
                          data=np.r_[loop["xyz_a"], np.zeros(9)],
                          solref=[-1e8, -2e4], solimp=[0.9999, 0.9999, 0.001, 0.5, 2.0])
    model = spec.compile()
    return model, mujoco.MjData(model)


def test_in_mujoco_its_torques_hold_it_and_a_serial_models_let_it_fall(urdf, chain):
    """MuJoCo's MG400 (from the URDF, the loops `connect`) held 0.2 s at 5 poses by the motor
    torques of the linkage: within 1e-5 rad. A serial model (the loops left open, what a
    tree-only library computes from this URDF) gets the gravity torques wrong by 2 % to
    several times and lets it move by more than 0.01 rad at every pose."""
    names, motors = chain.tree.joint_names, list(chain.actuated)
    zero = np.zeros(chain.tree.dof)
    ratios, drift = [], {"loops": 0.0, "serial": np.inf}
    for angles in [(0.0, 0.2, 0.5, 0.0), (0.5, -0.3, 0.1, 1.0), (-1.0, 1.2, 1.6, -0.5),
                   (2.0, 0.6, -0.2, 0.3), (-2.4, 1.4, 0.9, 2.0)]:
        q = chain.close(driver_pose(names, *angles))
        tau, _ = chain.inverse_dynamics(q, zero, zero)
        serial = tree_rnea(chain.tree, q, zero, zero)[motors]
        ratios += list(serial[1:3] / tau[1:3])
        for name, torque in (("loops", tau), ("serial", serial)):
            model, data = mujoco_mg400(urdf)
            data.qpos[:], data.qvel[:] = q, 0.0
            data.qfrc_applied[motors] = torque
            mujoco.mj_forward(model, data)
            for _ in range(2000):
                mujoco.mj_step(model, data)
            moved = np.abs(data.qpos - q)[motors].max()
            drift[name] = (max if name == "loops" else min)(drift[name], moved)
    ratios = np.abs(ratios)
    print(f"\nMG400 serial model / loops, J2 and J3 holding torques: {ratios.min():.2f} to "
          f"{ratios.max():.2f}; drift in 0.2 s: loops {drift['loops']:.2g} rad, serial at "
          f"least {drift['serial']:.2g} rad")
    assert drift["loops"] < 1e-5 and drift["serial"] > 0.01, drift
    assert np.abs(ratios - 1.0).min() > 0.02 and ratios.max() > 2.0, ratios

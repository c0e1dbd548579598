"""The demo's whole-arm phase (scenario.py, 11.): a plant whose inertials are not the URDF's,
three runs with fresh processes — gravity compensation with the URDF, ~/identify_arm, and
gravity compensation with the URDF it wrote."""

import pathlib
import time

import numpy as np

from ..ros.processes import stop_processes
from ..simulation.perturbed import perturbed_urdf
from .goals import identify_arm
from .scenario import DRIFT_SECONDS, HOLD_AT, IDENTIFY_ARM_GOAL, PLANT_SEED, START
from .supervisor import Supervisor, start_processes


def run_whole_arm(phase, urdf, rate, engine, lockstep, output_dir, progress):
    """{"drift": {model: {"tool" [m], "joints" (n,) [rad]}}, "result": the IdentifyArm
    result, "identified": the URDF it wrote, "plant": the plant's URDF, "simulated" [s],
    "wall" [s]}."""
    from .. import load_robot, make_solver
    robot = load_robot(urdf)
    solver = make_solver(robot, "pinocchio")          # the tool's position
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    plant = output_dir / "perturbed_ur5e.urdf"
    plant.write_text(perturbed_urdf(urdf, robot, np.random.default_rng(PLANT_SEED)))
    identified = output_dir / "identified_ur5e.urdf"
    identified.unlink(missing_ok=True)
    runs = _FreshRuns(phase, robot, rate, engine, lockstep, plant)
    observed = {"drift": {}, "plant": plant, "identified": identified}
    # the URDF's arm sinking into the safe hold is this run's story (its verdict)
    observed["drift"]["URDF"] = runs.run(
        urdf, lambda sup: _drift(sup, solver, "URDF", progress), hold_expected=True)
    observed["result"] = runs.run(urdf, lambda sup: _identify(sup, identified, progress))
    progress(" " * 60)
    if observed["result"].success and identified.exists():
        observed["drift"]["identified"] = runs.run(
            str(identified), lambda sup: _drift(sup, solver, "identified", progress))
    return {**observed, "simulated": runs.simulated, "wall": runs.wall}


class _FreshRuns:
    """Runs of the phase on the perturbed plant, each with fresh processes (sim_arm on
    `plant`, dynamics_node on the URDF given); the simulated and wall time they took [s]."""

    def __init__(self, phase, robot, rate, engine, lockstep, plant):
        self.phase, self.robot, self.rate, self.engine = phase, robot, rate, engine
        self.lockstep, self.plant = lockstep, plant
        self.simulated = self.wall = 0.0

    def run(self, model_urdf, act, hold_expected=False):
        """act(supervisor)'s answer, the node modelling the arm with `model_urdf`."""
        sup = Supervisor(self.phase, self.robot, self.rate, self.lockstep, [])
        try:
            sup.processes[:] = start_processes(model_urdf, self.phase, self.rate, self.engine,
                                               self.lockstep, plant_urdf=str(self.plant),
                                               hold_expected=hold_expected)
            if self.lockstep:
                sup.found()
            began, simulated = time.monotonic(), sup.now()     # the loop's, start-up apart
            answer = act(sup)
            self.simulated += sup.now() - simulated
            self.wall += time.monotonic() - began
            return answer
        finally:
            stop_processes(sup.processes)
            sup.close()


def _drift(sup, solver, name, progress):
    """How far the tool moves [m], and each joint [rad], over DRIFT_SECONDS of gravity
    compensation."""
    sup.flowing(sup.run_to(START))
    q = sup.measured()
    start = solver.tip_pose(q)[1]
    sup.run_to(START + DRIFT_SECONDS,
               lambda t: progress(f"  gravity compensation, {name}: "
                                 f"{t:3.0f}/{START + DRIFT_SECONDS:.0f} s"))
    return {"tool": np.linalg.norm(solver.tip_pose(sup.measured())[1] - start),
            "joints": sup.measured() - q}


def _identify(sup, identified, progress):
    """~/identify_arm from where the arm is held, writing `identified`: its result."""
    from sensor_msgs.msg import JointState
    sup.run_to(HOLD_AT)        # held where the arm stands from the first states
    sup.desire(sup.set_point_pub, JointState(name=sup.names, position=sup.measured().tolist()),
               "set-point")
    sup.flowing(sup.run_to(START))
    return identify_arm(sup, {**IDENTIFY_ARM_GOAL, "output_urdf": str(identified)}, progress)

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
    """{"drift": {model: {"tool" [m], "joints" (n,) [rad]}}, "result": the IdentifyArm result, "identified":
    the URDF it wrote, "plant": the plant's URDF, "simulated" [s], "wall" [s]}."""
    from .. import load_robot, make_solver
    robot = load_robot(urdf)
    solver = make_solver(robot, "pinocchio")          # the tool's position
    output_dir = pathlib.Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    plant = output_dir / "perturbed_ur5e.urdf"
    plant.write_text(perturbed_urdf(urdf, robot, np.random.default_rng(PLANT_SEED)))
    identified = output_dir / "identified_ur5e.urdf"
    identified.unlink(missing_ok=True)
    observed = {"drift": {}, "plant": plant, "identified": identified, "simulated": 0.0,
                "wall": 0.0}

    def drift(model_urdf, name):
        """How far the tool moves [m], and each joint [rad], over
        DRIFT_SECONDS of gravity compensation by a node that models the arm with
        `model_urdf`."""
        def act(sup):
            sup.flowing(sup.run_to(START))
            q = sup.measured()
            start = solver.tip_pose(q)[1]
            sup.run_to(START + DRIFT_SECONDS,
                       lambda t: progress(f"  gravity compensation, {name}: "
                                         f"{t:3.0f}/{START + DRIFT_SECONDS:.0f} s"))
            return {"tool": np.linalg.norm(solver.tip_pose(sup.measured())[1] - start),
                    "joints": sup.measured() - q}
        # the URDF's arm sinking into the safe hold is this run's story (its verdict)
        observed["drift"][name] = in_fresh_processes(model_urdf, act,
                                                     hold_expected=name == "URDF")

    def identify(sup):
        from sensor_msgs.msg import JointState
        sup.run_to(HOLD_AT)        # held where the arm stands from the first states
        sup.desire(sup.set_point_pub, JointState(name=sup.names,
                                                 position=sup.measured().tolist()),
                   "set-point")
        sup.flowing(sup.run_to(START))
        return identify_arm(sup, {**IDENTIFY_ARM_GOAL, "output_urdf": str(identified)},
                            progress)

    def in_fresh_processes(model_urdf, act, hold_expected=False):
        sup = Supervisor(phase, robot, rate, lockstep, [])
        try:
            sup.processes[:] = start_processes(model_urdf, phase, rate, engine, lockstep,
                                               plant_urdf=str(plant),
                                               hold_expected=hold_expected)
            if lockstep:
                sup.found()
            began, simulated = time.monotonic(), sup.now()     # the loop's, start-up apart
            answer = act(sup)
            observed["simulated"] += sup.now() - simulated
            observed["wall"] += time.monotonic() - began
            return answer
        finally:
            stop_processes(sup.processes)
            sup.close()

    drift(urdf, "URDF")
    observed["result"] = in_fresh_processes(urdf, identify)
    progress(" " * 60)
    if observed["result"].success and identified.exists():
        drift(str(identified), "identified")
    return observed

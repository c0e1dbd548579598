"""robo_dynamics: rigid-body dynamics of robot arms from their URDF.

    import robo_dynamics as rd
    robot = rd.load_robot("urdf/rd_ur5e.urdf")      # or URDF text, or a .xacro path
    solver = rd.make_solver(robot)                   # Pinocchio; backend="rnea": in-house
    tau = solver.inverse_dynamics(q, qd, qdd)

Arguments are NumPy arrays in `robot.joint_names` order, SI units.
"""

from .backends import BACKENDS, DEFAULT_BACKEND, DynamicsSolver, cross_check, make_solver
from .errors import (ArgumentError, BackendUnavailable, ModelWarning, RoboDynamicsError,
                     URDFError)
from .model import RobotModel, load_robot

__all__ = ["ArgumentError", "BACKENDS", "BackendUnavailable", "DEFAULT_BACKEND", "DynamicsSolver",
           "ModelWarning",
           "RoboDynamicsError", "RobotModel", "URDFError", "cross_check", "load_robot",
           "make_solver"]

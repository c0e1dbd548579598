"""Solvers behind one interface: the in-house NumPy algorithms and Pinocchio."""

from ..errors import ArgumentError
from .base import DynamicsSolver
from .cross_check import cross_check

BACKENDS = ("rnea", "pinocchio")


def make_solver(robot, backend="rnea"):
    """A DynamicsSolver for `robot`: backend "rnea" (in-house, NumPy) or "pinocchio".

    A chain with mimic joints gets the coupled system's dynamics (backends.coupled) from
    the backend's solver of its bodies."""
    if backend == "rnea":
        from .numpy_backend import NumpySolver as Solver
    elif backend == "pinocchio":
        from .pinocchio_backend import PinocchioSolver as Solver
    else:
        raise ArgumentError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    if not robot.is_coupled:
        return Solver(robot)
    from .coupled import CoupledSolver
    return CoupledSolver(robot, Solver(robot.bodies()))


__all__ = ["BACKENDS", "DynamicsSolver", "cross_check", "make_solver"]

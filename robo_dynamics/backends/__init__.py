"""Solvers behind one interface: the in-house NumPy algorithms and Pinocchio."""

from ..errors import ArgumentError
from .base import DynamicsSolver
from .cross_check import cross_check

BACKENDS = ("rnea", "pinocchio")


def make_solver(robot, backend="rnea"):
    """A DynamicsSolver for `robot`: backend "rnea" (in-house, NumPy) or "pinocchio"."""
    if backend == "rnea":
        from .numpy_backend import NumpySolver
        return NumpySolver(robot)
    if backend == "pinocchio":
        from .pinocchio_backend import PinocchioSolver
        return PinocchioSolver(robot)
    raise ArgumentError(f"unknown backend {backend!r}; expected one of {BACKENDS}")


__all__ = ["BACKENDS", "DynamicsSolver", "cross_check", "make_solver"]

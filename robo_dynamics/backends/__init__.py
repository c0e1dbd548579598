"""Solvers behind one interface: the in-house NumPy algorithms and Pinocchio."""

from ..errors import ArgumentError, BackendUnavailable
from .base import DynamicsSolver
from .cross_check import cross_check

BACKENDS = ("rnea", "pinocchio")
DEFAULT_BACKEND = "pinocchio"
"""The backend that computes what the library and the nodes return unless told otherwise;
the other one (in-house `rnea`) cross-checks it."""


def make_solver(robot, backend=DEFAULT_BACKEND):
    """A DynamicsSolver for `robot`: backend "pinocchio" (default) or "rnea" (in-house,
    NumPy and generated code).

    A chain with mimic joints gets the coupled system's dynamics (backends.coupled) from
    the backend's solver of its bodies. Pinocchio is optional at run time: without it,
    backend "pinocchio" raises BackendUnavailable and "rnea" works as ever.

    A closed linkage's motors (closed_chain.motor_model.MotorModel) get the in-house closed-chain
    dynamics whatever the backend: Pinocchio has no solver of a linkage's motors (its
    constraintDynamics cross-checks the linkage in the tests)."""
    if getattr(robot, "mechanism", None) is not None:
        from .closed_chain_backend import ClosedChainSolver
        return ClosedChainSolver.of(robot)
    if backend == "rnea":
        from .rnea_backend import RneaSolver as Solver
    elif backend == "pinocchio":
        try:
            from .pinocchio_backend import PinocchioSolver as Solver
        except ImportError as exc:
            raise BackendUnavailable(f"backend 'pinocchio' is not available ({exc}); "
                                     "backend 'rnea' needs only NumPy") from None
    else:
        raise ArgumentError(f"unknown backend {backend!r}; expected one of {BACKENDS}")
    if not robot.is_coupled:
        return Solver(robot)
    from .coupled import CoupledSolver
    return CoupledSolver(robot, Solver(robot.bodies()))


__all__ = ["BACKENDS", "DEFAULT_BACKEND", "DynamicsSolver", "cross_check", "make_solver"]

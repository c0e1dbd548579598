"""The solvers of one arm with a set of payloads: the model, the solver of the command path,
the other backend to cross-check it, built and warmed up. No ROS here.

payloads: {link: (mass [kg], com (3,) [m], inertia (3, 3) [kg·m²] about the centre of mass,
in the link's frame)}; a mass of 0 is no payload.
"""

import collections
import math

import numpy as np

from ..algorithms.operational_space import operational_space
from ..backends import make_solver
from ..backends.cross_check import cross_check
from ..errors import BackendUnavailable

CROSS_CHECKED = ("inverse_dynamics", "gravity", "coriolis_qd", "mass_matrix", "jacobian",
                 "operational_space_inertia", "momentum_terms")

CLOSED_LINKAGE = ("a closed linkage has one solver, the in-house closed-chain dynamics "
                  "(Pinocchio's constraintDynamics cross-checks it in the tests)")

SolverSet = collections.namedtuple("SolverSet", ["model", "solver", "checker", "checker_missing"])
SolverSet.__doc__ = """model: the chain with the payloads; solver: the command path's;
checker: the other backend (None when it cannot be made); checker_missing: why not ("")."""


def model_with(urdf_model, payloads):
    """The URDF chain carrying `payloads`."""
    model = urdf_model
    for link, (mass, com, inertia) in payloads.items():
        if mass > 0.0:
            model = model.with_payload(link, mass, com, inertia)
    return model


def build_solver_set(urdf_model, payloads, backend):
    """The SolverSet for `payloads`, its first calls made (they generate code and load
    libraries: tens of ms, which a command stream must not wait for)."""
    model = model_with(urdf_model, payloads)
    solver = make_solver(model, backend)
    if getattr(model, "mechanism", None) is not None:
        checker, missing = None, CLOSED_LINKAGE
    else:
        try:
            checker, missing = make_solver(model, "rnea" if backend == "pinocchio"
                                           else "pinocchio"), ""
        except BackendUnavailable as exc:
            checker, missing = None, str(exc)
    zero = np.zeros(model.dof)
    if checker is not None:
        cross_check(checker, solver, zero, zero, zero, CROSS_CHECKED)
    solver.inverse_dynamics(zero, zero, zero)
    solver.gravity(zero)
    operational_space(solver.jacobian(zero), M_inv=solver.mass_matrix_inverse(zero))
    return SolverSet(model, solver, checker, missing)


def payload_key(payloads):
    """A comparable form of payloads."""
    return sorted((link, mass, tuple(com), tuple(np.ravel(inertia)))
                  for link, (mass, com, inertia) in payloads.items())


class CheckingSolvers:
    """The rnea solver that checks trajectories for a payload set, made once per set (tens
    of ms of code generation) and kept while the set stays the same. For one thread: a
    solver is not shared between threads."""

    def __init__(self, urdf_model):
        self.urdf_model = urdf_model
        self._key, self._solver = None, None

    def solver(self, payloads):
        key = payload_key(payloads)
        if self._solver is None or key != self._key:
            self._solver = make_solver(model_with(self.urdf_model, payloads), "rnea")
            self._key = key
        return self._solver


def check_payload_mass(mass, limit):
    """ValueError unless 0 <= mass <= limit [kg], finite."""
    if not (math.isfinite(mass) and 0.0 <= mass <= limit):
        raise ValueError(f"mass must be finite, >= 0 and <= max_payload_mass ({limit} kg), "
                         f"got {mass}")


def with_payload(urdf_model, payloads, link, mass, com, inertia, max_mass):
    """(payloads with (mass, com, inertia) at `link`, mass 0: none; its sentence), checked
    against the chain and `max_mass` [kg]: ValueError with the reason."""
    check_payload_mass(mass, max_mass)
    urdf_model.with_payload(link, mass, com, inertia)    # validates
    changed = {**payloads, link: (mass, list(com), np.asarray(inertia, dtype=float))}
    return changed, (f"payload of {mass:.6g} kg at '{link}'" if mass > 0
                     else f"payload at '{link}' removed")


ModelChange = collections.namedtuple("ModelChange",
                                     ["urdf_model", "payloads", "built", "payload", "message"])
ModelChange.__doc__ = """A change of a node's model, prepared (solvers built), not yet in use:
urdf_model the URDF chain, payloads on it, built their SolverSet, payload (link, mass, com,
inertia) the payload it sets (None: none), message its sentence."""

SAME_CHAIN = ("joint_names", "joint_types", "body_links", "origin_rotation",
              "origin_translation", "axis", "tip_rotation", "tip_translation", "gravity",
              "lower", "upper", "velocity_limit", "effort_limit")
"""What an identified URDF must share with the chain it replaces: all but the inertials
and the joint friction."""


def payload_change(urdf_model, payloads, link, mass, com, inertia, max_mass, backend):
    """The ModelChange that sets (mass, com, inertia) at `link` (with_payload). ValueError."""
    payloads, message = with_payload(urdf_model, payloads, link, mass, com, inertia, max_mass)
    return ModelChange(urdf_model, payloads, build_solver_set(urdf_model, payloads, backend),
                       (link, mass, com, inertia), message)


def chain_change(urdf_model, chain, payloads, backend, message):
    """The ModelChange to `chain` in place of `urdf_model`: the same chain (SAME_CHAIN) with
    other inertials and friction, e.g. identified; the payloads kept. ValueError if the
    kinematics, limits or joints differ."""
    differ = [name for name in SAME_CHAIN
              if not np.array_equal(np.asarray(getattr(chain, name)),
                                    np.asarray(getattr(urdf_model, name)))]
    if differ or chain.is_coupled != urdf_model.is_coupled:
        raise ValueError(f"not the same chain as the node's: {', '.join(differ) or 'mimic'} "
                         "differ")
    return ModelChange(chain, dict(payloads), build_solver_set(chain, payloads, backend), None,
                       message)

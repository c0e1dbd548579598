"""What a joint state gives besides its command, computed only when someone wants it: the
gravity torques clamped like a command, Λ at the tip, and the tip wrench that explains the
external torques. No ROS here.

The state is the controller's (its merger's q, checked on the way in), so the solvers'
fast path is used. J, M⁻¹ and Λ are about half of a joint state's time: the node asks for
them only while they have a subscriber.
"""

import numpy as np

from ..algorithms.jacobian import LOCAL_WORLD_ALIGNED
from ..algorithms.operational_space import operational_space
from .limits import clamp_effort
from .momentum_observer import external_wrench


def clamped_gravity(controller, cycle):
    """g(q) (+ friction) of `cycle` clamped to the controller's effort bounds (n,)."""
    return clamp_effort(cycle.gravity, controller.settings.effort_bound)[0]


def tip_quantities(controller, cycle, want_lambda, want_wrench, wrench_damping):
    """(operational_space result or None, wrench (6,) or None) at the controller's state:
    Λ when `want_lambda`; the external wrench [force (N); torque (N·m)] at tip_link's
    origin, base axes, when `want_wrench` and every joint has an external-torque estimate
    (momentum_observer.external_wrench with `wrench_damping`)."""
    external = cycle.external
    want_wrench = (want_wrench and external is not None
                   and not np.isnan(external.torque).any())
    if not (want_lambda or want_wrench):
        return None, None
    solver, q = controller.solver, controller.merger.q
    J = solver.unchecked.jacobian(q, LOCAL_WORLD_ALIGNED)
    result = (operational_space(J, M_inv=solver.unchecked.mass_matrix_inverse(q))
              if want_lambda else None)
    wrench = external_wrench(J, external.torque, wrench_damping) if want_wrench else None
    return result, wrench

"""An arm identification fitted and checked, as one call that a process of its own can run
(identification/fit_process.py): the estimate, the physically consistent parameters, the corrected URDF
and each model's prediction of held-out states. No ROS here. Used by ~/identify_arm and
dynamics_identify.

Its arguments and result are plain (a RobotModel, arrays, a dict), so that it crosses a
process boundary; what it computes is arm_identification.py's and consistent_parameters.py's.
"""

import numpy as np

from ..io.state_derivatives import velocities_and_accelerations
from ..model.loader import load_robot
from . import arm_identification as ai
from .consistent_parameters import bodies, consistent_parameters, friction_shown
from .urdf_inertials import corrected_urdf

def fit_and_check(model, fit, held, min_speed=ai.MIN_SPEED):
    """Fit `model`'s chain to the states `fit` and predict the states `held`, each (q, q̇,
    q̈, τ_m) (N, n) in model order. Returns a dict: text (the corrected URDF), friction
    (n, 3), shown (n, 2) bool (friction_shown), base_parameters, identified, samples (fit
    states), sigma (n,) [N·m], predicted {"URDF": (M, n), "identified": (M, n)} [N·m]."""
    base = ai.BaseParameters(model)
    estimate = ai.Rows(model, base, *fit[:3], min_speed).fit(fit[3])
    pi, friction = consistent_parameters(model, estimate)
    text = corrected_urdf(model.urdf_xml, model, bodies(pi), friction)
    corrected = load_robot(text, base_link=model.base_link, tip_link=model.tip_link,
                           gravity=model.gravity).with_armature(model.armature)
    return {"text": text, "friction": friction, "shown": friction_shown(model, estimate),
            "base_parameters": base.count, "identified": int(estimate.identified.sum()),
            "samples": len(fit[0]), "sigma": estimate.sigma,
            "predicted": {"URDF": ai.urdf_torques(model, *held[:3]),
                          "identified": ai.urdf_torques(corrected, *held[:3])}}


def fit_recording(model, t, q, qd, tau, held_from):
    """fit_and_check of one recording (t (N,) [s]; q, q̇, τ_m (N, n)): q̈ from q̇, the states
    before `held_from` [s] fitted, the rest held out. ValueError without efforts."""
    if np.isnan(tau).any():
        raise ValueError("the joint states carry no efforts for every joint")
    _, qdd = velocities_and_accelerations(t, q, qd)
    held = t >= held_from
    states = (q, qd, qdd, tau)
    return fit_and_check(model, tuple(x[~held] for x in states),
                         tuple(x[held] for x in states))

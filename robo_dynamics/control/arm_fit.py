"""One recording of an arm identification fitted, as one call that a process of its own can
run (fit_process.py): the estimate, the physically consistent parameters, the corrected URDF
and how each model predicts the held-out period. No ROS here.

Its arguments and result are plain (a RobotModel, arrays, a dict), so that it crosses a
process boundary; what it computes is arm_identification.py's and consistent_parameters.py's.
"""

import numpy as np

from . import arm_identification as ai
from .consistent_parameters import bodies, consistent_parameters, friction_shown
from .state_derivatives import velocities_and_accelerations
from ..io.urdf_inertials import corrected_urdf
from ..model.loader import load_robot


def fit_recording(model, t, q, qd, tau, held_from):
    """The fit of the states before `held_from` [s] (t (N,) [s]; q, q̇, τ_m (N, n), model
    order) and its check on the states from then on. Returns a dict: text (the corrected
    URDF), friction (n, 3), shown (n, 2) bool (friction_shown), base_parameters,
    identified, samples, sigma (n,), urdf_error / identified_error (n,) and their _all
    (pooled), relative RMS on the held-out states. ValueError without efforts."""
    if np.isnan(tau).any():
        raise ValueError("the joint states carry no efforts for every joint")
    _, qdd = velocities_and_accelerations(t, q, qd)
    held = t >= held_from
    base = ai.BaseParameters(model)
    estimate = ai.Rows(model, base, q[~held], qd[~held], qdd[~held]).fit(tau[~held])
    pi, friction = consistent_parameters(model, estimate)
    text = corrected_urdf(model.urdf_xml, model, bodies(pi), friction)
    corrected = load_robot(text, base_link=model.base_link, tip_link=model.tip_link,
                           gravity=model.gravity)
    out = {"text": text, "friction": friction, "shown": friction_shown(model, estimate),
           "base_parameters": base.count, "identified": int(estimate.identified.sum()),
           "samples": int((~held).sum()), "sigma": estimate.sigma}
    for field, chain in (("urdf", model), ("identified", corrected)):
        predicted = ai.urdf_torques(chain, q[held], qd[held], qdd[held])
        out[f"{field}_error"] = ai.nrms(tau[held], predicted)
        out[f"{field}_error_all"] = ai.pooled_nrms(tau[held], predicted)
    return out

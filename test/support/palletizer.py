"""The shipped palletizer (urdf/rd_palletizer.urdf, config/rd_palletizer.yaml) in closed
form from its drawing: its motors, a closed pose on the drawing's branch, and the holding
torques by virtual work (nothing of robo_dynamics but the closure)."""

import numpy as np
import yaml

from conftest import REPO

G = 9.81
URDF = REPO / "urdf" / "rd_palletizer.urdf"
PARAMETERS = yaml.safe_load((REPO / "config" / "rd_palletizer.yaml").read_text())[
    "/**/dynamics_node"]["ros__parameters"]
MOTORS = ("base_joint", "shoulder_joint", "rear_joint", "wrist_joint")


def closed(chain, motors):
    """The closed pose with the motors (base, shoulder, rear, wrist) at `motors` [rad], on
    the drawing's assembly branch (continued from it: Newton's method from u = 0 alone can
    land on the crossed one, the rod across the parallelogram)."""
    q = np.zeros(chain.tree.dof)
    for name, value in zip(MOTORS, motors):
        q[chain.tree.joint_names.index(name)] = value
    return chain.close(q, start=np.zeros(chain.tree.dof))


def holding_torque(shoulder, rear):
    """(τ_base, τ_shoulder, τ_rear, τ_wrist) [N·m] = ∂V/∂θ, V the links' potential energy
    from the drawing: angles in the arm's plane from the forward horizontal, each motor's
    positive turn about −y raising them; the upper arm (25 kg, centre 0.4 m) and the rod
    (6 kg, 0.4 m along it from the rear link's end) at 90° + shoulder, the rear link (8 kg,
    centre 0.125 m) at 180° + rear, the forearm (28 kg, centre 0.375 m ahead of the elbow,
    0.8 m up the upper arm) at rear (the parallelogram keeps it parallel to the rear link),
    the tool (8 kg) 1.0 m ahead of the elbow and 0.1 m along the forearm's −z."""
    def V(s, r):
        up, rl, fo = np.pi / 2 + s, np.pi + r, r
        elbow = 0.8 * np.sin(up)
        return G * (25.0 * 0.4 * np.sin(up) + 6.0 * (0.25 * np.sin(rl) + 0.4 * np.sin(up))
                    + 8.0 * 0.125 * np.sin(rl) + 28.0 * (elbow + 0.375 * np.sin(fo))
                    + 8.0 * (elbow + 1.0 * np.sin(fo) - 0.1 * np.cos(fo)))
    h = 1e-6
    return np.array([0.0, (V(shoulder + h, rear) - V(shoulder - h, rear)) / (2 * h),
                     (V(shoulder, rear + h) - V(shoulder, rear - h)) / (2 * h), 0.0])

"""Closed mechanisms (four-bars, parallelograms, Deltas): a kinematic tree, the loop
closures that cut joints became, and the constrained dynamics of Lee, Sohn, Kim and Yoo,
"Construction of System Jacobian in the Equations of Motion Using Velocity Transformation
Technique" (docs/closed-chains.md). Plain Python + NumPy, like the rest of the core.

    tree.py            the spanning tree (every movable joint a coordinate) from a URDF
    tree_dynamics.py   its kinematics, frame Jacobians, RNEA and mass matrix
    closures.py        cut joints as Φ(q) = 0: Φ, Φ_q, γ; read from a params file
    partition.py       generalized coordinate partitioning (Wehage and Haug)
    mechanism.py       ClosedChain: position closure, q̇ = B v̇, inverse and forward dynamics
"""

from .closures import Closure, closure, closures_from_parameters
from .mechanism import ClosedChain
from .tree import KinematicTree, load_tree


def load_closed_chain(source, parameters=None, closures=(), actuated_joints=None,
                      gravity=(0.0, 0.0, -9.81), reference=None):
    """A ClosedChain from a URDF (text or path) and its closures: `closures` (Closure
    objects) and those of `parameters` (a node's ros__parameters: loop_closures, and
    actuated_joints unless given)."""
    parameters = parameters or {}
    tree = load_tree(source, gravity=gravity)
    every = tuple(closures) + closures_from_parameters(parameters)
    if actuated_joints is None:
        actuated_joints = parameters.get("actuated_joints", ())
    return ClosedChain(tree, every, tuple(actuated_joints), reference)


__all__ = ["ClosedChain", "Closure", "KinematicTree", "closure", "closures_from_parameters",
           "load_closed_chain", "load_tree"]

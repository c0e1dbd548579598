"""Closed mechanisms (four-bars, parallelograms, Deltas): a kinematic tree, the loop
closures that cut joints became, and the constrained dynamics of Lee, Sohn, Kim and Yoo,
"Construction of System Jacobian in the Equations of Motion Using Velocity Transformation
Technique" (docs/closed-chains.md). Plain Python + NumPy, like the rest of the core.

    tree.py            the spanning tree (every movable joint a coordinate) from a URDF
    tree_dynamics.py   its kinematics, frame Jacobians, RNEA and mass matrix
    closures.py        cut joints as Φ(q) = 0: Φ, Φ_q, γ; read from a params file
    compiled.py        what a state needs, generated for one mechanism (Φ, Φ_q, g, RNEA, M,
                       the motors' momentum terms)
    sdf.py             a closed mechanism from an SDF model (the loop cut where chosen)
    urdf_closures.py   a URDF's <gazebo> joints as closures, its transmissions as motors
    partition.py       generalized coordinate partitioning (Wehage and Haug)
    mechanism.py       ClosedChain: position closure, q̇ = B v̇, inverse and forward dynamics
    branch.py          the assembly branch a closed pose is on (the signs of det Φ_u)
    motor_space.py     MotorSpace: its dynamics in the motors' coordinates, state by state
    motor_closure.py   the loops closed for the motors, compiled (Newton's step, B_u, det Φ_u)
    springs.py         joint springs and dampers (from SDF or a params file)
    mimics.py          a URDF's <mimic> joints: superseded by the loops, or coupled motors
    motor_model.py     MotorModel: its motors as a controller sees them (the solver of
                       them: backends/closed_chain_backend.py)
Its motion in time (the reduced equations' integrators, the DAE on its system Jacobian)
lives in simulation/constrained/.
"""

import dataclasses

from ..model.source import read_description
from .closures import Closure, closure, closures_from_parameters
from .mechanism import ClosedChain
from .mimics import with_mimics
from .motor_space import MotorSpace
from .sdf import load_sdf
from .springs import springs_from_parameters
from .tree import KinematicTree, load_tree
from .urdf_closures import gazebo_closures, transmission_joints


def load_closed_chain(source, parameters=None, closures=(), actuated_joints=None,
                      gravity=(0.0, 0.0, -9.81), reference=None):
    """A ClosedChain from a URDF (text or path) and its closures: `closures` (Closure
    objects), the URDF's <gazebo> joints and those of `parameters` (a node's
    ros__parameters: loop_closures). The motors: actuated_joints, else the parameters',
    else the URDF's transmissions. Joint springs and dampers: the parameters'
    joint_springs (springs.py). A <mimic> joint gives way to the loops where they determine
    it; one they leave free is kept as a coupling of its master motor (mimics.py)."""
    parameters = parameters or {}
    xml_text, _ = read_description(source)
    mimics = {}
    tree = load_tree(xml_text, gravity=gravity, mimics=mimics)
    every = (tuple(closures) + gazebo_closures(xml_text, tree)
             + closures_from_parameters(parameters))
    if actuated_joints is None:
        actuated_joints = parameters.get("actuated_joints") or transmission_joints(xml_text)
    springs = springs_from_parameters(tree, parameters.get("joint_springs"))
    if not mimics:
        return ClosedChain(tree, every, tuple(actuated_joints), reference, springs)

    def build(actuated, tree=tree):
        return ClosedChain(tree, every, actuated, reference, springs)
    chain, notes = with_mimics(tree, build, actuated_joints, mimics)   # or URDFError
    noted = build(chain.actuated_joints, dataclasses.replace(     # the notes among the
        tree, warnings=tree.warnings + notes))                   # model's warnings
    noted.coupling = chain.coupling
    return noted


__all__ = ["ClosedChain", "Closure", "KinematicTree", "MotorSpace", "closure",
           "closures_from_parameters", "load_closed_chain", "load_sdf", "load_tree"]

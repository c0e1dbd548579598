"""Rotations, cross products and rigid-body inertia: NumPy only.

Spatial vectors in this package are kept as two 3-vectors, angular and linear, so no
function has to agree on a 6-vector ordering. Where a 6-vector leaves the library (the
Jacobian, Λ, wrenches) the order is [linear; angular], as in Pinocchio and geometry_msgs.
"""

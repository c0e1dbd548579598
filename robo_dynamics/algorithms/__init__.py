"""Rigid-body dynamics algorithms of a serial chain, NumPy only.

Every function takes the RobotModel first. Functions named `*_batch` take states stacked
along a leading axis (q of shape (N, n)) and are vectorised over it; the others take one
state (q of shape (n,)). Twists and wrenches are expressed in the base frame about its
origin (Lynch & Park, Modern Robotics, §8.3, written in the space frame, so every adjoint
map is the identity and the recursions become running sums over the chain).
"""

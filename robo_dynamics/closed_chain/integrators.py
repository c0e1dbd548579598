"""Integrating a closed mechanism's motion on its independent coordinates.

Lee, Sohn, Kim and Yoo, §4.1: with the coordinates partitioned into dependent u and
independent v, the equations of motion reduce to the independent ones (eq. 11–12)

    M̂ v̈ = Q̂,   M̂ = Bᵀ M B,   Q̂ = Bᵀ (Sᵀτ − h − M c)

(B the velocity transformation, c the dependent accelerations' part Φ_u⁻¹γ), an ODE in
(v, v̇); after each step u is solved by Newton's method (the position constraint) and u̇
by the velocity constraint, so the loop stays closed to the Newton tolerance. Two
integrators of that ODE: the classical Runge–Kutta (explicit) and the trapezoidal rule
(implicit, solved by Newton's method on v̇ with a central-difference Jacobian).
"""

import numpy as np

from .tree_dynamics import tree_kinematics, tree_mass_matrix, tree_rnea

IMPLICIT_TOLERANCE = 1e-12    # rad/s: the trapezoidal rule's Newton iterations stop here
IMPLICIT_ITERATIONS = 20
DIFFERENCE_STEP = 1e-6        # the central differences of the implicit Jacobian


def reduced_acceleration(chain, q, qd, tau=None):
    """v̈ (d,) from M̂ v̈ = Q̂ at a closed state (q, q̇); tau (k,) the motors' torques."""
    tree = chain.tree
    kin = chain.kinematics(q)
    M = tree_mass_matrix(tree, q, kin)
    h = tree_rnea(tree, q, qd, np.zeros(tree.dof), kin=kin)
    applied = np.zeros(tree.dof)
    if tau is not None:
        applied[list(chain.actuated)] = tau
    B = chain.velocity_transformation(q)
    c = chain.accelerations(q, qd, np.zeros(chain.dof))       # q̈ at v̈ = 0
    return np.linalg.solve(B.T @ M @ B, B.T @ (applied - h - M @ c))


def _state(chain, q_guess, v, v_dot):
    """The closed (q, q̇) with independent coordinates v, rates v̇: u by Newton's method
    from q_guess's (a step away: the same assembly branch)."""
    q = q_guess.copy()
    q[list(chain.partition.v)] = v
    closed = chain.newton(q)
    if closed is None:             # Newton's method from q_guess failed: continuation
        closed = chain.close(q, start=q_guess)
    return closed, chain.velocities(closed, v_dot)


def _rates(chain, q_guess, y, tau):
    d = chain.dof
    q, qd = _state(chain, q_guess, y[:d], y[d:])
    return np.concatenate((y[d:], reduced_acceleration(chain, q, qd, tau)))


def runge_kutta_step(chain, q, qd, h, tau=None):
    """(q, q̇) after one classical Runge–Kutta step h [s] of the reduced equations (the
    partition chosen again first if it has become ill-conditioned)."""
    v = list(chain.ensure_partition(q).v)
    y = np.concatenate((q[v], qd[v]))
    k1 = _rates(chain, q, y, tau)
    k2 = _rates(chain, q, y + 0.5 * h * k1, tau)
    k3 = _rates(chain, q, y + 0.5 * h * k2, tau)
    k4 = _rates(chain, q, y + h * k3, tau)
    y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    d = chain.dof
    return _state(chain, q, y[:d], y[d:])


def trapezoidal_step(chain, q, qd, h, tau=None):
    """(q, q̇) after one step h [s] of the trapezoidal rule on the reduced equations:
    y₁ = y₀ + h/2 (f(y₀) + f(y₁)), solved for y₁ by Newton's method."""
    v, d = list(chain.ensure_partition(q).v), chain.dof
    y0 = np.concatenate((q[v], qd[v]))
    f0 = _rates(chain, q, y0, tau)
    y1 = y0 + h * f0

    def residual(y):
        f = _rates(chain, q, y, tau)
        return y - y0 - 0.5 * h * (f0 + f)

    for _ in range(IMPLICIT_ITERATIONS):
        r = residual(y1)
        if np.max(np.abs(r)) <= IMPLICIT_TOLERANCE:
            break
        J = np.empty((2 * d, 2 * d))
        for j in range(2 * d):
            e = np.zeros(2 * d)
            e[j] = DIFFERENCE_STEP
            J[:, j] = (residual(y1 + e) - residual(y1 - e)) / (2.0 * DIFFERENCE_STEP)
        y1 = y1 - np.linalg.solve(J, r)
    return _state(chain, q, y1[:d], y1[d:])


def energy(chain, q, qd):
    """Kinetic plus potential energy [J] of the tree at (q, q̇) (potential zero at the base
    origin, gravity the tree's)."""
    tree = chain.tree
    kin = tree_kinematics(tree, q)
    kinetic = 0.5 * qd @ tree_mass_matrix(tree, q, kin) @ qd
    return kinetic - float(np.sum(tree.mass * (kin.com @ tree.gravity)))

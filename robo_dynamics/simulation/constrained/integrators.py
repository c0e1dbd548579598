"""Integrating a closed mechanism's motion on its independent coordinates.

Lee, Sohn, Kim and Yoo, §4.1: with the coordinates partitioned into dependent u and
independent v, the equations of motion reduce to the independent ones (eq. 11–12)

    M̂ v̈ = Q̂,   M̂ = Bᵀ M B,   Q̂ = Bᵀ (Sᵀτ − h − M c)

(B the velocity transformation, c the dependent accelerations' part Φ_u⁻¹γ), an ODE in
(v, v̇); after each step u is solved by Newton's method (the position constraint) and u̇
by the velocity constraint, so the loop stays closed to the Newton tolerance: Wehage and
Haug's generalized coordinate partitioning. Two integrators of that ODE, each choosing its
step from an estimate of its local error: Dormand and Prince's embedded Runge–Kutta pair
(explicit) and BDF of variable step and order (implicit, bdf.py; Newton's method with a
central-difference Jacobian of the reduced rates). dae.py integrates the same motion as a
DAE in all coordinates.
"""

import numpy as np

from ...closed_chain.tree_dynamics import tree_kinematics, tree_mass_matrix
from .bdf import REUSE, AdaptiveBDF, Convergence, weighted_rms

IMPLICIT_ITERATIONS = 20
DIFFERENCE_STEP = 1e-6        # the central differences of the implicit Jacobian


def reduced_acceleration(chain, q, qd, tau=None):
    """v̈ (d,) from M̂ v̈ = Q̂ at a closed state (q, q̇); tau (k,) the motors' torques."""
    tree = chain.tree
    M, h = chain.compiled.mass_matrix(q), chain.compiled.rnea(q, qd, np.zeros(tree.dof))
    applied = chain.applied_forces(q, qd, tau)            # motors, joint springs
    B = chain.velocity_transformation(q)
    c = chain.accelerations(q, qd, np.zeros(chain.dof))       # q̈ at v̈ = 0
    return np.linalg.solve(B.T @ M @ B, B.T @ (applied - h - M @ c))


def _state(chain, q_guess, v, v_dot):
    """The closed (q, q̇) with independent coordinates v, rates v̇: u by Newton's method
    from q_guess's (a step away: the same assembly branch)."""
    closed = chain.close_from(q_guess, v)
    return closed, chain.velocities(closed, v_dot)


def _rates(chain, q_guess, y, tau):
    d = chain.dof
    q, qd = _state(chain, q_guess, y[:d], y[d:])
    return np.concatenate((y[d:], reduced_acceleration(chain, q, qd, tau)))


# Dormand and Prince's RK5(4)7M (J. Comput. Appl. Math. 6, 1980): nodes, stages, the fifth-
# order weights (also the last stage's row) and the fourth-order ones
DP_C = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
DP_A = [[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
        [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
DP_B5 = np.array([35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0])
DP_B4 = np.array([5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100,
                  1 / 40])


def dormand_prince(chain, q, qd, duration, tolerance=1e-9, tau=None, first_step=1e-4):
    """(q, q̇) `duration` [s] later: the reduced equations integrated by the embedded
    Runge–Kutta pair of Dormand and Prince, the step chosen so that the difference of its
    fifth- and fourth-order results stays within `tolerance` × (1 + |y|) (RMS), the
    partition chosen again between steps when it has become ill-conditioned. Also returns
    the number of accepted steps."""
    t, h, steps = 0.0, first_step, 0
    while t < duration - 1e-12:
        h = min(h, duration - t)
        v, d = list(chain.ensure_partition(q).v), chain.dof
        y = np.concatenate((q[v], qd[v]))
        k = [_rates(chain, q, y, tau)]
        for i in range(1, 7):
            k.append(_rates(chain, q, y + h * sum(a * kj for a, kj in zip(DP_A[i], k)), tau))
        k = np.array(k)
        y5 = y + h * DP_B5 @ k
        error = weighted_rms(h * (DP_B5 - DP_B4) @ k, y5, tolerance)
        if error <= 1.0:
            t, steps = t + h, steps + 1
            q, qd = _state(chain, q, y5[:d], y5[d:])
        h *= min(5.0, max(0.2, 0.9 * max(error, 1e-10) ** -0.2))
    return q, qd, steps


class ReducedBDF:
    """The reduced equations integrated from t = 0 by BDF of variable step and order
    (bdf.py; Newton's method on v with a central-difference Jacobian of the reduced
    rates), u closed after each step: coordinate partitioning with an implicit integrator.
    When the partition is chosen again, the history restarts in the new coordinates.
    advance(t) → (q, q̇) at t [s]."""

    def __init__(self, chain, q, qd, tolerance=1e-8, tau=None):
        self.chain, self.tau, self.q, self.qd = chain, tau, q, qd
        self.tolerance, self.matrix = tolerance, None  # matrix: ((αI − ∂f/∂y)⁻¹, its α)
        self.v = list(chain.ensure_partition(q).v)
        y = np.concatenate((q[self.v], qd[self.v]))
        self.engine = AdaptiveBDF(y, _rates(chain, q, y, tau), 0.0, tolerance, self._solve,
                                  accept=self._close, restart=self._new_partition,
                                  derivative=lambda y: _rates(chain, self.q, y, tau))

    def advance(self, t_end):
        self.engine.advance(t_end)
        return self.q, self.qd

    def _solve(self, alpha, beta, guess):
        """Newton's method on α y + β − f(y) = 0 from `guess`, with the Jacobian of f (central
        differences) kept from step to step while α stays within REUSE of its own and the
        iterations converge; else evaluated afresh and the iterations started again."""
        for fresh in (False, True):
            if fresh or self.matrix is None or abs(alpha / self.matrix[1] - 1.0) > REUSE:
                self.matrix = (np.linalg.inv(alpha * np.eye(len(guess))
                                             - self._jacobian(guess)), alpha)
                fresh = True
            y = self._newton(alpha, beta, guess)
            if y is not None or fresh:
                return y
        return None

    def _jacobian(self, y):
        m = len(y)
        J = np.empty((m, m))
        for j in range(m):
            e = np.zeros(m)
            e[j] = DIFFERENCE_STEP
            J[:, j] = (self._rates(y + e) - self._rates(y - e)) / (2.0 * DIFFERENCE_STEP)
        return J

    def _rates(self, y):
        return _rates(self.chain, self.q, y, self.tau)

    def _newton(self, alpha, beta, guess):
        iteration, alpha_kept = self.matrix
        scale = 2.0 / (1.0 + alpha / alpha_kept)     # as DASSL scales a kept matrix's step
        y, convergence = guess.copy(), Convergence(self.tolerance)
        for _ in range(IMPLICIT_ITERATIONS):
            delta = -scale * iteration @ (alpha * y + beta - self._rates(y))
            y = y + delta
            done = convergence.check(delta, y)
            if done is None or done:
                return y if done else None
        return None

    def _close(self, y):
        d = self.chain.dof
        self.q, self.qd = _state(self.chain, self.q, y[:d], y[d:])
        return y

    def _new_partition(self):
        v = list(self.chain.ensure_partition(self.q).v)
        if v == self.v:
            return None
        self.v, self.matrix = v, None
        return np.concatenate((self.q[v], self.qd[v]))


def energy(chain, q, qd):
    """Kinetic plus potential energy [J] of the tree at (q, q̇) (potential zero at the base
    origin, gravity the tree's)."""
    tree = chain.tree
    kin = tree_kinematics(tree, q)
    kinetic = 0.5 * qd @ tree_mass_matrix(tree, q, kin) @ qd
    return kinetic - float(np.sum(tree.mass * (kin.com @ tree.gravity)))

"""The equations of motion as a DAE (eq. 27) and a BDF integrator driven by its system
Jacobian (system_jacobian.py), as Lee, Sohn, Kim and Yoo integrate them with DASSL (§4.2).

Unknowns at each step: Y = [w; q] (velocities, positions) and the multipliers λ. Equations:
G(Y, Y′, λ) = 0 (eq. 27) and the constraint at acceleration level Φ_q ẇ = γ (index 1 in λ).
The backward differentiation formula of order 1 (the first step) or 2 replaces Y′ by
α Y + β; Newton's method solves for (Y, λ) with the iteration matrix

    [[α ∂G/∂Y′ + ∂G/∂Y, [Φ_qᵀ; 0]], [[α Φ_q, 0], 0]]

evaluated once per step (the constraint row's dependence on q and w through Φ_q and γ left
out: a simplified Newton iteration, as DASSL keeps an iteration matrix for several steps). After each step the
positions are projected onto Φ = 0 and the velocities onto Φ_q w = 0 (the dependent
coordinates solved, the independent kept: coordinate partitioning), so the loop does not
drift.
"""

import numpy as np

from .closures import constraint_jacobian
from .system_jacobian import system_jacobian
from .tree_dynamics import tree_kinematics, tree_rnea

NEWTON_TOLERANCE = 1e-10
NEWTON_ITERATIONS = 25


def residual(chain, Y, Y_prime, lam, tau=None):
    """G(Y, Y′) (2n,) of eq. 27 (λ for the independent rows of Φ)."""
    n = chain.tree.dof
    w, q = Y[:n], Y[n:]
    w_dot, q_dot = Y_prime[:n], Y_prime[n:]
    applied = np.zeros(n)
    if tau is not None:
        applied[list(chain.actuated)] = tau
    kin = tree_kinematics(chain.tree, q)
    Phi_q = constraint_jacobian(chain.tree, chain.closures, kin)[list(chain.partition.rows)]
    top = tree_rnea(chain.tree, q, w, w_dot, kin=kin) + Phi_q.T @ lam - applied
    return np.concatenate((top, w - q_dot))


class BDF:
    """Fixed-step BDF (order 1, then 2) on eq. 27 for a closed chain; step() advances h [s]."""

    def __init__(self, chain, q, qd, h, tau=None):
        self.chain, self.h, self.tau = chain, float(h), tau
        self.history = [np.concatenate((qd, q))]       # Y at the last steps, newest last
        self.lam = chain.forward_dynamics(q, qd, tau)[1]

    def _formula(self):
        """(α, β): Y′ ≈ α Y + β at the new step."""
        h, Y = self.h, self.history
        if len(Y) < 2:
            return 1.0 / h, -Y[-1] / h
        return 1.5 / h, (-2.0 * Y[-1] + 0.5 * Y[-2]) / h

    def step(self):
        """(q, q̇) one step later."""
        chain, n = self.chain, self.chain.tree.dof
        rows = chain.partition.rows
        if chain.ensure_partition(self.history[-1][n:]).rows != rows:   # λ's rows changed
            self.lam = chain.forward_dynamics(self.history[-1][n:], self.history[-1][:n],
                                              self.tau)[1]
        alpha, beta = self._formula()
        Y, lam = self.history[-1].copy(), self.lam.copy()
        r, K = len(lam), None
        for _ in range(NEWTON_ITERATIONS):
            Yp = alpha * Y + beta
            w, q = Y[:n], Y[n:]
            Phi_q = chain.constraint_jacobian(q)
            R = np.concatenate((residual(chain, Y, Yp, lam, self.tau),
                                Phi_q @ Yp[:n] - chain.gamma(q, w)))
            if np.max(np.abs(R)) <= NEWTON_TOLERANCE:
                break
            if K is None:         # once per step, at the first iterate (as DASSL keeps it)
                dG_dY, dG_dYp = system_jacobian(chain, q, w, Yp[:n], lam)
                K = np.zeros((2 * n + r, 2 * n + r))
                K[:2 * n, :2 * n] = alpha * dG_dYp + dG_dY
                K[:n, 2 * n:] = Phi_q.T
                K[2 * n:, :n] = alpha * Phi_q
            delta = np.linalg.solve(K, -R)
            Y, lam = Y + delta[:2 * n], lam + delta[2 * n:]
        q = chain.close(Y[n:])                              # projections
        qd = chain.velocities(q, Y[:n][list(chain.partition.v)])
        self.history = (self.history + [np.concatenate((qd, q))])[-2:]
        self.lam = lam
        return q, qd

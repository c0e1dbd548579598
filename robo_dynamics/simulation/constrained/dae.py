"""The equations of motion as a DAE (eq. 27) and a BDF integrator driven by its system
Jacobian (system_jacobian.py), as Lee, Sohn, Kim and Yoo integrate them with DASSL (§4.2).

Unknowns at each step: Y = [w; q] (velocities, positions) and the multipliers λ. Equations:
G(Y, Y′, λ) = 0 (eq. 27) and the constraint at acceleration level Φ_q ẇ = γ (index 1 in λ).
A backward differentiation formula of variable step and order (bdf.py) replaces Y′ by
α Y + β; Newton's method solves for (Y, λ) with the iteration matrix

    [[α ∂G/∂Y′ + ∂G/∂Y, [Φ_qᵀ; 0]], [[α Φ_q, 0], 0]]

evaluated once per step (the constraint row's dependence on q and w through Φ_q and γ left
out: a simplified Newton iteration, as DASSL keeps an iteration matrix for several
steps). After each step the positions are projected onto Φ = 0 and the velocities onto Φ_q w = 0 (the dependent
coordinates solved, the independent kept: coordinate partitioning), so the loop does not
drift.
"""

import numpy as np

from ...closed_chain.closures import constraint_jacobian
from ...closed_chain.tree_dynamics import tree_kinematics, tree_rnea
from .bdf import MAX_ORDER, REUSE, AdaptiveBDF, Convergence
from .system_jacobian import system_jacobian

NEWTON_TOLERANCE = 1e-10
NEWTON_ITERATIONS = 25
REUSED_ITERATIONS = 6   # with a kept iteration matrix; failing them, a fresh one


def residual(chain, Y, Y_prime, lam, tau=None):
    """G(Y, Y′) (2n,) of eq. 27 (λ for the independent rows of Φ)."""
    n = chain.tree.dof
    w, q = Y[:n], Y[n:]
    w_dot, q_dot = Y_prime[:n], Y_prime[n:]
    applied = chain.applied_forces(q, w, tau)            # motors, joint springs
    kin = tree_kinematics(chain.tree, q)
    Phi_q = constraint_jacobian(chain.tree, chain.closures, kin)[list(chain.partition.rows)]
    top = tree_rnea(chain.tree, q, w, w_dot, kin=kin) + Phi_q.T @ lam - applied
    return np.concatenate((top, w - q_dot))


class BDF:
    """Eq. 27 for a closed chain integrated from t = 0 by BDF (bdf.py): variable step and
    order with the local error within `tolerance`, or `fixed_step` (orders 1, 2, …
    max_order in turn). step() takes one step, advance(t) runs to time t [s]; each returns
    (q, q̇)."""

    def __init__(self, chain, q, qd, tau=None, tolerance=1e-8, fixed_step=None,
                 max_order=MAX_ORDER):
        self.chain, self.tau, self.n = chain, tau, chain.tree.dof
        self.tolerance = tolerance
        self.rows = chain.ensure_partition(q).rows
        qdd, self.lam = chain.forward_dynamics(q, qd, tau)
        self.trial_lam, self.matrix = self.lam, None     # matrix: (K⁻¹, its α)
        self.engine = AdaptiveBDF(np.concatenate((qd, q)), np.concatenate((qdd, qd)), 0.0,
                                  tolerance, self._solve, accept=self._project,
                                  restart=self._new_rows, fixed_step=fixed_step,
                                  max_order=max_order)

    @property
    def t(self):
        return self.engine.t

    def state(self):
        return self.engine.y[self.n:], self.engine.y[:self.n]

    def step(self):
        self.engine.step()
        return self.state()

    def advance(self, t_end):
        self.engine.advance(t_end)
        return self.state()

    def _solve(self, alpha, beta, guess):
        """Newton's method on G(Y, αY + β, λ) = 0 and Φ_q ẇ = γ from `guess`; Y, or None.
        The iteration matrix (the module's docstring) is kept from step to step while α
        stays within REUSE of its own and the iterations converge (as DASSL keeps it); else
        it is evaluated afresh at the first iterate and the iterations start again."""
        for fresh in (False, True):
            if fresh or self.matrix is None or abs(alpha / self.matrix[1] - 1.0) > REUSE:
                self.matrix, fresh = None, True
            Y = self._newton(alpha, beta, guess, REUSED_ITERATIONS if not fresh
                             else NEWTON_ITERATIONS)
            if Y is not None or fresh:
                return Y
        return None

    def _newton(self, alpha, beta, guess, iterations):
        """Y from `guess` once the correction, in the error's weighted norm, is below
        NEWTON_FRACTION of the tolerance (its convergence rate allowed for), or the
        residual below NEWTON_TOLERANCE; None if it diverges or runs out of iterations."""
        chain, n = self.chain, self.n
        Y, lam = guess.copy(), self.lam.copy()
        # (the first correction mostly moves λ, from the last step's: the rate of the
        # corrections of Y is judged from the second on)
        convergence = Convergence(self.tolerance, judge_from=2)
        for _ in range(iterations):
            Yp = alpha * Y + beta
            w, q = Y[:n], Y[n:]
            Phi_q = chain.constraint_jacobian(q)
            R = np.concatenate((residual(chain, Y, Yp, lam, self.tau),
                                Phi_q @ Yp[:n] - chain.gamma(q, w)))
            if np.max(np.abs(R)) <= NEWTON_TOLERANCE:
                self.trial_lam = lam
                return Y
            if self.matrix is None:
                r = len(lam)
                dG_dY, dG_dYp = system_jacobian(chain, q, w, Yp[:n], lam)
                K = np.zeros((2 * n + r, 2 * n + r))
                K[:2 * n, :2 * n] = alpha * dG_dYp + dG_dY
                K[:n, 2 * n:] = Phi_q.T
                K[2 * n:, :n] = alpha * Phi_q
                self.matrix = (np.linalg.inv(K), alpha)
            # a matrix kept from another α: the correction scaled as DASSL scales it
            delta = (2.0 / (1.0 + alpha / self.matrix[1])) * (self.matrix[0] @ -R)
            if not np.all(np.isfinite(delta)):
                return None
            Y, lam = Y + delta[:2 * n], lam + delta[2 * n:]
            done = convergence.check(delta[:2 * n], Y)
            if done is None:
                return None
            if done:
                self.trial_lam = lam
                return Y
        return None

    def _project(self, Y):
        """Positions onto Φ = 0, velocities onto Φ_q w = 0 (the independent kept)."""
        n, chain = self.n, self.chain
        q = chain.close(Y[n:])
        qd = chain.velocities(q, Y[:n][list(chain.partition.v)])
        self.lam = self.trial_lam
        return np.concatenate((qd, q))

    def _new_rows(self):
        """λ for the constraint rows of a partition chosen again (Y keeps its meaning)."""
        q, qd = self.state()
        if self.chain.ensure_partition(q).rows != self.rows:
            self.rows = self.chain.partition.rows
            self.lam = self.chain.forward_dynamics(q, qd, self.tau)[1]
            self.matrix = None
        return None

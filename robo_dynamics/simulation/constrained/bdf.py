"""Backward differentiation formulas of variable step and order: how DASSL integrates
eq. 27 (Lee, Sohn, Kim and Yoo, §4.2; Brenan, Campbell and Petzold, "Numerical Solution of
Initial-Value Problems in Differential-Algebraic Equations", ch. 3).

At each step the new value Y₀ at t₀ is found with Y′(t₀) replaced by the derivative of the
polynomial through (t₀, Y₀) and the last k values, Y′ ≈ α Y₀ + β (the coefficients follow
from the times, so any spacing will do: a variable-coefficient BDF of order k). The
polynomial through the last k + 1 values predicts Y₀; the corrector's distance from the
prediction estimates the local error,

    e_k ≈ (Y₀ − P_k) / (α_k (t₀ − t_{k+1})),    α_k = Σ_{m=1..k} 1/(t₀ − t_m)

(for k = 1 and a constant step: (Y₀ − P)/2, backward Euler's h²Y″/2). The error, in a
weighted norm (tolerance × (1 + |Y|) per component), accepts or rejects the step and
chooses the next step and order (among k − 1, k, k + 1: the smallest estimate).
"""

import numpy as np

MAX_ORDER = 5        # DASSL's highest order; variable-step BDF of order 5 stays zero-stable
MAX_GROWTH = 1.1     # for steps that grow by small ratios: at most this one per step
SHRINK_LIMIT = 0.2   # a rejected step shrinks by at most this factor
SAFETY = 0.8
MAX_REJECTIONS = 30  # in a row: the equations cannot be followed at this tolerance
# the correctors' simplified Newton iterations (dae.py, integrators.py)
REUSE = 0.25            # an iteration matrix is kept while α stays within this of its own
NEWTON_FRACTION = 1e-3  # of the tolerance: a correction this small ends the iterations
#                        (looser, the corrector's own error spoils the error estimate: at
#                        0.33 the four-bar's fall came out 10× less accurate, with rejections)


def weighted_rms(e, y, tolerance):
    """RMS of e in units of tolerance × (1 + |y|): the norm errors and corrections are
    measured in (≤ 1: within the tolerance)."""
    return float(np.sqrt(np.mean((e / (tolerance * (1.0 + np.abs(y)))) ** 2)))


class Convergence:
    """When the correctors' simplified Newton iterations stop: the correction δ, in the
    error's norm, times ρ/(1 − ρ) (ρ: its rate, judged from the `judge_from`-th correction
    on) below NEWTON_FRACTION; a rate of 0.9 or more is divergence."""

    def __init__(self, tolerance, judge_from=1):
        self.tolerance, self.judge_from = tolerance, judge_from
        self.previous, self.count = None, 0

    def check(self, delta, y):
        """True: converged at y; False: iterate again; None: diverging."""
        size = weighted_rms(delta, y, self.tolerance)
        rate = (size / self.previous if self.previous and self.count >= self.judge_from
                else 0.0)
        self.previous, self.count = size, self.count + 1
        if rate >= 0.9:
            return None
        return size * (rate / (1.0 - rate) if rate else 1.0) <= NEWTON_FRACTION


def derivative_weights(times):
    """c (k+1,): the derivative at times[0] of the polynomial through (times[j], Y_j) is
    Σ_j c_j Y_j (Lagrange basis differentiated)."""
    t = np.asarray(times, dtype=float)
    c = np.empty(len(t))
    c[0] = np.sum(1.0 / (t[0] - t[1:]))
    for j in range(1, len(t)):
        others = [m for m in range(1, len(t)) if m != j]
        c[j] = np.prod((t[0] - t[others]) / (t[j] - t[others])) / (t[j] - t[0])
    return c


def extrapolation_weights(times, t0):
    """w (len(times),): the polynomial through (times[j], Y_j) at t0 is Σ_j w_j Y_j."""
    t = np.asarray(times, dtype=float)
    return np.array([np.prod([(t0 - t[m]) / (t[j] - t[m]) for m in range(len(t)) if m != j])
                     for j in range(len(t))])


class AdaptiveBDF:
    """Y(t) by BDF of variable step and order.

    solve(alpha, beta, guess): the new Y with Y′ = alpha Y + beta in the equations (Newton's
    method from guess), or None if it does not converge. accept(Y): the value kept (e.g.
    projected onto the constraints); restart(): None, or Y in new coordinates when they
    changed meaning (the history is then dropped), derivative(Y) giving Y′ to start from.
    fixed_step: no error control, that step throughout (orders 1 … max_order in turn).
    """

    def __init__(self, y0, yp0, t0, tolerance, solve, accept=None, derivative=None,
                 restart=None, first_step=1e-5, fixed_step=None, max_order=MAX_ORDER):
        self.solve, self.tolerance = solve, tolerance
        self.accept = accept or (lambda y: y)
        self.derivative, self.restart = derivative, restart or (lambda: None)
        self.times, self.values = [float(t0)], [np.asarray(y0, dtype=float)]
        self.start_rate = np.asarray(yp0, dtype=float)      # Y′ at the only point
        self.h = float(fixed_step or first_step)
        self.fixed, self.max_order = fixed_step is not None, max_order
        self.order, self.at_order = 1, 0
        self.steps = self.rejected = 0

    @property
    def t(self):
        return self.times[0]

    @property
    def y(self):
        return self.values[0]

    def advance(self, t_end):
        """Steps until t_end (the last one shortened to land on it); Y(t_end)."""
        while self.t < t_end - 1e-12:
            left = t_end - self.t               # steps spread evenly over what is left
            self.h = left / np.ceil(left / self.h - 1e-9)
            self.step()
        return self.y

    def step(self):
        """One accepted step (rejected tries repeated with a smaller step)."""
        for _ in range(MAX_REJECTIONS):
            t0, k = self.t + self.h, self.order
            past_t, past_y = self.times[:k], self.values[:k]
            c = derivative_weights([t0] + past_t)
            beta = sum(cj * y for cj, y in zip(c[1:], past_y))
            predicted = self._predict(t0, k)
            y = self.solve(c[0], beta, predicted)
            if y is None:                                     # Newton's method failed
                self._shrink(0.25)
                continue
            error = self._estimate(y, t0, k, predicted)
            if self.fixed or error <= 1.0:
                self._accept(t0, y, error)
                return
            self._shrink(max(SHRINK_LIMIT, SAFETY * error ** (-1.0 / (k + 1))))
        raise RuntimeError(f"BDF: {MAX_REJECTIONS} rejected steps in a row at t = "
                           f"{self.t:.6g} s (step {self.h:.3g} s)")

    def _predict(self, t0, k):
        """P_k(t0): the polynomial through the last k + 1 values (the start's derivative
        standing in for the missing point at first)."""
        if len(self.times) == 1:
            return self.y + (t0 - self.t) * self.start_rate
        n = min(k + 1, len(self.times))
        w = extrapolation_weights(self.times[:n], t0)
        return sum(wj * y for wj, y in zip(w, self.values[:n]))

    def _estimate(self, y, t0, k, predicted=None):
        """e_k (weighted norm) of the formula of order k at t0 with corrector value y, or inf
        without the k + 1 past values it needs; predicted: P_k(t0) if known."""
        if predicted is None:
            predicted = self._predict(t0, k)
        if len(self.times) == 1:
            return weighted_rms(y - predicted, y, self.tolerance)
        if len(self.times) < k + 1:
            return np.inf
        alpha = np.sum(1.0 / (t0 - np.asarray(self.times[:k])))
        return weighted_rms((y - predicted) / (alpha * (t0 - self.times[k])), y,
                            self.tolerance)

    def _accept(self, t0, y, error):
        k = self.order
        candidates = {k: error}
        if k > 1:
            candidates[k - 1] = self._estimate(y, t0, k - 1)
        if k < self.max_order and self.at_order >= k + 1:
            candidates[k + 1] = self._estimate(y, t0, k + 1)
        y = self.accept(y)
        self.times = ([t0] + self.times)[:self.max_order + 2]
        self.values = ([y] + self.values)[:self.max_order + 2]
        self.steps += 1
        fresh = self.restart()
        if fresh is not None:                 # new coordinates: from order 1 again
            self.times, self.values = [t0], [fresh]
            self.start_rate = self.derivative(fresh)
            self.order, self.at_order = 1, 0
            return
        if self.fixed:
            new = min(k + 1, self.max_order)
            self.at_order = self.at_order + 1 if new == k else 0
            self.order = new
            return
        new = min(candidates, key=candidates.get)
        self.at_order = self.at_order + 1 if new == k else 0
        self.order = new
        factor = SAFETY * max(candidates[new], 1e-10) ** (-1.0 / (new + 1))
        if factor >= MAX_GROWTH:              # grow in whole ratios, else keep the step:
            self.h *= MAX_GROWTH              # the formula's coefficients (and an iteration
        elif factor < 1.0:                    # matrix built on them) then stay the same
            self.h *= max(SHRINK_LIMIT, factor)

    def _shrink(self, factor):
        if self.fixed:
            raise RuntimeError(f"BDF: Newton's method failed at t = {self.t:.6g} s with the "
                               f"fixed step {self.h:.3g} s")
        self.h *= factor
        self.rejected += 1
        if self.order > 1 and self.rejected % 3 == 0:      # repeated trouble: a lower order
            self.order, self.at_order = self.order - 1, 0

"""One time step of the arm's dynamics, x = (q, q̇), with the torque held over the step.

- semi_implicit_euler: q̇⁺ = q̇ + h a(q, q̇);  q⁺ = q + h q̇⁺ (symplectic, order 1).
- rk4: the classical fourth-order Runge–Kutta scheme.
- implicit_euler: q̇⁺ = q̇ + h a(q + h q̇⁺, q̇⁺), q⁺ = q + h q̇⁺ (order 1, A-stable), solved
  for q̇⁺ by Newton's method with the analytical system Jacobian (Lee, Sohn, Kim & Yoo,
  "Construction of System Jacobian in the Equations of Motion Using Velocity
  Transformation Technique", KSME, 2001: the implicit integrator needs ∂/∂q and ∂/∂q̇
  of the equations of motion):
      r(q̇⁺) = q̇⁺ − q̇ − h a(q + h q̇⁺, q̇⁺),   ∂r/∂q̇⁺ = I − h (h ∂a/∂q + ∂a/∂q̇).
"""

import numpy as np

NEWTON_TOLERANCE = 1e-12
NEWTON_ITERATIONS = 20


def semi_implicit_euler(dynamics, q, v, tau, h):
    v_next = v + h * dynamics.acceleration(q, v, tau)
    return q + h * v_next, v_next


def rk4(dynamics, q, v, tau, h):
    a1 = dynamics.acceleration(q, v, tau)
    q2, v2 = q + 0.5 * h * v, v + 0.5 * h * a1
    a2 = dynamics.acceleration(q2, v2, tau)
    q3, v3 = q + 0.5 * h * v2, v + 0.5 * h * a2
    a3 = dynamics.acceleration(q3, v3, tau)
    q4, v4 = q + h * v3, v + h * a3
    a4 = dynamics.acceleration(q4, v4, tau)
    return (q + h / 6.0 * (v + 2 * v2 + 2 * v3 + v4),
            v + h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4))


def implicit_euler(dynamics, q, v, tau, h):
    """Backward Euler with Newton iterations; raises RuntimeError if Newton fails."""
    n = len(q)
    v_next = v + h * dynamics.acceleration(q, v, tau)    # explicit predictor
    for _ in range(NEWTON_ITERATIONS):
        q_next = q + h * v_next
        residual = v_next - v - h * dynamics.acceleration(q_next, v_next, tau)
        da_dq, da_dv = dynamics.jacobians(q_next, v_next, tau)
        step = np.linalg.solve(np.eye(n) - h * (h * da_dq + da_dv), residual)
        v_next = v_next - step
        if np.max(np.abs(step)) <= NEWTON_TOLERANCE * (1.0 + np.max(np.abs(v_next))):
            return q + h * v_next, v_next
    raise RuntimeError(f"implicit Euler: Newton did not converge in {NEWTON_ITERATIONS} "
                       f"iterations (h = {h} s)")


INTEGRATORS = {"semi_implicit_euler": semi_implicit_euler, "rk4": rk4,
               "implicit_euler": implicit_euler}

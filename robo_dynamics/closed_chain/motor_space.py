"""A closed mechanism seen from its motors: what a controller of the motor joints needs at
each joint state, the loops closed for it.

Lee, Sohn, Kim and Yoo, "Construction of System Jacobian in the Equations of Motion Using
Velocity Transformation Technique", §4.1, eq. 9–12, with the motors θ (k,) as the independent
coordinates: the loops closed at θ give the tree's pose q(θ) (mechanism.py), q̇ = B θ̇ and
q̈ = B θ̈ + c, and the motor torques of a motion of the closed mechanism are

    τ = Bᵀ (M q̈ + h) = M̂ θ̈ + b̂,   M̂ = Bᵀ M B,   b̂ = Bᵀ (M c + h),   ĝ = Bᵀ g

(M, h = C q̇ + g the tree's; the constraint forces do no work along the closed motion,
Bᵀ Φ_qᵀ = 0). A point of a link moves with J B θ̇ (J its Jacobian in the tree).

Every closed pose is on the reference pose's assembly branch (closed_chain/branch.py), or
the state is refused: a stream's next state is closed from the last one (Newton's method from
the last pose moved to first order, a small step), the sign of det Φ_u checked; a first
state, or one far from the last, by continuation from the reference pose. No answer depends
on the states asked for before it.
"""

import math

import numpy as np

from ..errors import ArgumentError, UnclosedState
from .mechanism import CORRECTION, NEWTON_TOLERANCE
from .mimics import motor_names
from .motor_closure import SINGULAR, motor_closure

CONTINUITY = 1e-8       # det² / Hadamard's bound of Φ_u below this: a stream's next state
                        # is checked on the branch in full (near a pose where it may change)
PREDICTED_STEP = 0.05   # rad or m: the largest motor step closed from a first-order guess
                        # (a joint-state stream moves the motors far less per state)
COMPILED_ITERATIONS = 3  # Newton iterations of the compiled closure from that guess (one or
                         # two close a stream's state); more: ClosedChain.newton


class MotorSpace:
    """The dynamics of a ClosedChain whose motors are its independent coordinates, in the
    motors' coordinates θ [rad or m], ordered as chain.actuated_joints. For one thread at a
    time (it keeps the last closed pose)."""

    def __init__(self, chain):
        if not chain.fully_actuated:
            raise ArgumentError(f"the motors {list(chain.actuated_joints)} must be the "
                                f"mechanism's independent coordinates: one per degree of "
                                f"freedom ({chain.dof}), each free to move")
        self.chain, self.tree = chain, chain.tree
        # coupled motors (mimics.py): the actuated joints θ = G θ_r + offset of fewer motors
        coupling = chain.coupling
        self.joint_names = motor_names(chain)
        self._k = len(chain.actuated)               # the chain's actuated joints
        self.dof = len(self.joint_names)            # the motors
        self._G = None if coupling is None else coupling.G
        self._offset = None if coupling is None else coupling.offset
        v = list(chain.partition.v)
        self._columns = [v.index(i) for i in chain.actuated]   # motor k is v's _columns[k]
        self._motors = np.array(chain.actuated, dtype=np.intp)
        # the partition's Φ rows and dependent coordinates (fixed: the motors are v)
        self._u = np.array(chain.partition.u, dtype=np.intp)
        self._det_sign = None      # det Φ_u's sign at the last closed pose (base axes)
        self._motor_terms = chain.compiled.motor_terms(chain.partition.rows, chain.partition.u)
        # a stream's next state, closed in compiled code (None: a mechanism it is not for)
        self._compiled_closure = motor_closure(chain.compiled, chain.partition.rows,
                                               chain.partition.u, chain.actuated,
                                               at=chain.reference)
        self._B_motors = np.zeros((chain.tree.dof, self._k))      # B's motor rows: I
        self._B_motors[self._motors, np.arange(self._k)] = 1.0
        self.passive_joints = tuple(name for name in self.tree.joint_names
                                    if name not in self.joint_names)
        self._last = np.array(chain.reference, dtype=float)
        self._closed_key, self._state_key, self._failed_at = None, None, None
        self._momentum = None   # (p = M q̇, y: Ĉᵀθ̇ = Bᵀ y) at the state (state())

    # -- the closed state ----------------------------------------------------------------
    def pose(self, theta):
        """q (n,): every joint of the tree, the loops closed with the motors at θ (closed)."""
        return self.closed(theta)[0]

    def closed(self, theta):
        """(q (n,), B (n, k)) at motor positions θ: the closed pose and q̇ = B θ̇, B's
        columns in motor order; kept until θ changes. UnclosedState where the loops cannot
        close (outside the mechanism's workspace, or singular); the last pose is kept."""
        if self._closed_key is not None and self._same(theta, self._closed_key):
            return self._closed
        theta = self._motor_vector("theta", theta)
        key = theta.tobytes()
        if self._G is not None:                      # the actuated joints the motors move
            theta = self._G @ theta + self._offset
        if key != self._closed_key:
            guess = self._first_order_guess(theta)
            closed = None if guess is None else self._close_compiled(guess)
            if closed is None:
                q = self._close(theta, guess)
                inverse = (self.chain.dependent_inverse(q).ravel().tolist() if len(self._u)
                           else [])
                closed = (q, self.chain.velocity_transformation(q, self._motors), inverse)
                self._det_sign = self._sign_of_det(q)   # the compiled path keeps its sign
            q, B, self._inverse = closed
            self._last, self._closed_key, self._closed_theta = q, key, theta
            self._closed_actuated = (q, B)
            self._closed = (q, B) if self._G is None else (q, B @ self._G)
            self._failed_at = None
        return self._closed

    def _first_order_guess(self, theta):
        """The last closed pose moved to first order, q + B Δθ, for a step Δθ of at most
        PREDICTED_STEP (the next state of a stream); None for none closed yet or a longer
        step."""
        if self._closed_key is None:
            return None
        step = theta - self._closed_theta
        if np.abs(step).max() > PREDICTED_STEP:
            return None
        last_q, last_B = self._closed_actuated
        guess = last_q + last_B @ step
        guess[self._motors] = theta
        return guess

    def _close_compiled(self, guess):
        """(q, B, Φ_u⁻¹ row by row) closed from `guess` by the compiled closure
        (motor_closure.py) in at most COMPILED_ITERATIONS of Newton's method, or None: no
        compiled closure, no convergence, Φ_u near singular, a dependent joint moved by
        half a turn or more (ClosedChain.newton then chooses its turn), or a pose off the
        last closed pose's branch: det Φ_u (as compiled) of the last pose's sign and
        away from singular (CONTINUITY), and each block's sign where there are several; the
        others are checked in full (ClosedChain.on_branch)."""
        if self._compiled_closure is None:
            return None
        q, moved = guess.tolist(), 0.0
        for _ in range(COMPILED_ITERATIONS):
            result = self._compiled_closure(q)
            if result is None:
                return None
            Phi, step, inverse, B_u, det, h = result
            if not det * det > SINGULAR * h:           # also NaN
                return None
            if max(map(abs, Phi)) <= NEWTON_TOLERANCE:
                if moved >= math.pi or not det * self._det_sign > 0.0 or \
                        det * det < CONTINUITY * h:
                    return None
                if len(self.chain.branch) > 1 and not self.chain.on_branch(np.array(q)):
                    return None
                B = self._B_motors.copy()
                B[self._u] = np.reshape(B_u, (len(self._u), self._k))
                return np.array(q), B, inverse
            for i, delta in zip(self._u.tolist(), step):
                q[i] -= delta
            moved += max(map(abs, step))
        return None

    def _close(self, theta, guess):
        """q closed at θ on the reference's assembly branch. Newton's method from the
        first-order guess (None: no step to one), kept on the branch and near the guess
        (mechanism.CORRECTION); else continuation from the reference pose
        (ClosedChain.close), then from the last pose. While states fail, continuation is
        tried again only PREDICTED_STEP away from where it last failed: a stream of states
        outside the workspace costs Newton's method each, not continuation."""
        chain = self.chain
        if guess is not None:
            q = chain.newton(guess)
            step = np.abs(theta - self._closed_theta).max()
            if q is not None and chain.on_branch(q) and \
                    np.abs(q - guess).max() <= CORRECTION * step:
                return q
        failed = self._failed_at
        if failed is not None and np.max(np.abs(theta - failed)) <= PREDICTED_STEP:
            raise UnclosedState(
                f"the loops do not close on the assembly branch with "
                f"{list(self.joint_names)} at {np.round(theta, 6).tolist()} (nor at "
                f"{np.round(failed, 6).tolist()}): outside the mechanism's workspace, at a "
                "singular pose or past one where branches meet")
        target = self._last.copy()
        target[self._motors] = theta
        try:
            return chain.close(target, start=chain.reference)
        except UnclosedState:
            self._failed_at = theta
            if np.array_equal(self._last, chain.reference) or not chain.on_branch(self._last):
                raise
        v = np.empty(self._k)
        v[self._columns] = theta                      # the independent coordinates, sorted
        return chain.close_from(self._last, v)

    def _sign_of_det(self, q):
        """The sign of det Φ_u at q, the partition's rows (as compiled)."""
        if not len(self._u):
            return 1.0
        return float(np.sign(np.linalg.det(self.chain.constraint_jacobian(q)[:, self._u])))

    def state(self, theta, theta_dot):
        """(q (n,), q̇ (n,), B (n, k), c (n,)) of the closed mechanism at motor positions θ
        and rates θ̇: q̇ = B θ̇, q̈ = B θ̈ + c (c_u = Φ_u⁻¹ γ, γ = −W q̇ with W = ∂(Φ_q q̇)/∂q
        from the compiled code, which gives the tree's momentum terms too)."""
        q, B = self.closed(theta)
        if self._state_key is not None and self._state_key[0] == self._closed_key and \
                self._same(theta_dot, self._state_key[1]):
            return self._state
        theta_dot = self._motor_vector("theta_dot", theta_dot)
        key = (self._closed_key, theta_dot.tobytes())
        if key != self._state_key:
            qd, c = B @ theta_dot, np.zeros_like(q)
            c[self._u], p, y = self._motor_terms(q, qd, self._inverse)
            self._state_key, self._state = key, (q, qd, B, c)
            self._momentum = (p, y)
        return self._state

    # -- the motors' equations of motion -------------------------------------------------
    def gravity(self, theta):
        """ĝ (k,) [N·m or N]: the motor torques that hold the mechanism still at θ (its
        joint springs' included)."""
        q, B = self.closed(theta)
        return B.T @ self._less_springs(self.chain.compiled.gravity(q), q)

    def mass_matrix(self, theta):
        """M̂ (k, k) = Bᵀ M B: the mechanism's inertia seen by the motors."""
        q, B = self.closed(theta)
        return B.T @ self.chain.compiled.mass_matrix(q) @ B

    def bias(self, theta, theta_dot):
        """b̂ (k,) = Bᵀ (M c + h): the motor torques at θ̈ = 0 (Coriolis, centrifugal,
        gravity, joint springs and dampers, through the loops)."""
        q, qd, B, c = self.state(theta, theta_dot)
        return B.T @ self._less_springs(self.chain.compiled.rnea(q, qd, c), q, qd)

    def torques(self, theta, theta_dot, theta_ddot):
        """τ (k,) = M̂ θ̈ + b̂ = Bᵀ (M q̈ + h): the motor torques of the motion (θ, θ̇, θ̈), the
        multipliers not solved for."""
        q, qd, B, c = self.state(theta, theta_dot)
        qdd = B @ self._motor_vector("theta_ddot", theta_ddot) + c
        return B.T @ self._less_springs(self.chain.compiled.rnea(q, qd, qdd), q, qd)

    def _less_springs(self, generalized, q, qd=None):
        """generalized − τ_s(q, q̇) (n,): what the motors supply where joint springs and
        dampers act too (closed_chain/springs.py)."""
        springs = self.chain.springs
        return generalized if springs is None else generalized - springs.torque(q, qd)

    def momentum_terms(self, theta, theta_dot):
        """(p̂ = M̂ θ̇, Ĉᵀθ̇) (k,) each: the motors' generalized momentum and the term the
        momentum observer adds, Ĉᵀθ̇ = ∂T̂/∂θ at fixed θ̇ (T̂ = ½ θ̇ᵀ M̂ θ̇; Spong, Hutchinson
        and Vidyasagar, Robot Modeling and Control, §6.5: Ṁ̂ − 2Ĉ skew). With q̇ = B(θ) θ̇,
        ∂T̂/∂θ_j = (Bᵀ ∂T/∂q)_j + pᵀ ∂q̇/∂θ_j, p = M q̇. Only q̇_u varies with θ at fixed θ̇;
        differentiating Φ_q q̇ = 0 along the closed motion (∂q/∂θ_j = B_j) gives
        Φ_u ∂q̇_u/∂θ_j = −W B_j (W = ∂(Φ_q q̇)/∂q), so pᵀ ∂q̇/∂θ_j = −μᵀ W B_j with
        Φ_uᵀ μ = p_u: Ĉᵀθ̇ = Bᵀ (∂T/∂q − Wᵀ μ). Joint dampers' torque −D q̇ joins the
        second term (the observer's β = ĝ − Ĉᵀθ̇ then holds it; ĝ holds the springs')."""
        q, qd, B, _ = self.state(theta, theta_dot)
        p, y = self._momentum
        springs = self.chain.springs
        if springs is not None:
            y = y - springs.damping * qd
        return B.T @ p, B.T @ y

    def inverse_dynamics(self, theta, theta_dot, theta_ddot, wrench=None, link=None,
                         point=(0.0, 0.0, 0.0)):
        """(τ (k,) of the motors, λ (r,) the loops' multipliers: ClosedChain.inverse_dynamics)
        for the motors' motion (θ, θ̇, θ̈); wrench (6,) [force; moment] in base axes: what
        `point` [m] of `link` (its frame) exerts on the surroundings besides."""
        q, qd, B, c = self.state(theta, theta_dot)
        qdd = B @ self._motor_vector("theta_ddot", theta_ddot) + c
        load = None
        if wrench is not None:
            J = self.chain.compiled.frame(link, point)(q)[2]
            load = J.T @ np.asarray(wrench, dtype=float)
        tau, lam = self.chain.inverse_dynamics(q, qd, qdd, load)
        return (tau, lam) if self._G is None else (self._G.T @ tau, lam)    # virtual work

    def closure_wrenches(self, theta, lam):
        """closures.ClosureWrench of each loop closure at θ from λ (inverse_dynamics)."""
        return self.chain.closure_wrenches(self.closed(theta)[0], lam)

    def forward_dynamics(self, theta, theta_dot, tau):
        """θ̈ (k,) = M̂⁻¹ (τ − b̂) under the motor torques τ (k,)."""
        tau = self._motor_vector("tau", tau)
        return np.linalg.solve(self.mass_matrix(theta), tau - self.bias(theta, theta_dot))

    def jacobian(self, theta, link, point=(0.0, 0.0, 0.0)):
        """(6, k) [linear; angular] in base axes: the velocity of `point` [m] of `link`
        (its frame) per motor rate, J B."""
        q, B = self.closed(theta)
        return self.chain.compiled.frame(link, point)(q)[2] @ B

    def operational_space_inertia(self, theta, link, point=(0.0, 0.0, 0.0)):
        """The OperationalSpace (algorithms/operational_space.py) of `point` of `link`
        through the loops: ClosedChain.operational_space_inertia at the closed pose."""
        return self.chain.operational_space_inertia(self.closed(theta)[0], link, point)

    def passive_disagreement(self, theta, positions):
        """(largest |measured − closed| [rad or m], its joint) over `positions` ({passive
        joint name: measured position}) against the loops closed at θ; (0.0, None) for
        none. ArgumentError for a name that is not a passive joint."""
        unknown = [name for name in positions if name not in self.passive_joints]
        if unknown:
            raise ArgumentError(f"{unknown} are not passive joints of the mechanism "
                                f"{list(self.passive_joints)}")
        q = self.closed(theta)[0]
        worst, joint = 0.0, None
        for name, value in positions.items():
            gap = abs(float(value) - q[self.tree.joint_index(name)])
            if not np.isfinite(gap):
                return np.inf, name
            if gap > worst:
                worst, joint = gap, name
        return worst, joint

    def _same(self, value, key):
        """Whether `value` is (k,) floats whose bytes are `key` (one kept after its checks):
        a state asked for again costs no copy and no check."""
        return (isinstance(value, np.ndarray) and value.dtype == np.float64
                and value.shape == (self.dof,) and value.tobytes() == key)

    def _motor_vector(self, name, value):
        """`value` as a copy of its own (a caller may reuse its array for the next state),
        or ArgumentError."""
        value = np.array(value, dtype=float)
        if value.shape != (self.dof,) or not np.isfinite(value).all():
            raise ArgumentError(f"{name} must be {self.dof} finite values (the motors "
                                f"{list(self.joint_names)}), got {np.shape(value)}")
        return value

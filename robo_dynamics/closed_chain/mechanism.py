"""A closed mechanism: a kinematic tree, its loop closures and which joints have motors.

Equations of motion in the tree's coordinates q with Lagrange multipliers λ (Lee, Sohn, Kim
and Yoo, "Construction of System Jacobian in the Equations of Motion Using Velocity
Transformation Technique", eq. 24 and 27):

    M(q) q̈ + h(q, q̇) + Φ_qᵀ λ = Sᵀ τ,     Φ(q) = 0,   Φ_q q̇ = 0,   Φ_q q̈ = γ

h = C q̇ + g (the tree's bias), S selects the actuated joints (τ: their torques), Φ_qᵀλ the
generalized constraint forces. Partitioned into dependent u and independent v (§4.1,
partition.py), the constraint's velocity and acceleration equations give (eq. 9)

    u̇ = −Φ_u⁻¹ Φ_v v̇,    ü = Φ_u⁻¹ (γ − Φ_v v̈)

so q̇ = B v̇ and q̈ = B v̈ + c, with B the velocity transformation (I on v's rows,
−Φ_u⁻¹Φ_v on u's) and c = Φ_u⁻¹γ on u's rows; λ = −Φ_u⁻ᵀ (M q̈ + h)_u when the motors are
the independent coordinates (eq. 10, its Q^u = −h_u).
"""


import numpy as np

from ..algorithms.operational_space import operational_space
from ..algorithms.small_linalg import inv
from ..errors import ArgumentError, UnclosedState, URDFError
from . import branch
from .closures import (closure_wrenches, constraint, constraint_jacobian, gamma,
                       in_ancestor_axes)
from .compiled import CompiledClosedChain
from .partition import partition
from .tree_dynamics import tree_kinematics

CLOSURE_TOLERANCE = 1e-6      # m (rad): how far apart closure frames may be where given
NEWTON_TOLERANCE = 1e-12      # m (rad): |Φ| after position closure
NEWTON_ITERATIONS = 30
REDUNDANT = 1e-10             # Φ_q's singular values below this (relative): redundant rows
NEWTON_STALLED = 4            # iterations without a smaller |Φ|: Newton's method gives up
CONTINUATION_STEP = 0.1       # rad or m: a continuation's steps, at most
CORRECTION = 0.5              # Newton's correction of a first-order prediction, at most, per
                              # unit step (a smooth path's is second order in the step)
SMALLEST_STEP = 1e-4          # rad or m: a continuation halves its step down to this
CONDITION_LIMIT = 1e6         # a partition whose Φ_u is worse conditioned is chosen again


class ClosedChain:
    """A KinematicTree with Closures and the names of its actuated joints.

    reference: a pose q (n,) where every closure meets (default: q = 0, as the model is
    drawn). Raises URDFError naming the closure, link or joint: a closure naming an unknown
    link, closure frames that do not meet at the reference pose, a motor that is not a
    joint, more motors than degrees of freedom, motors the loop does not let move.
    """

    branch = None     # the reference's assembly branch (branch.py), for motor-driven ones
    coupling = None   # coupled motors driving the actuated joints (mimics.Coupling)

    def __init__(self, tree, closures, actuated_joints=(), reference=None, springs=None):
        self.tree, self.closures = tree, tuple(closures)
        self.springs = springs if springs is not None and springs.any else None
        self._last, self._compiled = {}, None      # see _at, compiled
        n = tree.dof
        for c in self.closures:
            for link in (c.link_a, c.link_b):
                if link not in tree.link_frames:
                    raise URDFError(f"loop closure '{c.name}': link '{link}' is not a link of "
                                    f"the mechanism {sorted(tree.link_frames)}")
        self.reference = np.zeros(n) if reference is None else np.asarray(reference, float)
        kin = tree_kinematics(tree, self.reference)
        Phi = constraint(tree, self.closures, kin)
        offset = 0
        for c in self.closures:
            gap = float(np.linalg.norm(Phi[offset:offset + c.rows]))
            if gap > CLOSURE_TOLERANCE:
                raise URDFError(f"loop closure '{c.name}': its frames on '{c.link_a}' and "
                                f"'{c.link_b}' are {gap:.3g} apart at the reference pose "
                                f"(tolerance {CLOSURE_TOLERANCE:g} m or rad)")
            offset += c.rows
        unknown = [name for name in actuated_joints if name not in tree.joint_names]
        if unknown:
            raise URDFError(f"actuated_joints: {unknown} are not movable joints of the "
                            f"mechanism {list(tree.joint_names)}")
        self.actuated = tuple(tree.joint_index(name) for name in actuated_joints)
        self.actuated_joints = tuple(actuated_joints)
        Phi_q = in_ancestor_axes(tree, self.closures, kin,
                                 constraint_jacobian(tree, self.closures, kin))
        free = partition(Phi_q)
        self.dof = n - len(free.rows)
        if len(self.actuated) > self.dof:
            raise URDFError(f"actuated_joints: {len(self.actuated)} motors but the loops "
                            f"leave {self.dof} degrees of freedom")
        if len(self.actuated) == self.dof and self.dof > 0:
            try:
                self.partition = partition(Phi_q, self.actuated)
            except ValueError as exc:
                raise URDFError(f"actuated_joints {list(actuated_joints)}: {exc}") from None
        else:
            self.partition = free
        if self.fully_actuated:
            self._branch = branch.Branch(tree, self.closures, self.partition.u, Phi_q)
            self.branch = self._branch.reference

    @property
    def partition(self):
        """The Partition (partition.py) of the coordinates into dependent u and independent v
        and of Φ's rows; setting it drops what was kept for the one before."""
        return self._partition

    @partition.setter
    def partition(self, value):
        self._partition = value
        self._u, self._v, self._rows = (np.array(x, dtype=np.intp)
                                        for x in (value.u, value.v, value.rows))
        self._last.pop("Phi_u_inv", None)

    @property
    def fully_actuated(self):
        """True when the motors are the mechanism's independent coordinates."""
        return len(self.actuated) == self.dof and self.partition.v == tuple(sorted(self.actuated))

    # -- the constraint ------------------------------------------------------------------
    @property
    def compiled(self):
        """The mechanism's CompiledClosedChain (compiled.py), built at its first use."""
        if self._compiled is None:
            self._compiled = CompiledClosedChain(self.tree, self.closures)
        return self._compiled

    def _at(self, q):
        """What is known at q, kept until q changes (an integrator's step and the node's
        callback ask several times at one q): Φ and Φ_q (all rows) from the compiled code,
        the tree's kinematics once asked for. Read-only; one caller at a time."""
        key = np.asarray(q, dtype=float).tobytes()
        if self._last.get("key") != key:
            q = np.array(q, dtype=float)
            Phi, Phi_q = self.compiled.closure(q)
            self._last = {"key": key, "q": q, "Phi": Phi, "Phi_q": Phi_q}
        return self._last

    def kinematics(self, q):
        """The tree's kinematics (tree_dynamics.tree_kinematics) at q, kept as _at."""
        last = self._at(q)
        if "kin" not in last:
            last["kin"] = tree_kinematics(self.tree, last["q"])
        return last["kin"]

    def _all_rows_jacobian(self, q):
        """Φ_q (m, n) at q, every row (the partition's rows are chosen from it)."""
        return self._at(q)["Phi_q"]

    def dependent_inverse(self, q):
        """Φ_u⁻¹ (r, r) at q, the partition's rows and dependent columns (kept as _at);
        LinAlgError where Φ_u is singular."""
        last = self._at(q)
        if "Phi_u_inv" not in last:
            inverse = inv(last["Phi_q"][self._rows[:, None], self._u])
            if not np.isfinite(inverse).all():
                raise np.linalg.LinAlgError("the dependent coordinates' Φ_u is singular")
            last["Phi_u_inv"] = inverse
        return last["Phi_u_inv"]

    def constraint(self, q):
        """Φ(q), its independent rows."""
        return self._at(q)["Phi"][self._rows]

    def constraint_jacobian(self, q):
        """Φ_q (r, n), its independent rows."""
        return self._all_rows_jacobian(q)[self._rows]

    def gamma(self, q, qd):
        """γ (r,): Φ_q q̈ = γ along any motion of the closed mechanism."""
        kin = self.kinematics(q)
        every = gamma(self.tree, self.closures, kin, qd)
        return in_ancestor_axes(self.tree, self.closures, kin, every)[self._rows]

    def condition(self, q):
        """The condition number of Φ_u at q (the partition's dependent columns)."""
        u = list(self.partition.u)
        return float(np.linalg.cond(self.constraint_jacobian(q)[:, u])) if u else 1.0

    def ensure_partition(self, q):
        """The partition, chosen again at q (Gaussian elimination with full pivoting) when
        Φ_u's condition number there passes CONDITION_LIMIT: near a pose where the current
        dependent coordinates cannot follow the independent ones (a rocker at its extreme).
        A mechanism whose motors are its independent coordinates keeps them."""
        if not self.fully_actuated and self.condition(q) > CONDITION_LIMIT:
            self.partition = partition(self._all_rows_jacobian(q))
        return self.partition

    # -- positions, velocities, accelerations --------------------------------------------
    def branch_at(self, q):
        """The signs of det Φ_u's blocks at a closed pose q (branch.py): the assembly branch
        q is on, 0 for a block at a singular pose; None for a mechanism whose motors are not
        its independent coordinates (its partition may change: no branch is kept)."""
        if not self.fully_actuated:
            return None
        return self._branch.signs(self._all_rows_jacobian(q))

    def on_branch(self, q):
        """Whether the closed pose q is on the reference pose's assembly branch (always, for
        a mechanism without one)."""
        return self.branch is None or self.branch_at(q) == self.branch

    def close(self, q, start=None):
        """q (n,) with its dependent coordinates u solved so that Φ(q) = 0, the independent v
        kept, on the reference pose's assembly branch (`branch`): Newton's method from the
        given u, kept when it lands on that branch; else continuation from `start` (a closed
        pose on the branch; default the reference pose): v moved to the goal in steps of at
        most CONTINUATION_STEP, each closed by Newton's method from the last and checked on
        the branch. UnclosedState when the loop cannot close there on the branch (outside
        the mechanism's workspace, at a singular pose, or past one where the branch ends)."""
        q = np.array(q, dtype=float)
        if start is None:
            closed = self.newton(q)
            if closed is not None and self.on_branch(closed):
                return closed
            start = self.reference
        return self._continuation(np.asarray(start, dtype=float), q)

    def close_from(self, last, v):
        """q (n,) with the independent coordinates at v, closed from `last` (a closed pose,
        or one near it): by continuation from `last` where it is on the branch (one step,
        predicted and corrected, for a step of at most CONTINUATION_STEP), else from the
        reference pose. UnclosedState as close."""
        last = np.asarray(last, dtype=float)
        q = last.copy()
        q[self._v] = v
        if self.on_branch(last):
            try:
                return self._continuation(last, q)
            except UnclosedState:
                if np.array_equal(last, self.reference):
                    raise
        return self._continuation(self.reference, q)

    def _continuation(self, start, q):
        """q closed by moving v from `start` (closed, on the branch) to q's in steps:
        predicted to first order (x + B Δv), corrected by Newton's method, kept where the
        correction is at most CORRECTION × the step and the pose on the branch, else the
        step halved (doubled again after a success, up to CONTINUATION_STEP). A step
        through a pose where branches meet lands off the predicted path or off the branch
        however short it is. UnclosedState naming what failed."""
        v = self._v
        span = float(np.abs(q[v] - start[v]).max(initial=0.0))
        largest = min(1.0, CONTINUATION_STEP / span) if span > 0.0 else 1.0
        x, t, h, left_branch = start.copy(), 0.0, largest, False
        while t < 1.0:
            h = min(h, 1.0 - t)
            guess = x.copy()
            try:
                guess += self.velocity_transformation(x) @ (h * (q[v] - start[v]))
            except np.linalg.LinAlgError:
                pass
            guess[v] = start[v] + (t + h) * (q[v] - start[v])
            y = self.newton(guess) if np.isfinite(guess).all() else None
            if y is not None and not self.on_branch(y):
                left_branch, y = True, None
            if y is not None and (np.abs(y - guess).max() <= CORRECTION * h * span):
                x, t, h = y, t + h, min(2.0 * h, largest)
                continue
            h /= 2.0
            if h * span < SMALLEST_STEP:
                break
        else:
            return x
        names = [self.tree.joint_names[i] for i in v]
        where = f"{names} at {np.round(q[v], 6).tolist()}"
        if left_branch:
            raise UnclosedState(
                f"the loops do not close on the reference pose's assembly branch with {where}:"
                f" the way there passes a pose where branches meet (det Φ_u = 0), past which "
                f"the motors cannot tell how the linkage is assembled")
        raise UnclosedState(f"the loops do not close with {where}: outside the mechanism's "
                            "workspace or at a singular pose")

    def newton(self, q):
        """q with u solved by Newton's method from the given values, or None (also when |Φ|
        has not fallen for NEWTON_STALLED iterations: not converging). A revolute u
        is returned as the turn nearest its given value (a step may land a whole turn
        away: the same pose, a different joint reading)."""
        q, guess = q.copy(), q
        u, rows = self._u, self._rows
        best, since_best = np.inf, 0
        for iteration in range(NEWTON_ITERATIONS):
            Phi = self._at(q)["Phi"]
            residual = np.abs(Phi).max(initial=0.0)
            best, since_best = (residual, 0) if residual < best else (best, since_best + 1)
            if since_best == NEWTON_STALLED:        # not converging from this guess
                return None
            if residual <= NEWTON_TOLERANCE:
                if iteration:                   # moved from the guess: its nearest turn
                    turns = np.round((q[u] - guess[u]) / (2.0 * np.pi))
                    q[u] -= np.where(self.tree.is_prismatic[u], 0.0, 2.0 * np.pi * turns)
                return q
            try:
                q[u] -= self.dependent_inverse(q) @ Phi[rows]
            except np.linalg.LinAlgError:
                return None
            if not np.isfinite(q).all():
                return None
        return None

    def velocity_transformation(self, q, columns=None):
        """B (n, d): q̇ = B v̇ for the independent coordinates v (closed q), in the order of
        `columns` (joint indices; default the partition's v, sorted)."""
        v = self._v if columns is None else np.asarray(columns, dtype=np.intp)
        B = np.zeros((self.tree.dof, len(v)))
        B[v, np.arange(len(v))] = 1.0
        if len(self._u):
            B[self._u] = -self.dependent_inverse(q) @ self._at(q)["Phi_q"][self._rows[:, None], v]
        return B

    def velocities(self, q, v_dot):
        """q̇ (n,) of the closed mechanism from the independent coordinates' rates."""
        return self.velocity_transformation(q) @ np.asarray(v_dot, dtype=float)

    def accelerations(self, q, qd, v_ddot):
        """q̈ (n,) = B v̈ + c: the dependent accelerations solve Φ_q q̈ = γ."""
        qdd = self.velocity_transformation(q) @ np.asarray(v_ddot, dtype=float)
        return qdd + self.bias_accelerations(q, qd)

    def bias_accelerations(self, q, qd):
        """c (n,) = q̈ at v̈ = 0 (Φ_q c = γ, c_v = 0)."""
        qd = np.asarray(qd, dtype=float)
        c = np.zeros_like(qd)
        if len(self._u):
            c[self._u] = self.dependent_inverse(q) @ self.gamma(q, qd)
        return c

    # -- dynamics ------------------------------------------------------------------------
    def applied_forces(self, q, qd, tau=None, joint_torques=None):
        """Q (n,) = Sᵀτ + τ_s(q, q̇) + joint_torques: the generalized force applied to the
        tree besides the loops' (tau (k,) the motors', actuated_joints order; τ_s the joint
        springs' and dampers', springs.py; joint_torques (n,) on any joint, passive ones
        too). None: none of it."""
        applied = np.zeros(self.tree.dof)
        if tau is not None:
            applied[list(self.actuated)] = tau
        if self.springs is not None:
            applied += self.springs.torque(q, qd)
        if joint_torques is not None:
            applied += np.asarray(joint_torques, dtype=float)
        return applied

    def inverse_dynamics(self, q, qd, qdd, load=None):
        """(τ (k,) of the actuated joints, λ (r,)) for a motion of the closed mechanism
        (q, q̇, q̈ consistent with the loops), its joint springs and dampers acting; load
        (n,): a generalized force the mechanism exerts on its surroundings besides (Jᵀf of a
        wrench f a tool exerts). ArgumentError unless the motors are its independent
        coordinates."""
        if not self.fully_actuated:
            raise ArgumentError(f"inverse dynamics needs one motor per degree of freedom "
                                f"({self.dof}); actuated_joints: {list(self.actuated_joints)}")
        generalized = self.compiled.rnea(*(np.asarray(x, dtype=float)
                                           for x in (q, qd, qdd)))          # M q̈ + h
        if load is not None:
            generalized = generalized + load
        if self.springs is not None:
            generalized = generalized - self.springs.torque(q, qd)
        B = self.velocity_transformation(q)
        tau = B.T @ generalized                                  # Bᵀ Φ_qᵀ = 0, S B = I
        u = list(self.partition.u)
        lam = -np.linalg.solve(self.constraint_jacobian(q)[:, u].T, generalized[u])
        by_joint = dict(zip(self.partition.v, tau))              # v sorted → motor order
        return np.array([by_joint[i] for i in self.actuated]), lam

    def closure_wrenches(self, q, lam):
        """closures.ClosureWrench of each loop closure at q from λ (r,), the multipliers of
        the independent rows (inverse_dynamics, forward_dynamics). Where the loops'
        equations are redundant (a planar loop's out-of-plane ones) the forces are
        statically indeterminate: of those giving the same generalized force Φ_qᵀλ, the
        one of least norm (no force the loop's geometry cannot tell)."""
        Phi_all = self._all_rows_jacobian(q)
        generalized = self.constraint_jacobian(q).T @ lam
        every = np.linalg.lstsq(Phi_all.T, generalized, rcond=REDUNDANT)[0]
        kin = self.kinematics(q)
        return closure_wrenches(self.tree, self.closures, kin, in_ancestor_axes(
            self.tree, self.closures, kin, every, inverse=True))

    def forward_dynamics(self, q, qd, tau=None, joint_torques=None):
        """(q̈ (n,), λ (r,)) from the KKT system [[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [Q − h; γ],
        Q = Sᵀτ + τ_s + joint_torques (applied_forces): tau (k,) in actuated_joints order
        (None: no motor torque), joint_torques (n,) on any joint (None: none)."""
        q, qd, n = np.asarray(q, dtype=float), np.asarray(qd, dtype=float), self.tree.dof
        M, h = self.compiled.mass_matrix(q), self.compiled.rnea(q, qd, np.zeros(n))
        applied = self.applied_forces(q, qd, tau, joint_torques)
        Phi_q = self.constraint_jacobian(q)
        r = Phi_q.shape[0]
        K = np.block([[M, Phi_q.T], [Phi_q, np.zeros((r, r))]])
        solution = np.linalg.solve(K, np.concatenate((applied - h, self.gamma(q, qd))))
        return solution[:n], solution[n:]

    def operational_space_inertia(self, q, link, point=(0.0, 0.0, 0.0)):
        """OperationalSpace (algorithms/operational_space.py) of a point of `link` (`point`
        [m] in the link's frame) through the loops: Λ = (J_v M̂⁻¹ J_vᵀ)⁻¹ with J_v = J B
        (6, d), rows [linear; angular], base axes, and M̂ = Bᵀ M B. The mechanism moves the
        point in at most d directions; Λ has zero inertia in the others."""
        q = np.asarray(q, dtype=float)
        B = self.velocity_transformation(q)
        J = self.compiled.frame(link, point)(q)[2] @ B
        return operational_space(J, B.T @ self.compiled.mass_matrix(q) @ B)

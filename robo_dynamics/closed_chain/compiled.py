"""A closed mechanism's per-state terms compiled for it: straight-line scalar Python with its
constants folded in (algorithms/compiled/codegen.py), what a controller of its motors needs at each
joint state, in base-frame axes as tree_dynamics.py and closures.py compute them (the
closures' rows in each loop's ancestor's axes, closures.in_ancestor_axes):

    closure(q)       Φ (m,) every row, and Φ_q (m, n)
    gravity(q)       g (n,) of the tree
    rnea(q, q̇, q̈)    τ = M q̈ + C q̇ + g (n,) of the tree (tree_rnea)
    mass_matrix(q)   M (n, n) of the tree (tree_mass_matrix)
    frame, frame_bias  for one point of a link: its pose and Jacobian; J̇ q̇ (at q̈ = 0)
    motor_terms      for one partition: c_u (the dependent accelerations at v̈ = 0) and
                     the motors' momentum terms, from W = ∂(Φ_q q̇)/∂q and p = M q̇

Kinematics: each body's rotation R_i and origin o_i in the base frame, its screw axis about
the base origin S_i = (z_i, j_i × z_i) for a revolute joint through j_i, (0, z_i) for a
prismatic one. A point p of body b moves with v_p = Σ_j (S_lin,j + S_ang,j × p) q̇_j over the
joints j from the base to b. The closures' rows and Jacobians are those of closures.py
(Lee, Sohn, Kim and Yoo, "Construction of System Jacobian …", §5.2); a weld's rotation
rows, rotation_vector(R_b R_aᵀ), are computed from the frames the code returns.

W gives both γ = −(d/dt Φ_q) q̇ = −W q̇ and the derivative of the constraint velocity along
the closed motion that the motors' Coriolis term needs (motor_space.py); the forward-mode
derivatives of the recorded Φ_q q̇ (codegen.Emitter.derivatives) give it. The momentum terms
are in _momentum (Featherstone, Rigid Body Dynamics Algorithms, §2.9).
"""

import math

import numpy as np

from ..algorithms.compiled import chain_codegen as chain
from ..algorithms.compiled.codegen import Emitter, build
from ..spatial.rotations import rotation_vector
from .branch import common_ancestor
from .tree import BASE


def _matmul(e, A, B):
    return [[e.dot(row, column) for column in chain.transpose(B)] for row in A]


def kinematics(e, tree, q):
    """Per body (R (3×3 values), o (3,), S_ang (3,), S_lin (3,)) in base axes."""
    out = []
    for i in range(tree.dof):
        parent = tree.parent[i]
        if parent == BASE:
            R_p, o_p = chain.constants(np.eye(3)), [0.0] * 3
        else:
            R_p, o_p = out[parent][0], out[parent][1]
        R_axis = _matmul(e, R_p, chain.constants(tree.origin_rotation[i]))
        axis = chain.constants(tree.axis[i])
        z = e.matvec(R_axis, axis)
        joint_point = e.vadd(o_p, e.matvec(R_p, chain.constants(tree.origin_translation[i])))
        if tree.is_prismatic[i]:
            out.append((R_axis, e.vadd(joint_point, e.scale(q[i], z)), [0.0] * 3, z))
        else:
            rotation = chain.joint_rotation(e, axis, e.call("cos", q[i]), e.call("sin", q[i]))
            out.append((_matmul(e, R_axis, rotation), joint_point, z, e.cross(joint_point, z)))
    return out


def _ancestors(tree, body):
    joints = []
    while body != BASE:
        joints.append(body)
        body = tree.parent[body]
    return set(joints)


def _frame(e, tree, bodies, link, R_c, p_c):
    """(body, R (3×3), p (3,)) in the base frame of the frame (R_c, p_c) of `link`."""
    body, R_link, p_link = tree.link_frame(link)
    R_frame, p_frame = R_link @ R_c, R_link @ p_c + p_link
    if body == BASE:
        return body, chain.constants(R_frame), chain.constants(p_frame)
    R, o = bodies[body][0], bodies[body][1]
    return (body, _matmul(e, R, chain.constants(R_frame)),
            e.vadd(o, e.matvec(R, chain.constants(p_frame))))


def _column(e, bodies, joint, point):
    """(linear, angular) of joint `joint`'s column of a point's Jacobian (base axes)."""
    _, _, S_ang, S_lin = bodies[joint]
    return e.vadd(S_lin, e.cross(S_ang, point)), S_ang


def _point_columns(e, tree, bodies, body, point):
    """{joint j: (linear, angular)} of the Jacobian columns of a point of `body` at `point`
    (base frame), for the joints from the base to the body."""
    return {j: _column(e, bodies, j, point) for j in sorted(_ancestors(tree, body))}


def _com(e, tree, bodies, i):
    """Body i's centre of mass in the base frame."""
    R, o = bodies[i][0], bodies[i][1]
    return e.vadd(o, e.matvec(R, chain.constants(tree.com[i])))


def _inertia_times(e, tree, bodies, i, x):
    """I_c x with I_c = R I Rᵀ body i's inertia about its COM in base axes (x base axes)."""
    R = bodies[i][0]
    return e.matvec(R, e.matvec(chain.constants(tree.inertia[i]),
                                e.matvec(chain.transpose(R), x)))


def _body_momenta(e, tree, bodies, w, v):
    """Per body (c, h, L): its COM, linear momentum h = m (v + ω × c) and angular momentum
    about the base origin L = I_c ω + c × h, from its twist (ω, v) (rnea.body_wrenches)."""
    out = []
    for i in range(tree.dof):
        c = _com(e, tree, bodies, i)
        h = e.scale(chain.clean(tree.mass[i]), e.vadd(v[i], e.cross(w[i], c)))
        out.append((c, h, e.vadd(_inertia_times(e, tree, bodies, i, w[i]), e.cross(c, h))))
    return out


def closure_rows(e, tree, closures, bodies):
    """(Φ rows (weld rotation rows None), Φ_q rows (lists of n values), weld frames), each
    loop's position and rotation rows in the axes of the body its links hang from, as
    closures.in_ancestor_axes turns them (weld frames in those axes too)."""
    n, Phi, Phi_q, weld_frames = tree.dof, [], [], []
    for c in closures:
        body_a, R_a, p_a = _frame(e, tree, bodies, c.link_a, c.R_a, c.p_a)
        body_b, R_b, p_b = _frame(e, tree, bodies, c.link_b, c.R_b, c.p_b)
        on_a, on_b = _ancestors(tree, body_a), _ancestors(tree, body_b)
        lin, ang = [[0.0] * 3 for _ in range(n)], [[0.0] * 3 for _ in range(n)]
        for j in range(n):              # (J_b − J_a) column j: [linear; angular]
            for on, sign in ((on_b, 1.0), (on_a, -1.0)):
                if j in on:
                    v, w = _column(e, bodies, j, p_b if sign > 0 else p_a)
                    lin[j] = e.vadd(lin[j], e.scale(sign, v))
                    ang[j] = e.vadd(ang[j], e.scale(sign, w))
        ancestor = common_ancestor(tree, c)
        R_t = None if ancestor == BASE else chain.transpose(bodies[ancestor][0])
        local = (lambda x: x) if R_t is None else (lambda x: e.matvec(R_t, x))  # noqa: E731
        Phi += local(e.vadd(p_b, e.scale(-1.0, p_a)))
        lin_local = [local(lin[j]) for j in range(n)]
        Phi_q += [[lin_local[j][k] for j in range(n)] for k in range(3)]
        if c.kind == "revolute":
            z_b = [row[2] for row in R_b]
            for k in (0, 1):
                normal = e.cross([row[k] for row in R_a], z_b)       # x_a × z_b, y_a × z_b
                Phi.append(e.dot([row[k] for row in R_a], z_b))
                Phi_q.append([e.neg(e.dot(normal, ang[j])) for j in range(n)])
        elif c.kind == "weld":
            Phi += [None] * 3
            ang_local = [local(ang[j]) for j in range(n)]
            Phi_q += [[ang_local[j][k] for j in range(n)] for k in range(3)]
            frames = (R_a, R_b) if R_t is None else (_matmul(e, R_t, R_a), _matmul(e, R_t, R_b))
            weld_frames += [x for R in frames for row in R for x in row]
    return Phi, Phi_q, weld_frames


def _gravity(e, tree, bodies):
    """g (n,): the RNEA at rest without the motion's terms. Each body's wrench about the base
    origin is its weight's reaction m a, a = −gravity: (c × m a, m a); each joint's screw
    axis takes its subtree's sum."""
    n = tree.dof
    f_ang, f_lin = [], []
    for i in range(n):
        weight = chain.constants(-tree.mass[i] * np.asarray(tree.gravity))
        f_lin.append(weight)
        f_ang.append(e.cross(_com(e, tree, bodies, i), weight))
    return _subtree_projections(e, tree, bodies, f_ang, f_lin, n)


def _subtree_projections(e, tree, bodies, ang, lin, n):
    """S_i · (Σ over body i's subtree of (ang, lin)) per joint i (joint_forces)."""
    total_ang, total_lin = [list(x) for x in ang], [list(x) for x in lin]
    for i in reversed(range(n)):           # children come after their parents
        parent = tree.parent[i]
        if parent != BASE:
            total_ang[parent] = e.vadd(total_ang[parent], total_ang[i])
            total_lin[parent] = e.vadd(total_lin[parent], total_lin[i])
    return [e.add(e.dot(bodies[i][2], total_ang[i]), e.dot(bodies[i][3], total_lin[i]))
            for i in range(n)], total_ang, total_lin


def _twists(e, tree, bodies, qd):
    """Each body's twist (ω, v) about the base origin: the sums of S_j q̇_j along its path."""
    w, v = [None] * tree.dof, [None] * tree.dof
    for i, (_, _, S_ang, S_lin) in enumerate(bodies):
        parent = tree.parent[i]
        w_p, v_p = ([0.0] * 3, [0.0] * 3) if parent == BASE else (w[parent], v[parent])
        w[i] = e.vadd(w_p, e.scale(qd[i], S_ang))
        v[i] = e.vadd(v_p, e.scale(qd[i], S_lin))
    return w, v


def _rnea(e, tree, bodies, qd, qdd):
    """τ (n,): tree_motion's accelerations (the base's (0, −g)), rnea.body_wrenches' forces
    F_i = G_i V̇_i − [ad_{V_i}]ᵀ G_i V_i about the base origin, projected as joint_forces."""
    n = tree.dof
    w, v = _twists(e, tree, bodies, qd)
    wd, vd = [None] * n, [None] * n
    for i, (_, _, S_ang, S_lin) in enumerate(bodies):
        parent = tree.parent[i]
        if parent == BASE:
            wd_p, vd_p = [0.0] * 3, chain.constants(-np.asarray(tree.gravity))
        else:
            wd_p, vd_p = wd[parent], vd[parent]
        wd[i] = e.vadd(wd_p, e.scale(qdd[i], S_ang), e.scale(qd[i], e.cross(w[i], S_ang)))
        vd[i] = e.vadd(vd_p, e.scale(qdd[i], S_lin), e.scale(
            qd[i], e.vadd(e.cross(v[i], S_ang), e.cross(w[i], S_lin))))
    f_ang, f_lin = [], []
    for i, (c, h, L) in enumerate(_body_momenta(e, tree, bodies, w, v)):
        ma = e.scale(chain.clean(tree.mass[i]), e.vadd(vd[i], e.cross(wd[i], c)))
        f_lin.append(e.vadd(ma, e.cross(w[i], h)))
        f_ang.append(e.vadd(_inertia_times(e, tree, bodies, i, wd[i]), e.cross(c, ma),
                            e.cross(w[i], L), e.cross(v[i], h)))
    return _subtree_projections(e, tree, bodies, f_ang, f_lin, n)[0]


def _mass_matrix(e, tree, bodies):
    """M (n × n values): the composite-rigid-body algorithm in base axes (Featherstone, Rigid
    Body Dynamics Algorithms, §6.2), M_ij = S_iᵀ Iᶜ_i S_j for each j from i to the base, Iᶜ_i
    the spatial inertia of body i's subtree about the base origin: [[A, [h]×], [−[h]×, m 1]]
    with h = Σ m c and A = Σ (I_c + m (|c|² 1 − c cᵀ)) (the bodies' COM c, inertia I_c)."""
    n = tree.dof
    A, h, m = [None] * n, [None] * n, [chain.clean(x) for x in tree.mass]
    for i, (R, _, _, _) in enumerate(bodies):
        c = _com(e, tree, bodies, i)
        I_c = _matmul(e, _matmul(e, R, chain.constants(tree.inertia[i])), chain.transpose(R))
        squared = e.dot(c, c)
        A[i] = [[e.add(I_c[a][b], e.mul(m[i], e.sub(squared if a == b else 0.0,
                                                     e.mul(c[a], c[b]))))
                 for b in range(3)] for a in range(3)]
        h[i] = e.scale(m[i], c)
    for i in reversed(range(n)):                 # children come after their parents
        parent = tree.parent[i]
        if parent != BASE:
            A[parent] = [e.vadd(x, y) for x, y in zip(A[parent], A[i])]
            h[parent], m[parent] = e.vadd(h[parent], h[i]), m[parent] + m[i]
    M = [[0.0] * n for _ in range(n)]
    for i in range(n):
        _, _, w_i, v_i = bodies[i]
        j = i
        while j != BASE:
            _, _, w_j, v_j = bodies[j]
            f_ang = e.vadd(e.matvec(A[i], w_j), e.cross(h[i], v_j))
            f_lin = e.vadd(e.scale(m[i], v_j), e.scale(-1.0, e.cross(h[i], w_j)))
            M[i][j] = M[j][i] = e.add(e.dot(w_i, f_ang), e.dot(v_i, f_lin))
            j = tree.parent[j]
    return M


def _momentum(e, tree, bodies, qd):
    """(M q̇ (n,), ∂T/∂q = C(q, q̇)ᵀ q̇ (n,)) of the tree, T = ½ q̇ᵀ M q̇: with H_i the
    momentum of the subtree from body i out [angular about the base origin; linear],
    ∂T/∂q̇_i = S_i · H_i and ∂T/∂q_i = [ad_{V_i}] S_i · H_i (the screw axis S_i moves with
    its own body's twist V_i; Featherstone, Rigid Body Dynamics Algorithms, §2.9)."""
    n = tree.dof
    w, v = _twists(e, tree, bodies, qd)
    momenta = _body_momenta(e, tree, bodies, w, v)
    p, H_ang, H_lin = _subtree_projections(e, tree, bodies, [L for _, _, L in momenta],
                                           [h for _, h, _ in momenta], n)
    dT_dq = []
    for i, (_, _, S_ang, S_lin) in enumerate(bodies):
        S_dot_ang = e.cross(w[i], S_ang)
        S_dot_lin = e.vadd(e.cross(v[i], S_ang), e.cross(w[i], S_lin))
        dT_dq.append(e.add(e.dot(S_dot_ang, H_ang[i]), e.dot(S_dot_lin, H_lin[i])))
    return p, dT_dq


class CompiledClosedChain:
    """The functions of the module docstring for one ClosedChain's tree and closures
    (compiled once, about a second for a Delta). Each takes and returns NumPy arrays."""

    def __init__(self, tree, closures):
        self.tree, self.closures = tree, tuple(closures)
        self._frames = {}                 # frame's and frame_bias's, per link and point
        n, name = tree.dof, tree.name
        self.rows = sum(c.rows for c in self.closures)

        e = Emitter()
        x = chain.inputs(e, ["q"], n)
        Phi, Phi_q, welds = closure_rows(e, tree, self.closures, kinematics(e, tree, x["q"]))
        self.weld_rows = [k for k, v in enumerate(Phi) if v is None]   # closure() does them
        values = [0.0 if v is None else v for v in Phi] + [v for row in Phi_q for v in row]
        self._closure = compile_function(e, "closure", {"q": n}, values + welds, name)

        e = Emitter()
        x = chain.inputs(e, ["q"], n)
        g = _gravity(e, tree, kinematics(e, tree, x["q"]))[0]
        self._gravity = compile_function(e, "gravity", {"q": n}, g, name)

        e = Emitter()
        x = chain.inputs(e, ["q"], n)
        M = _mass_matrix(e, tree, kinematics(e, tree, x["q"]))
        self._mass_matrix = compile_function(e, "mass_matrix", {"q": n},
                                             [v for row in M for v in row], name)

        e = Emitter()
        x = chain.inputs(e, ["q", "qd", "qdd"], n)
        tau = _rnea(e, tree, kinematics(e, tree, x["q"]), x["qd"], x["qdd"])
        self._rnea = compile_function(e, "rnea", {"q": n, "qd": n, "qdd": n}, tau, name)

    def closure(self, q):
        """(Φ (m,), Φ_q (m, n)) at q (n,)."""
        m, n = self.rows, self.tree.dof
        out = np.array(self._closure(q.tolist()))
        Phi = out[:m]
        if self.weld_rows:
            frames = out[m + m * n:].reshape(-1, 2, 3, 3)
            Phi[self.weld_rows] = np.concatenate(
                [rotation_vector(R_b @ R_a.T) for R_a, R_b in frames])
        return Phi, out[m:m + m * n].reshape(m, n)

    def gravity(self, q):
        """g (n,) [N·m or N] at q (n,)."""
        return np.array(self._gravity(q.tolist()))

    def mass_matrix(self, q):
        """M (n, n) [kg·m² for revolute pairs] of the tree at q (n,)."""
        n = self.tree.dof
        return np.array(self._mass_matrix(q.tolist())).reshape(n, n)

    def rnea(self, q, qd, qdd):
        """τ (n,) [N·m or N] of the tree's motion (q, q̇, q̈), no loop closed."""
        return np.array(self._rnea(q.tolist(), qd.tolist(), qdd.tolist()))

    def frame(self, link, point=(0.0, 0.0, 0.0)):
        """A function pose(q) → (R (3, 3), p (3,), J (6, n)), compiled at the first call for
        this link and point [m] (in the link's frame): the link's axes and the point's
        position in the base frame, and the point's Jacobian [linear; angular], base axes
        (frame_jacobian)."""
        key = (link, tuple(float(x) for x in point))
        if key not in self._frames:
            tree, n = self.tree, self.tree.dof
            e = Emitter()
            x = chain.inputs(e, ["q"], n)
            bodies = kinematics(e, tree, x["q"])
            body, R, p = _frame(e, tree, bodies, link, np.eye(3), np.array(key[1]))
            J = [[0.0] * n for _ in range(6)]
            for j, (linear, angular) in _point_columns(e, tree, bodies, body, p).items():
                for row, value in enumerate(linear + angular):
                    J[row][j] = value
            function = compile_function(e, "frame", {"q": n},
                                [v for row in R for v in row] + p + [v for row in J for v in row],
                                f"{tree.name} {link}")

            def pose(q):
                out = np.array(function(q.tolist()))
                return out[:9].reshape(3, 3), out[9:12], out[12:].reshape(6, n)
            self._frames[key] = pose
        return self._frames[key]

    def frame_bias(self, link, point=(0.0, 0.0, 0.0)):
        """A function bias(q, q̇) → J̇ q̇ (6,) [linear; angular], base axes, compiled at the
        first call for this link and point: the point's classical acceleration and the
        link's angular acceleration at q̈ = 0, Σ_j ∂(J q̇)/∂q_j q̇_j (forward-mode
        derivatives of the recorded J q̇)."""
        key = ("bias", link, tuple(float(x) for x in point))
        if key not in self._frames:
            tree, n = self.tree, self.tree.dof
            e = Emitter()
            x = chain.inputs(e, ["q", "qd"], n)
            bodies = kinematics(e, tree, x["q"])
            body, _, p = _frame(e, tree, bodies, link, np.eye(3), np.array(key[2]))
            rate = [[0.0] * 3, [0.0] * 3]                    # J q̇: [v_p; ω]
            for j, (linear, angular) in _point_columns(e, tree, bodies, body, p).items():
                rate = [e.vadd(rate[0], e.scale(x["qd"][j], linear)),
                        e.vadd(rate[1], e.scale(x["qd"][j], angular))]
            rate = rate[0] + rate[1]
            bias = [0.0] * 6
            for j in range(n):
                bias = e.vadd(bias, e.scale(x["qd"][j], e.derivatives(rate, f"q{j}")))
            function = compile_function(e, "frame_bias", {"q": n, "qd": n}, bias,
                                f"{tree.name} {link}")
            self._frames[key] = lambda q, qd: np.array(function(q.tolist(), qd.tolist()))
        return self._frames[key]

    def motor_terms(self, rows, u):
        """A function terms(q, q̇, Φ_u⁻¹ as a list of r² floats, row by row) → (c_u (r,),
        p (n,), y (n,)) for the Φ rows `rows` and dependent coordinates `u` (r each) of a
        partition: with W = ∂(Φ_q q̇)/∂q (those rows), c_u = Φ_u⁻¹ (−W q̇) the dependent
        accelerations at v̈ = 0 (γ = −W q̇), p = M q̇ and y = ∂T/∂q − Wᵀ Φ_u⁻ᵀ p_u
        (motor_space.py: Ĉᵀθ̇ = Bᵀ y)."""
        tree, n, r = self.tree, self.tree.dof, len(rows)
        e = Emitter()
        x = chain.inputs(e, ["q", "qd"], n)
        inverse = [[e.input(f"inverse{i * r + j}") for j in range(r)] for i in range(r)]
        bodies = kinematics(e, tree, x["q"])
        Phi_q = closure_rows(e, tree, self.closures, bodies)[1]
        Phi_dot = [e.dot(Phi_q[k], x["qd"]) for k in rows]
        W = [e.derivatives(Phi_dot, f"q{j}") for j in range(n)]       # W[j]: column j
        p, dT_dq = _momentum(e, tree, bodies, x["qd"])
        gamma = [e.neg(e.dot([W[j][k] for j in range(n)], x["qd"])) for k in range(r)]
        c_u = e.matvec(inverse, gamma)
        mu = e.matvec(chain.transpose(inverse), [p[i] for i in u])   # Φ_uᵀ μ = p_u
        y = [e.sub(dT_dq[j], e.dot(W[j], mu)) for j in range(n)]
        function = compile_function(e, "motor_terms", {"q": n, "qd": n, "inverse": r * r},
                                    c_u + p + y, tree.name)

        def terms(q, qd, inverse):
            out = np.array(function(q.tolist(), qd.tolist(), inverse))
            return out[:r], out[r:r + n], out[r + n:]
        return terms


def compile_function(e, name, sizes, results, model_name):
    """The function of `results` (values of e) for one state, its arguments lists of floats
    of the given sizes ({name: size}; its values are the inputs name0, name1, …)."""
    lines, texts = e.code(results, inline=True)
    unpack = [f"    {', '.join(f'{x}{i}' for i in range(size))}, = {x}"
              for x, size in sizes.items() if size]
    source = (f"def {name}({', '.join(sizes)}):\n" + "\n".join(unpack + lines)
              + f"\n    return [{', '.join(texts)}]\n")
    return build(source, name, f"<{name} for {model_name}>", {"cos": math.cos, "sin": math.sin})

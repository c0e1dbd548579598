"""Inverse dynamics compiled for one arm: the iterative Newton–Euler recursion (Craig,
Introduction to Robotics, §6.5) in link frames, written out as straight scalar Python with
the arm's constants folded in.

    outward   ω_i = ᶦR ω_{i−1} + q̇_i Ẑ_i
              ω̇_i = ᶦR ω̇_{i−1} + ᶦR ω_{i−1} × q̇_i Ẑ_i + q̈_i Ẑ_i
              v̇_i = ᶦR (ω̇_{i−1} × P_i + ω_{i−1} × (ω_{i−1} × P_i) + v̇_{i−1})
                    (+ 2 ω_i × ḋ_i Ẑ_i + d̈_i Ẑ_i  prismatic),   v̇_0 = −g
              v̇_Ci = ω̇_i × P_Ci + ω_i × (ω_i × P_Ci) + v̇_i
              F_i = m_i v̇_Ci,   N_i = ᶜI_i ω̇_i + ω_i × ᶜI_i ω_i
    inward    f_i = ᶦR_{i+1} f_{i+1} + F_i
              n_i = N_i + ᶦR_{i+1} n_{i+1} + P_Ci × F_i + P_{i+1} × ᶦR_{i+1} f_{i+1}
              τ_i = n_iᵀ Ẑ_i (revolute),  f_iᵀ Ẑ_i (prismatic)

ᶦR = (R_origin Rot(Ẑ, q_i))ᵀ is the rotation from link i−1 to link i. Every product with a
constant 0 or ±1 (most of them: URDF origins are usually multiples of 90°, axes are x, y or
z) is dropped when the code is generated, so the function does only the arithmetic this
arm needs. Single state, model gravity, no tip wrench; `rnea.py` is the general form.
"""

import math

import numpy as np


class _Emitter:
    """Builds straight-line code. A value is a float constant, the name of a local ("t7",
    "q0"), or a negated name ("-t7"): negation is carried in the sign, never computed.
    Identical operations are emitted once (common subexpressions)."""

    def __init__(self):
        self.lines = []          # (target, expression)
        self.count = 0
        self._seen = {}          # expression → target

    def _new(self, expression):
        if expression not in self._seen:
            self.count += 1
            self._seen[expression] = f"t{self.count}"
            self.lines.append((f"t{self.count}", expression))
        return self._seen[expression]

    @staticmethod
    def _const(x):
        return isinstance(x, float)

    @staticmethod
    def _split(x):
        """(sign, name) of a symbolic value."""
        return (-1.0, x[1:]) if x.startswith("-") else (1.0, x)

    def neg(self, x):
        if self._const(x):
            return -x
        return x[1:] if x.startswith("-") else "-" + x

    def add(self, x, y):
        if self._const(x) and self._const(y):
            return x + y
        if self._const(x):
            x, y = y, x
        if self._const(y):
            if y == 0.0:
                return x
            sign, name = self._split(x)
            if sign > 0:
                return self._new(f"{name} + {y!r}")
            return self._new(f"{y!r} - {name}")
        (sx, a), (sy, b) = self._split(x), self._split(y)
        if sx > 0 and sy > 0:
            return self._new(" + ".join(sorted((a, b))))
        if sx < 0 and sy < 0:
            return self.neg(self._new(" + ".join(sorted((a, b)))))
        return self._new(f"{a} - {b}") if sx > 0 else self._new(f"{b} - {a}")

    def sub(self, x, y):
        return self.add(x, self.neg(y))

    def mul(self, x, y):
        if self._const(x) and self._const(y):
            return x * y
        if self._const(y):
            x, y = y, x
        sign_y, b = self._split(y)
        if self._const(x):
            if x == 0.0:
                return 0.0
            product = b if abs(x) == 1.0 else self._new(f"{abs(x)!r} * {b}")
            return product if x * sign_y > 0 else self.neg(product)
        sign_x, a = self._split(x)
        product = self._new(" * ".join(sorted((a, b))))
        return product if sign_x * sign_y > 0 else self.neg(product)

    def call(self, function, argument):
        return self._new(f"{function}({argument})")

    def dot(self, xs, ys):
        total = 0.0
        for x, y in zip(xs, ys):
            total = self.add(total, self.mul(x, y))
        return total

    def matvec(self, M, v):
        return [self.dot(row, v) for row in M]

    def cross(self, a, b):
        return [self.sub(self.mul(a[1], b[2]), self.mul(a[2], b[1])),
                self.sub(self.mul(a[2], b[0]), self.mul(a[0], b[2])),
                self.sub(self.mul(a[0], b[1]), self.mul(a[1], b[0]))]

    def vadd(self, *vectors):
        out = vectors[0]
        for v in vectors[1:]:
            out = [self.add(x, y) for x, y in zip(out, v)]
        return out

    def scale(self, s, v):
        return [self.mul(s, x) for x in v]

    def code(self, results):
        """(lines, results renamed): the lines that `results` depend on (the others are
        dropped), in order, with temporaries renamed so that a name is reused once its value
        is dead. On arrays this frees each temporary as soon as possible, so the working set
        stays small (a few dozen arrays, not one per operation)."""
        def operands(expression):
            tokens = expression.replace("(", " ").replace(")", " ").split()
            return [t.lstrip("-") for t in tokens if t.lstrip("-")[:1] == "t"]

        needed = {self._split(r)[1] for r in results if not self._const(r)}
        kept = []
        for target, expression in reversed(self.lines):
            if target in needed:
                kept.append((target, expression))
                needed.update(operands(expression))
        kept.reverse()
        last_use = {}
        for k, (_, expression) in enumerate(kept):
            for name in operands(expression):
                last_use[name] = k
        for r in results:
            if not self._const(r):
                last_use[self._split(r)[1]] = len(kept)
        rename, free, count, lines = {}, [], 0, []
        for k, (target, expression) in enumerate(kept):
            tokens = expression.split(" ")
            for name in set(operands(expression)):
                if last_use[name] == k:
                    free.append(rename[name])
            if free:
                rename[target] = free.pop()
            else:
                count += 1
                rename[target] = f"r{count}"
            tokens = [_rename(token, rename) for token in tokens]
            lines.append(_assignment(rename[target], tokens))
        renamed = [r if self._const(r) else _rename(r, rename) for r in results]
        return lines, renamed


def _assignment(target, tokens):
    """`target = a op b`, written `target op= b` when target is an operand that may be
    updated in place (on arrays: no new allocation; on floats: the same arithmetic)."""
    if len(tokens) == 3 and tokens[1] in "+-*":
        a, op, b = tokens
        if a == target and b != target:
            return f"    {target} {op}= {b}"
        if b == target and a != target and op != "-":
            return f"    {target} {op}= {a}"
    return f"    {target} = {' '.join(tokens)}"


def _rename(token, rename):
    """A token of an expression ("t12", "-t12", "q0", "2.5", "+", …), renamed if it is a
    temporary."""
    sign = "-" if token[:2] == "-t" else ""
    bare = token[len(sign):]
    return sign + rename[bare] if bare in rename else token


def _text(x):
    return repr(x) if isinstance(x, float) else x


def _clean(x, tolerance=1e-15):
    """Round constants that are 0 or ±1 up to rounding, so they fold away."""
    for exact in (0.0, 1.0, -1.0):
        if abs(x - exact) <= tolerance:
            return exact
    return float(x)


def _joint_rotation(e, axis, c, s):
    """Rot(axis, q) = c I + (1 − c) a aᵀ + s [a]×, entries as values (constant axis a)."""
    omc = e.sub(1.0, c)
    K = [[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]
    R = []
    for row in range(3):
        entries = []
        for col in range(3):
            outer = _clean(axis[row] * axis[col])
            if row == col and outer == 1.0:
                entries.append(1.0)                  # rotation about this very axis
                continue
            value = e.mul(outer, omc)
            if row == col:
                value = e.add(c, value)
            entries.append(e.add(value, e.mul(_clean(K[row][col]), s)))
        R.append(entries)
    return R


def compile_rnea(model, gravity_only=False):
    """A function rnea(q, qd, qdd) → τ (list of n floats) for `model`; q, qd, qdd are
    sequences of n floats in model order. With gravity_only, q̇ = q̈ = 0 are folded in too:
    the function is g(q) and ignores its qd, qdd arguments."""
    e = _Emitter()
    n = model.body_count
    header = []
    for prefix in ["q"] + ([] if gravity_only else ["qd", "qdd"]):
        names = ", ".join(f"{prefix}{i}" for i in range(n))
        header.append(f"    {names}{',' if n == 1 else ''} = {prefix}")

    def rate(prefix, i):
        return 0.0 if gravity_only else f"{prefix}{i}"
    w, wd = [0.0] * 3, [0.0] * 3
    vd = [_clean(-x) for x in model.gravity]
    bodies = []
    for i in range(n):
        axis = [_clean(x) for x in model.axis[i]]
        R_o = [[_clean(x) for x in row] for row in model.origin_rotation[i]]
        P = [_clean(x) for x in model.origin_translation[i]]
        prismatic = bool(model.is_prismatic[i])
        if prismatic:
            R_joint = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
            R_o_axis = [_clean(x) for x in np.asarray(model.origin_rotation[i]) @ model.axis[i]]
            P = e.vadd(P, e.scale(f"q{i}", R_o_axis))          # origin moves along the axis
        else:
            c, s = e.call("cos", f"q{i}"), e.call("sin", f"q{i}")
            R_joint = _joint_rotation(e, axis, c, s)
        # ᶦR x = Rot(q)ᵀ (R_oᵀ x): link i−1 → link i
        R_o_T = [list(col) for col in zip(*R_o)]
        R_joint_T = [list(col) for col in zip(*R_joint)]

        def to_child(x, R_o_T=R_o_T, R_joint_T=R_joint_T):
            return e.matvec(R_joint_T, e.matvec(R_o_T, x))

        qd_axis = e.scale(rate("qd", i), axis)
        qdd_axis = e.scale(rate("qdd", i), axis)
        a_lin = e.vadd(e.cross(wd, P), e.cross(w, e.cross(w, P)), vd)
        w_parent = to_child(w)
        if prismatic:
            w_new = w_parent
            wd_new = to_child(wd)
            vd_new = e.vadd(to_child(a_lin), e.scale(2.0, e.cross(w_new, qd_axis)), qdd_axis)
        else:
            w_new = e.vadd(w_parent, qd_axis)
            wd_new = e.vadd(to_child(wd), e.cross(w_parent, qd_axis), qdd_axis)
            vd_new = to_child(a_lin)
        w, wd, vd = w_new, wd_new, vd_new
        com = [_clean(x) for x in model.com[i]]
        I = [[_clean(x) for x in row] for row in model.inertia[i]]
        vdc = e.vadd(e.cross(wd, com), e.cross(w, e.cross(w, com)), vd)
        F = e.scale(_clean(model.mass[i]), vdc)
        N = e.vadd(e.matvec(I, wd), e.cross(w, e.matvec(I, w)))
        bodies.append((F, N, com, R_o, R_joint, P, axis, prismatic))
    f, nm = [0.0] * 3, [0.0] * 3
    taus = [None] * n
    for i in reversed(range(n)):
        F, N, com, _, _, _, axis, prismatic = bodies[i]
        if i + 1 < n:
            _, _, _, R_o, R_joint, P, _, _ = bodies[i + 1]
            # ᶦR_{i+1} x = R_o Rot(q) x: link i+1 → link i
            f_child = e.matvec(R_o, e.matvec(R_joint, f))
            n_child = e.matvec(R_o, e.matvec(R_joint, nm))
            nm = e.vadd(N, n_child, e.cross(com, F), e.cross(P, f_child))
            f = e.vadd(f_child, F)
        else:
            nm = e.vadd(N, e.cross(com, F))
            f = F
        taus[i] = e.dot(axis, f if prismatic else nm)
    lines, taus = e.code(taus)
    result = ", ".join(_text(t) for t in taus)
    source = ("def rnea(q, qd, qdd):\n" + "\n".join(header + lines)
              + f"\n    return [{result}]\n")
    function = _build(source, f"<{'gravity' if gravity_only else 'rnea'} for {model.name}>",
                      {"cos": math.cos, "sin": math.sin})
    function.operations = len(lines)
    return function


def _build(source, filename, namespace):
    exec(compile(source, filename, "exec"), namespace)
    function = namespace["rnea"]
    function.source = source
    return function


BATCH_CHUNK = 4096   # states per pass: each temporary (32 KiB) stays in cache


def compile_rnea_batch(model, gravity_only=False):
    """A function rnea_batch(q, qd, qdd) → τ (N, n) for N states stacked in (N, n) arrays:
    the code of compile_rnea run on NumPy arrays (one array operation per scalar one), in
    chunks of BATCH_CHUNK states. With gravity_only, qd and qdd are ignored (may be None)."""
    scalar = compile_rnea(model, gravity_only)
    kernel = _build(scalar.source, f"<batched {'gravity' if gravity_only else 'rnea'} for "
                    f"{model.name}>", {"cos": np.cos, "sin": np.sin})

    def rnea_batch(q, qd, qdd):
        count, n = q.shape
        out = np.empty((count, n))
        for start in range(0, count, BATCH_CHUNK):
            rows = slice(start, min(start + BATCH_CHUNK, count))
            columns = [None if x is None else np.ascontiguousarray(x[rows].T)
                       for x in (q, None if gravity_only else qd,
                                 None if gravity_only else qdd)]
            for i, tau in enumerate(kernel(*columns)):
                out[rows, i] = tau
        return out

    rnea_batch.operations = scalar.operations
    return rnea_batch

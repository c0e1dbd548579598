"""Straight-line code from scalar arithmetic, for algorithms compiled for one arm.

An algorithm written against an Emitter runs once, symbolically: each operation on values
records a node of an expression graph and returns a value. A value is a float (a constant,
folded away where it is 0 or ±1) or a Term: ± a reference to an input ("q0") or to an
earlier operation. Negation is carried in the Term's sign, never computed; an operation
recorded twice is emitted once (common subexpressions).

`Emitter.code(results)` then keeps only the operations the results depend on, in order,
and names them with registers r1, r2, … reused as soon as a value is dead, so that on NumPy
arrays the working set stays a few dozen arrays; for floats it writes an operation used once
into its user's expression instead (`inline`). `Emitter.derivatives` differentiates
recorded values with respect to an input (forward mode), recording the derivatives as
further operations. `build` compiles the source and registers
it with linecache, so a traceback through generated code shows its lines.
"""

import dataclasses
import linecache


@dataclasses.dataclass(frozen=True)
class Term:
    """± a symbolic value: `ref` is an input's name (str) or an operation's index (int)."""
    ref: object
    negative: bool = False

    def __neg__(self):
        return Term(self.ref, not self.negative)


@dataclasses.dataclass(frozen=True)
class Operation:
    """One recorded operation: op is "+", "-", "*", "/" or a function name ("cos", "sin");
    operands are positive Terms or floats."""
    op: str
    operands: tuple


class Emitter:
    """Records operations on values (floats and Terms); see the module docstring."""

    def __init__(self):
        self.operations = []      # index → Operation
        self._index = {}          # Operation → index

    # -- values ----------------------------------------------------------------------------
    @staticmethod
    def input(name):
        """The value of an input variable of the generated function (a local name)."""
        return Term(name)

    def _record(self, op, *operands):
        operation = Operation(op, operands)
        if operation not in self._index:
            self._index[operation] = len(self.operations)
            self.operations.append(operation)
        return Term(self._index[operation])

    # -- arithmetic ------------------------------------------------------------------------
    @staticmethod
    def neg(x):
        return -x

    def add(self, x, y):
        if isinstance(x, float) and isinstance(y, float):
            return x + y
        if isinstance(x, float):
            x, y = y, x
        if isinstance(y, float):                      # Term + constant
            if y == 0.0:
                return x
            if x.negative:
                return self._record("-", y, -x)        # y − |x|
            return self._record("+", x, y)
        if x.negative == y.negative:                   # ±(a + b), operands in a fixed order
            total = self._record("+", *sorted((abs_term(x), abs_term(y)), key=_order))
            return -total if x.negative else total
        positive, negative = (x, -y) if y.negative else (y, -x)
        return self._record("-", positive, negative)

    def sub(self, x, y):
        return self.add(x, -y)

    def mul(self, x, y):
        if isinstance(x, float) and isinstance(y, float):
            return x * y
        if isinstance(y, float):
            x, y = y, x
        if isinstance(x, float):                       # constant × Term
            if x == 0.0:
                return 0.0
            product = abs_term(y) if abs(x) == 1.0 else self._record("*", abs(x), abs_term(y))
            return product if (x > 0) != y.negative else -product
        product = self._record("*", *sorted((abs_term(x), abs_term(y)), key=_order))
        return product if x.negative == y.negative else -product

    def div(self, x, y):
        """x / y (y a Term or a nonzero constant)."""
        if isinstance(y, float):
            return self.mul(x, 1.0 / y)
        if isinstance(x, float) and x == 0.0:
            return 0.0
        quotient = self._record("/", abs_term(x) if isinstance(x, Term) else abs(x),
                                abs_term(y))
        negative = (x.negative if isinstance(x, Term) else x < 0.0) != y.negative
        return -quotient if negative else quotient

    def call(self, function, x):
        """function(x) for a function of the generated code's namespace (x a Term)."""
        if isinstance(x, float):
            raise ValueError(f"{function} of a constant: fold it before emitting")
        if x.negative:
            raise ValueError(f"{function} of a negated value is not supported")
        return self._record(function, x)

    # -- vectors (lists of values) ---------------------------------------------------------
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

    # -- derivatives -----------------------------------------------------------------------
    def derivatives(self, values, variable):
        """∂value/∂variable for each of `values` (floats or Terms), `variable` an input's
        name: forward-mode differentiation of the recorded graph, each derivative recorded
        as operations of this emitter (so it folds and shares like the rest). The rules are
        those of +, −, ×, /, cos and sin; a derivative that is 0 stays the constant 0.0."""
        memo = {}

        def d(x):
            if isinstance(x, float):
                return 0.0
            if isinstance(x.ref, str):
                dx = 1.0 if x.ref == variable else 0.0
            else:
                dx = memo[x.ref]
            return self.neg(dx) if x.negative else dx

        needed = set()
        stack = [v.ref for v in values if isinstance(v, Term) and isinstance(v.ref, int)]
        while stack:                                   # the operations the values depend on
            index = stack.pop()
            if index not in needed:
                needed.add(index)
                stack.extend(_temporaries(self.operations[index]))
        for index in sorted(needed):                   # operands come before their users
            operation = self.operations[index]
            a, b = (operation.operands + (None,))[:2]
            if operation.op == "+":
                memo[index] = self.add(d(a), d(b))
            elif operation.op == "-":
                memo[index] = self.sub(d(a), d(b))
            elif operation.op == "*":
                memo[index] = self.add(self.mul(d(a), b), self.mul(a, d(b)))
            elif operation.op == "/":              # (a' b − a b') / b²
                memo[index] = self.div(self.sub(self.mul(d(a), b), self.mul(a, d(b))),
                                       self.mul(b, b))
            elif operation.op == "cos":
                memo[index] = self.mul(self.neg(self.call("sin", a)), d(a))
            elif operation.op == "sin":
                memo[index] = self.mul(self.call("cos", a), d(a))
            else:
                raise ValueError(f"no derivative rule for {operation.op!r}")
        return [d(v) for v in values]

    # -- code ------------------------------------------------------------------------------
    def code(self, results, inline=False):
        """(lines, results as text): the assignments `results` depend on, in order, each
        operation's value in a register that is reused once the value is dead. With
        `inline` (code for floats), an operation whose value is used once, by another
        operation, is written into that one's expression, up to INLINE_DEPTH deep, instead
        of into a register: a store and a load fewer, the same arithmetic in the same
        order, so the same results to the bit."""
        needed = set()
        for r in results:
            if isinstance(r, Term) and isinstance(r.ref, int):
                needed.add(r.ref)
        for index in range(len(self.operations) - 1, -1, -1):   # operands come earlier
            if index in needed:
                needed.update(_temporaries(self.operations[index]))
        kept = sorted(needed)
        alive = {r.ref for r in results if isinstance(r, Term) and isinstance(r.ref, int)}
        inlined = _inlined(self.operations, kept, alive) if inline else {}
        reads = {}                # emitted operation → the registers its line reads
        for index in kept:
            reads[index] = set()
            for operand in _temporaries(self.operations[index]):
                reads[index] |= reads[operand] if operand in inlined else {operand}
        emitted = [index for index in kept if index not in inlined]
        last_use = {}
        for index in emitted:
            for operand in reads[index]:
                last_use[operand] = index
        for ref in alive:
            last_use[ref] = len(self.operations)                 # alive to the end
        register, free, lines, count, text = {}, [], [], 0, {}
        for index in kept:
            operation = self.operations[index]
            operands = [_text(x, register, text) for x in operation.operands]
            if index in inlined:
                text[index] = _expression(operation.op, operands)
                continue
            for operand in reads[index]:
                if last_use[operand] == index:
                    free.append(register[operand])
            if not free:
                count += 1
                free.append(f"r{count}")
            register[index] = free.pop()
            lines.append(_assignment(register[index], operation.op, operands))
        return lines, [_text(r, register, text) for r in results]


INLINE_DEPTH = 8
"""Operations nested into one expression at most (Python's parser limits the nesting)."""


def _inlined(operations, kept, alive):
    """The operations of `kept` to write into their only user's expression: used once, by
    an operation (not a result), nested at most INLINE_DEPTH deep."""
    uses = {}
    for index in kept:
        for operand in _temporaries(operations[index]):
            uses[operand] = uses.get(operand, 0) + 1
    depth, inlined = {}, set()
    for index in kept:
        depth[index] = 1 + max([depth[operand] for operand in _temporaries(operations[index])
                                if operand in inlined] + [0])
        if uses.get(index) == 1 and index not in alive and depth[index] <= INLINE_DEPTH:
            inlined.add(index)
    return inlined


def abs_term(x):
    """x without its sign."""
    return Term(x.ref)


def _order(term):
    """A total order of positive Terms (inputs by name, then operations by index), so that
    a + b and b + a are the same operation."""
    return (1, term.ref, "") if isinstance(term.ref, int) else (0, 0, term.ref)


def _temporaries(operation):
    return [x.ref for x in operation.operands if isinstance(x, Term) and isinstance(x.ref, int)]


def _text(x, register, expressions=None):
    """A value as source text (an inlined operation: its expression, from `expressions`)."""
    if isinstance(x, float):
        return repr(x)
    if isinstance(x.ref, str):
        name = x.ref
    elif expressions and x.ref in expressions:
        name = expressions[x.ref]
    else:
        name = register[x.ref]
    return f"-{name}" if x.negative else name


def _expression(op, operands):
    """An operation as an expression to nest in another."""
    if op not in "+-*/":
        return f"{op}({', '.join(operands)})"
    return f"({operands[0]} {op} {operands[1]})"


def _assignment(target, op, operands):
    """`target = a op b`, written `target op= b` when target is an operand that may be
    updated in place (on arrays: no new allocation; on floats: the same arithmetic)."""
    if op not in "+-*/":
        return f"    {target} = {op}({', '.join(operands)})"
    a, b = operands
    if a == target and b != target:
        return f"    {target} {op}= {b}"
    if b == target and a != target and op in "+*":
        return f"    {target} {op}= {a}"
    return f"    {target} = {a} {op} {b}"


def build(source, function_name, filename, namespace):
    """Compile `source` (Python defining `function_name`) with `namespace` as its globals;
    the source is registered with linecache under `filename` (tracebacks show its lines)
    and kept as the function's `source` attribute."""
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[function_name]
    function.source = source
    return function

"""Sinusoid position tables built in `__init__` (GPT-J's and CodeGen's
`create_sinusoidal_positions(num_pos, dim)`), checked by running them.

HF's GPT-J and CodeGen attentions keep a `[max_positions, rotary_dim]`
table, `torch.cat((torch.sin(p * w), torch.cos(p * w)), dim=1)` of the
positions p and the frequencies w, and gather the rows of the tokens'
positions in forward (`self.embed_positions[position_ids]`, or
`torch.gather`), splitting them into sin and cos. tx computes no table: the
imported function takes the rows as its rotary cos/sin arguments (one angle
per rotated pair), as it takes a rotary module's. So the frontend must know
that the file's function builds such a table, and which half is the sine:
it does not trust the function's name but runs its body here, with a small
evaluator of the few torch operations such a function uses (lists of
floats, no PyTorch), and checks the result: every column pair (i, i + dim/2)
holds sin and cos (or cos and sin) of p * w_i for every position p. A body
using anything else is not run (None: the frontend then treats the call as
any other); one whose result is not such a table is an error where the
table is used."""

import ast
import math


class _Fail(Exception):
    pass


class _Array:
    """A 1- or 2-dimensional array of floats (rows of lists)."""

    def __init__(self, data, shape):
        self.data, self.shape = data, shape

    @staticmethod
    def vector(values):
        return _Array([float(v) for v in values], (len(values),))

    def rows(self):
        if len(self.shape) == 1:
            return [self.data]
        return self.data

    def map(self, f):
        if len(self.shape) == 1:
            return _Array([f(x) for x in self.data], self.shape)
        return _Array([[f(x) for x in row] for row in self.data], self.shape)


def _broadcast(op, a, b):
    """Elementwise op of numbers and arrays (1-D with 1-D of the same
    length, 2-D with 2-D of the same shape, numbers with anything)."""
    if not isinstance(a, _Array) and not isinstance(b, _Array):
        return op(a, b)
    if not isinstance(a, _Array):
        return b.map(lambda x: op(a, x))
    if not isinstance(b, _Array):
        return a.map(lambda x: op(x, b))
    if a.shape != b.shape:
        raise _Fail()
    if len(a.shape) == 1:
        return _Array([op(x, y) for x, y in zip(a.data, b.data)], a.shape)
    return _Array([[op(x, y) for x, y in zip(r, s)] for r, s in zip(a.data, b.data)],
                  a.shape)


_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
        ast.Pow: lambda a, b: a ** b}

# dtype keywords and conversions: the values stay floats (the table is
# checked for its structure, not its rounding).
_CONVERSIONS = ("float", "double", "to", "type")


class _Evaluator:
    def __init__(self, aliases):
        self.aliases = aliases  # the file's import aliases (F, torch, np, ...)

    def dotted(self, e):
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if not isinstance(e, ast.Name):
            return None
        return ".".join([self.aliases.get(e.id, e.id)] + parts[::-1])

    def run(self, fn, args):
        env = dict(args)
        body = list(fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                    isinstance(st.targets[0], ast.Name):
                env[st.targets[0].id] = self.eval(st.value, env)
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and \
                    st.value is not None:
                env[st.target.id] = self.eval(st.value, env)
            elif isinstance(st, ast.Return) and st.value is not None:
                return self.eval(st.value, env)
            else:
                raise _Fail()
        raise _Fail()

    def eval(self, e, env):
        if isinstance(e, ast.Constant) and isinstance(e.value, (int, float, str)) and \
                not isinstance(e.value, bool):
            return e.value
        if isinstance(e, ast.Name):
            if e.id not in env:
                raise _Fail()
            return env[e.id]
        if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
            return _broadcast(_OPS[type(e.op)], self.eval(e.left, env),
                              self.eval(e.right, env))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            v = self.eval(e.operand, env)
            return v.map(lambda x: -x) if isinstance(v, _Array) else -v
        if isinstance(e, ast.Tuple):
            return tuple(self.eval(x, env) for x in e.elts)
        if isinstance(e, ast.List):
            return [self.eval(x, env) for x in e.elts]
        if isinstance(e, ast.Call):
            return self.call(e, env)
        raise _Fail()

    def call(self, e, env):
        kwargs = {}
        for kw in e.keywords:
            if kw.arg is None:
                raise _Fail()
            if kw.arg in ("dtype", "device"):
                continue
            kwargs[kw.arg] = self.eval(kw.value, env)
        if isinstance(e.func, ast.Attribute) and self.dotted(e.func) is not None and \
                not self.dotted(e.func).startswith(("torch.", "numpy.", "math.")):
            # A method of a value: dtype conversions only.
            obj = self.eval(e.func.value, env)
            if e.func.attr in _CONVERSIONS and isinstance(obj, _Array):
                return obj
            raise _Fail()
        if isinstance(e.func, ast.Attribute) and self.dotted(e.func) is None:
            obj = self.eval(e.func.value, env)
            if e.func.attr in _CONVERSIONS and isinstance(obj, _Array):
                return obj
            raise _Fail()
        name = self.dotted(e.func)
        args = [self.eval(a, env) for a in e.args]
        if name in ("torch.arange", "numpy.arange"):
            params = ["start", "end", "step"]
            if len(args) == 1 and not kwargs:
                start, end, step = 0, args[0], 1
            else:
                bound = dict(zip(params, args))
                bound.update(kwargs)
                start, end, step = bound.get("start", 0), bound.get("end"), \
                    bound.get("step", 1)
            if end is None or not all(isinstance(v, (int, float)) for v in (start, end, step)) \
                    or step <= 0 or (end - start) / step > 1 << 20:
                raise _Fail()
            values, v = [], start
            while v < end:
                values.append(v)
                v += step
            return _Array.vector(values)
        if name in ("torch.sin", "torch.cos", "numpy.sin", "numpy.cos") and len(args) == 1 \
                and isinstance(args[0], _Array):
            f = math.sin if name.endswith("sin") else math.cos
            return args[0].map(f)
        if name in ("torch.einsum", "numpy.einsum") and len(args) == 3 and \
                isinstance(args[0], str) and args[0].replace(" ", "") == "i,j->ij":
            return self.outer(args[1], args[2])
        if name in ("torch.outer", "torch.ger", "numpy.outer") and len(args) == 2:
            return self.outer(args[0], args[1])
        if name in ("torch.cat", "torch.concat", "torch.concatenate", "numpy.concatenate"):
            dim = kwargs.get("dim", kwargs.get("axis", args[1] if len(args) > 1 else 0))
            parts = args[0] if args else None
            if not isinstance(parts, (tuple, list)) or len(parts) < 1 or \
                    not all(isinstance(p, _Array) and len(p.shape) == 2 for p in parts) or \
                    dim not in (1, -1) or len({p.shape[0] for p in parts}) != 1:
                raise _Fail()
            rows = [sum((p.data[i] for p in parts), []) for i in range(parts[0].shape[0])]
            return _Array(rows, (parts[0].shape[0], sum(p.shape[1] for p in parts)))
        if name == "torch.tensor" and len(args) == 1:
            return args[0]
        raise _Fail()

    @staticmethod
    def outer(a, b):
        if not (isinstance(a, _Array) and isinstance(b, _Array) and len(a.shape) == 1 and
                len(b.shape) == 1):
            raise _Fail()
        return _Array([[x * y for y in b.data] for x in a.data], (a.shape[0], b.shape[0]))


def evaluate(fn, args, aliases):
    """The table function `fn` (an ast.FunctionDef of the file) run on
    `args` (parameter -> Python number): a list of rows, or None when its
    body uses something the evaluator does not run."""
    a = fn.args
    params = [p.arg for p in list(a.args)]
    if a.vararg or a.kwarg or a.kwonlyargs or set(args) - set(params) or \
            len(args) != len(params):
        return None
    try:
        result = _Evaluator(aliases).run(fn, args)
    except (_Fail, ArithmeticError, TypeError, ValueError, OverflowError):
        return None
    if not isinstance(result, _Array) or len(result.shape) != 2:
        return None
    return result.data


def structure(rows, tol=1e-9):
    """Which sinusoid table the rows are: "sin_cos" (sin(p * w_i) in column
    i, cos in column i + dim/2, as GPT-J's and CodeGen's) or "cos_sin", or
    a text saying why neither."""
    if len(rows) < 3 or not rows[0] or len(rows[0]) % 2:
        return "it has %d rows of %d columns (expected at least 3 positions and an even "\
            "width)" % (len(rows), len(rows[0]) if rows else 0)
    half = len(rows[0]) // 2
    for order in ("sin_cos", "cos_sin"):
        s, c = (0, half) if order == "sin_cos" else (half, 0)
        good = True
        for i in range(half):
            w = math.atan2(rows[1][s + i], rows[1][c + i])
            for p, row in enumerate(rows):
                if abs(row[s + i] - math.sin(p * w)) > tol * max(1.0, p) or \
                        abs(row[c + i] - math.cos(p * w)) > tol * max(1.0, p):
                    good = False
                    break
            if not good:
                break
        if good:
            return order
    return "its columns are not sin(p * w) and cos(p * w) of the positions p, one "\
        "frequency w per column pair (i, i + %d)" % half

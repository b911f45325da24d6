"""Which rotation a modeling file's own rotary helper computes.

A file's `apply_rotary_pos_emb` (and the `rotate_half` / `rotate_every_two`
it calls) is replaced by tx.rotary, not translated, so what it computes must
be known before it is replaced. It is run here on symbolic values: every
feature of q/k is a variable, every angle's cosine and sine one, cos/sin laid
out as HF's rotary modules give them, and every feature of the result must be
what tx.rotary computes:

- NeoX (Llama's `rotate_half`: `torch.cat((-x2, x1), dim=-1)` of the
  halves), cos/sin `[.., rot]` with the halves repeated (`cat(f, f)`):
  pairs (i, i + rot/2) rotated by angle i;
- interleaved (Cohere's `rotate_half`, GPT-J's `rotate_every_two`:
  `x[..., ::2]`, `x[..., 1::2]`, `torch.stack([-x2, x1], dim=-1).flatten(-2)`),
  cos/sin either `[.., rot]` with each angle repeated in place
  (`repeat_interleave(f, 2, dim=-1)`: Cohere) or `[.., rot/2]`, one angle
  per pair, repeated by the helper itself (GPT-J): pairs (2i, 2i + 1)
  rotated by angle i;
- the halves rotated after the pairs were de-interleaved (DeepSeek-V2's
  helper: `q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)`,
  then Llama's `rotate_half`), cos/sin the halves repeated: pair (2i,
  2i + 1) rotated by angle i into features (i, i + rot/2) of the result
  (tx.rotary of a de-interleaved copy);

features from `rot` on (partial rotary) passed through. The leading
dimensions are labelled (tokens, heads, size 1), so cos/sin broadcast against
the heads of the wrong dimension (an `unsqueeze_dim` that is not the heads')
is found too. What the evaluator does not know (another call, a statement it
does not run) is reported with its line: never a rotation assumed."""
import ast


class NotRotary(Exception):
    """What the helper does that is not a rotary tx.rotary computes."""

    def __init__(self, what, node=None):
        super().__init__(what)
        self.what = what
        self.line = getattr(node, "lineno", None)


# A polynomial over the symbols: {monomial: coefficient}, a monomial a sorted
# tuple of (name, index) factors (("q", 3), ("cos", 1)).
def _padd(a, b, sign=1.0):
    out = dict(a)
    for m, c in b.items():
        v = out.get(m, 0.0) + sign * c
        if v == 0.0:
            out.pop(m, None)
        else:
            out[m] = v
    return out


def _pmul(a, b):
    out = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            m = tuple(sorted(ma + mb))
            v = out.get(m, 0.0) + ca * cb
            if v == 0.0:
                out.pop(m, None)
            else:
                out[m] = v
    return out


def _pscale(a, k):
    return {m: c * k for m, c in a.items()} if k != 0 else {}


def _var(name, i):
    return {((name, i),): 1.0}


def format_poly(p):
    if not p:
        return "0"
    text = ""
    for m, c in sorted(p.items()):
        # The tensor's feature first, then the angle: q[0]*cos[0].
        factors = sorted(m, key=lambda f: (f[0] in ("cos", "sin"), f))
        term = "*".join("%s[%d]" % f for f in factors) or "1"
        if abs(c) != 1.0:
            term = "%g*%s" % (abs(c), term)
        text += (" - " if c < 0 else " + ") + term if text else ("-" if c < 0 else "") + term
    return text


# Nested lists over the tracked (trailing) dimensions, polynomials at the
# leaves.
def _at(data, level, f):
    if level == 0:
        return f(data)
    return [_at(d, level - 1, f) for d in data]


def _zip(datas, depth, f):
    if depth == 0:
        return f(*datas)
    if len({len(d) for d in datas}) != 1:
        raise ValueError("sizes differ")
    return [_zip(list(ds), depth - 1, f) for ds in zip(*datas)]


def _shape(data, depth):
    out = []
    for _ in range(depth):
        out.append(len(data))
        data = data[0] if data else []
    return out


class Sym:
    """A symbolic tensor: `lead` labels its leading dimensions ('1' size 1,
    'T' the tokens, 'H' the heads); `data` holds its last `depth` dimensions
    (1, or 2 between torch.stack and flatten, or between a view splitting
    the features into pairs and the reshape joining them). `transposed`:
    its last two dimensions were swapped (a view of it would fail in
    PyTorch; reshape copies)."""

    transposed = False

    def __init__(self, lead, data, depth=1):
        self.lead, self.data, self.depth = list(lead), data, depth

    @property
    def rank(self):
        return len(self.lead) + self.depth


class _Opaque:
    """A value the rotation does not depend on (x.dtype, x.device)."""


class Positions:
    """The forward's position ids (tx's V.Positions): cos/sin are already
    the rows of the tokens' positions, so `cos[position_ids]` (transformers
    v4.36-v4.37's helpers gather the module's table so) is cos itself, one
    row per token."""


class _Unknown:
    """A size the import does not know (the tokens, the heads): `label` the
    leading dimension it is the size of ("T", "H")."""

    def __init__(self, label=None):
        self.label = label


class _Dotted:
    def __init__(self, name):
        self.name = name


class _Method:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class _Return(Exception):
    def __init__(self, value):
        self.value = value


IDENTITY_METHODS = ("float", "half", "bfloat16", "double", "to", "type", "type_as",
                    "contiguous", "clone", "detach")


def _norm_dim(d, rank, node):
    if isinstance(d, bool) or not isinstance(d, int) or not -rank <= d < rank:
        raise NotRotary("dimension %r of a %d-dimensional tensor" % (d, rank), node)
    return d + rank if d < 0 else d


def _bind(names, defaults, args, kwargs, node, what):
    """Arguments of a torch function by position and keyword."""
    out = {}
    for i, n in enumerate(names):
        if i < len(args):
            out[n] = args[i]
        elif n in kwargs:
            out[n] = kwargs[n]
        elif n in defaults:
            out[n] = defaults[n]
        else:
            raise NotRotary("%s without '%s'" % (what, n), node)
    extra = set(kwargs) - set(names)
    if len(args) > len(names) or extra:
        raise NotRotary("%s with other arguments (%s)" % (what, ", ".join(sorted(extra))
                                                          or "positional"), node)
    return out


class Evaluator:
    """Runs a function of the file on Syms and Python values."""

    def __init__(self, src):
        self.src = src
        self.depth = 0

    # -- statements ------------------------------------------------------------
    def call_function(self, fn, args, kwargs, node):
        if self.depth > 20:
            raise NotRotary("calls nested too deeply", node)
        a = fn.args
        params = list(getattr(a, "posonlyargs", [])) + list(a.args)
        if a.vararg is not None or a.kwonlyargs:
            raise NotRotary("a call of %s (*args or keyword-only parameters)" % fn.name, node)
        env = {}
        defaults = dict(zip([p.arg for p in params[len(params) - len(a.defaults):]],
                            a.defaults))
        for i, p in enumerate(params):
            if i < len(args):
                env[p.arg] = args[i]
            elif p.arg in kwargs:
                env[p.arg] = kwargs[p.arg]
            elif p.arg in defaults:
                found, value = self.src.default(fn, p.arg, node)
                if found and type(value).__name__ == "Dotted":
                    value = _Dotted(value.name)  # an import, as eval gives it
                env[p.arg] = value if found else self.eval(defaults[p.arg], {})
            else:
                raise NotRotary("a call of %s without '%s'" % (fn.name, p.arg), node)
        extra = {k: v for k, v in kwargs.items() if k not in env}
        if extra or len(args) > len(params):
            if a.kwarg is None or len(args) > len(params):
                raise NotRotary("a call of %s with other arguments" % fn.name, node)
            env[a.kwarg.arg] = extra
        elif a.kwarg is not None:
            env[a.kwarg.arg] = {}
        self.depth += 1
        try:
            self.run(fn.body, env)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
        return None

    def run(self, body, env):
        for s in body:
            if isinstance(s, ast.Expr):
                if not isinstance(s.value, ast.Constant):  # docstrings
                    self.eval(s.value, env)
            elif isinstance(s, ast.Assign):
                value = self.eval(s.value, env)
                for t in s.targets:
                    self.assign(t, value, env)
            elif isinstance(s, ast.AnnAssign) and s.value is not None:
                self.assign(s.target, self.eval(s.value, env), env)
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
                env[s.target.id] = self.binop(s.op, self.eval(s.target, env),
                                              self.eval(s.value, env), s)
            elif isinstance(s, ast.Return):
                raise _Return(self.eval(s.value, env) if s.value is not None else None)
            elif isinstance(s, ast.If):
                test = self.eval(s.test, env)
                if isinstance(test, (Sym, _Unknown)):
                    raise NotRotary("a branch on a tensor", s)
                self.run(s.body if test else s.orelse, env)
            elif not isinstance(s, ast.Pass):
                raise NotRotary("the statement '%s'" % type(s).__name__, s)

    def assign(self, target, value, env):
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
                raise NotRotary("an unpacking of %d values" % len(target.elts), target)
            for t, v in zip(target.elts, value):
                self.assign(t, v, env)
        else:
            raise NotRotary("an assignment to '%s'" % type(target).__name__, target)

    # -- expressions -----------------------------------------------------------
    def eval(self, e, env):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.Name):
            if e.id in env:
                return env[e.id]
            if e.id in self.src.functions:
                return self.src.functions[e.id]
            if e.id in self.src.constants:
                return self.src.constants[e.id]
            if e.id in ("int", "len", "min", "max"):
                return _Dotted("builtins." + e.id)
            if e.id in self.src.unknown:
                self.src.global_value(e.id, e)  # not known at import: an error
            return _Dotted(self.src.aliases.get(e.id, e.id))
        if isinstance(e, ast.Attribute):
            base = self.eval(e.value, env)
            if isinstance(base, _Dotted):
                return _Dotted(base.name + "." + e.attr)
            if isinstance(base, Sym):
                if e.attr == "shape":
                    return self.sizes(base)
                if e.attr in ("dtype", "device"):
                    return _Opaque()
                return _Method(base, e.attr)
            raise NotRotary("the attribute '%s'" % e.attr, e)
        if isinstance(e, (ast.Tuple, ast.List)):
            values = [self.eval(x, env) for x in e.elts]
            return tuple(values) if isinstance(e, ast.Tuple) else values
        if isinstance(e, ast.UnaryOp):
            v = self.eval(e.operand, env)
            if isinstance(e.op, ast.USub):
                if isinstance(v, Sym):
                    return Sym(v.lead, _at(v.data, v.depth, lambda p: _pscale(p, -1.0)),
                               v.depth)
                return -self.number(v, e)
            if isinstance(e.op, ast.UAdd):
                return v
            if isinstance(e.op, ast.Not) and not isinstance(v, (Sym, _Unknown)):
                return not v
            raise NotRotary("the operator '%s'" % type(e.op).__name__, e)
        if isinstance(e, ast.BinOp):
            return self.binop(e.op, self.eval(e.left, env), self.eval(e.right, env), e)
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            a, b = self.eval(e.left, env), self.eval(e.comparators[0], env)
            if any(isinstance(v, (Sym, _Unknown)) for v in (a, b)) and \
                    not isinstance(e.ops[0], (ast.Is, ast.IsNot)):
                raise NotRotary("a comparison of a tensor or an unknown size", e)
            ops = {ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y,
                   ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y,
                   ast.Lt: lambda x, y: x < y, ast.LtE: lambda x, y: x <= y,
                   ast.Gt: lambda x, y: x > y, ast.GtE: lambda x, y: x >= y}
            if type(e.ops[0]) not in ops:
                raise NotRotary("the comparison '%s'" % type(e.ops[0]).__name__, e)
            return ops[type(e.ops[0])](a, b)
        if isinstance(e, ast.IfExp):
            test = self.eval(e.test, env)
            if isinstance(test, (Sym, _Unknown)):
                raise NotRotary("a condition on a tensor", e)
            return self.eval(e.body if test else e.orelse, env)
        if isinstance(e, ast.Subscript):
            base = self.eval(e.value, env)
            if isinstance(base, Sym):
                if isinstance(self.eval(e.slice, env) if not isinstance(
                        e.slice, (ast.Slice, ast.Tuple)) else None, Positions):
                    if [l for l in base.lead if l != "1"] != ["T"]:
                        raise NotRotary("rows gathered by the position ids of a tensor "
                                        "that is not one row per token", e)
                    return Sym(["1", "T"], base.data, base.depth)
                return self.index(base, e.slice, env, e)
            if isinstance(base, (tuple, list)):
                return base[self.python_index(e.slice, env, e)]
            if isinstance(base, Positions):
                raise NotRotary("the position ids indexed (position_ids[...]: the "
                                "torch.gather of cos/sin of transformers v4.28's helper is "
                                "not supported; cos[position_ids] is)", e)
            raise NotRotary("a subscript of %s" % type(base).__name__, e)
        if isinstance(e, ast.Call):
            func = self.eval(e.func, env)
            args = []
            for a in e.args:
                if isinstance(a, ast.Starred):
                    raise NotRotary("*arguments", a)
                args.append(self.eval(a, env))
            kwargs = {}
            for kw in e.keywords:
                if kw.arg is None:
                    raise NotRotary("**arguments", kw.value)
                kwargs[kw.arg] = self.eval(kw.value, env)
            return self.call(func, args, kwargs, e)
        raise NotRotary("the expression '%s'" % type(e).__name__, e)

    def number(self, v, node):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise NotRotary("arithmetic on %s" % type(v).__name__, node)
        return v

    def binop(self, op, a, b, node):
        if not isinstance(a, Sym) and not isinstance(b, Sym):
            a, b = self.number(a, node), self.number(b, node)
            fns = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.Div: lambda: a / b, ast.FloorDiv: lambda: a // b,
                   ast.Mod: lambda: a % b, ast.Pow: lambda: a ** b}
            if type(op) not in fns:
                raise NotRotary("the operator '%s'" % type(op).__name__, node)
            return fns[type(op)]()
        if isinstance(op, (ast.Add, ast.Sub, ast.Mult)) and isinstance(a, Sym) and \
                isinstance(b, Sym):
            return self.elementwise(op, a, b, node)
        if isinstance(op, ast.Mult):
            s, k = (a, b) if isinstance(a, Sym) else (b, a)
            k = self.number(k, node)
            return Sym(s.lead, _at(s.data, s.depth, lambda p: _pscale(p, float(k))), s.depth)
        if isinstance(op, ast.Div) and isinstance(a, Sym):
            k = self.number(b, node)
            if k == 0:
                raise NotRotary("a division by zero", node)
            return Sym(a.lead, _at(a.data, a.depth, lambda p: _pscale(p, 1.0 / k)), a.depth)
        raise NotRotary("the operator '%s' on a tensor" % type(op).__name__, node)

    def elementwise(self, op, a, b, node):
        if a.depth != b.depth or _shape(a.data, a.depth) != _shape(b.data, b.depth):
            raise NotRotary("an operation on tensors of %s and %s features"
                            % ("x".join(map(str, _shape(a.data, a.depth))),
                               "x".join(map(str, _shape(b.data, b.depth)))), node)
        lead = self.broadcast(a.lead, b.lead, node)
        if isinstance(op, ast.Mult):
            f = _pmul
        else:
            sign = 1.0 if isinstance(op, ast.Add) else -1.0
            f = lambda p, q: _padd(p, q, sign)  # noqa: E731
        return Sym(lead, _zip([a.data, b.data], a.depth, f), a.depth)

    def broadcast(self, a, b, node):
        n = max(len(a), len(b))
        a = ["1"] * (n - len(a)) + a
        b = ["1"] * (n - len(b)) + b
        out = []
        for x, y in zip(a, b):
            if x == y or y == "1":
                out.append(x)
            elif x == "1":
                out.append(y)
            else:
                names = {"T": "tokens", "H": "heads"}
                raise NotRotary("the %s of one tensor meet the %s of the other (cos/sin "
                                "unsqueezed at another dimension than the heads')"
                                % (names[x], names[y]), node)
        return out

    def sizes(self, s):
        return tuple([1 if l == "1" else _Unknown(l) for l in s.lead] +
                     _shape(s.data, s.depth))

    def python_index(self, sl, env, node):
        if isinstance(sl, ast.Slice):
            return slice(*(self.eval(x, env) if x is not None else None
                           for x in (sl.lower, sl.upper, sl.step)))
        i = self.eval(sl, env)
        if isinstance(i, bool) or not isinstance(i, int):
            raise NotRotary("an index that is not a number", node)
        return i

    def index(self, s, sl, env, node):
        items = list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        ell = [i for i, x in enumerate(items)
               if isinstance(x, ast.Constant) and x.value is Ellipsis]
        consuming = [x for x in items if not (isinstance(x, ast.Constant) and
                                              (x.value is None or x.value is Ellipsis))]
        if len(ell) > 1 or len(consuming) > s.rank:
            raise NotRotary("an index of %d dimensions of a %d-dimensional tensor"
                            % (len(consuming), s.rank), node)
        full = ast.Slice(lower=None, upper=None, step=None)
        if ell:
            items[ell[0]:ell[0] + 1] = [full] * (s.rank - len(consuming))
        else:
            items += [full] * (s.rank - len(consuming))
        lead, data, depth, dim = [], s.data, s.depth, 0
        n_lead = len(s.lead)
        level = 0  # the tracked dimension the next item indexes
        for x in items:
            if isinstance(x, ast.Constant) and x.value is None:
                # Before the features (all leading dimensions consumed is
                # fine: cos[:, :, None, :]), not among them.
                if dim > n_lead:
                    raise NotRotary("a new dimension among the features", x)
                lead.append("1")
                continue
            if dim < n_lead:
                label = s.lead[dim]
                if isinstance(x, ast.Slice):
                    v = self.python_index(x, env, x)
                    if v != slice(None):
                        raise NotRotary("a slice of the %s" % {"T": "tokens", "H": "heads",
                                                               "1": "batch"}[label], x)
                    lead.append(label)
                else:
                    v = self.python_index(x, env, x)
                    if label != "1" or v not in (0, -1):
                        raise NotRotary("an index of the %s" % {"T": "tokens",
                                                                "H": "heads"}.get(label,
                                                                                  "batch"), x)
                dim += 1
                continue
            v = self.python_index(x, env, x)
            if isinstance(v, slice):
                if any(isinstance(b, _Unknown) for b in (v.start, v.stop, v.step)) or \
                        v.step == 0:
                    raise NotRotary("a slice of unknown bounds", x)
                data = _at(data, level, lambda d, v=v: d[v])
                level += 1
            else:
                if depth == 1:
                    raise NotRotary("one feature taken out of the head", x)
                data = _at(data, level, lambda d, v=v: d[v])
                depth -= 1
            dim += 1
        return Sym(lead, data, depth)

    # -- calls -----------------------------------------------------------------
    def call(self, func, args, kwargs, node):
        if isinstance(func, ast.FunctionDef):
            return self.call_function(func, args, kwargs, node)
        if isinstance(func, _Method):
            return self.method(func.obj, func.name, args, kwargs, node)
        if isinstance(func, _Dotted):
            name = func.name
            if name == "builtins.int":
                return int(self.number(args[0], node)) if len(args) == 1 and not kwargs \
                    else self._fail(name, node)
            if name in ("builtins.min", "builtins.max") and args and not kwargs:
                values = [self.number(a, node) for a in args]
                return min(values) if name.endswith("min") else max(values)
            if name == "builtins.len" and len(args) == 1 and not kwargs:
                if isinstance(args[0], Sym):
                    return self.sizes(args[0])[0]
                return len(args[0])
            head, _, fn = name.rpartition(".")
            if head == "torch" and fn in TORCH_FUNCTIONS:
                return TORCH_FUNCTIONS[fn](self, args, kwargs, node)
            return self._fail(name, node)
        raise NotRotary("a call of %s" % type(func).__name__, node)

    def _fail(self, name, node):
        raise NotRotary("%s()" % name.rsplit(".", 1)[-1], node)

    def method(self, s, name, args, kwargs, node):
        if name in IDENTITY_METHODS:
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, Sym) and name != "type_as":
                    raise NotRotary("%s() of a tensor" % name, node)
            return s
        if name in ("flatten", "unsqueeze", "squeeze", "repeat_interleave", "chunk",
                    "split", "narrow", "neg", "transpose", "reshape"):
            return TORCH_FUNCTIONS[name](self, [s] + list(args), kwargs, node)
        if name == "view":
            return self.reshape([s] + list(args), kwargs, node, view=True)
        if name == "size":
            sizes = self.sizes(s)
            if not args and not kwargs:
                return sizes
            return sizes[_norm_dim(_bind(["dim"], {}, args, kwargs, node, "size")["dim"],
                                    s.rank, node)]
        if name == "dim" and not args and not kwargs:
            return s.rank
        raise NotRotary("%s()" % name, node)

    # torch functions (also the tensor methods of the same name)
    def stack(self, args, kwargs, node):
        a = _bind(["tensors", "dim"], {"dim": 0}, args, kwargs, node, "torch.stack")
        ts = self.tensors(a["tensors"], node, "torch.stack")
        first = ts[0]
        if _norm_dim(a["dim"], first.rank + 1, node) != first.rank:
            raise NotRotary("torch.stack along another dimension than a new last one", node)
        lead = first.lead
        for t in ts[1:]:
            if t.lead != lead or t.depth != first.depth:
                raise NotRotary("torch.stack of tensors of other shapes", node)
        try:
            data = _zip([t.data for t in ts], first.depth, lambda *p: list(p))
        except ValueError:
            raise NotRotary("torch.stack of tensors of other sizes", node)
        return Sym(lead, data, first.depth + 1)

    def flatten(self, args, kwargs, node):
        a = _bind(["input", "start_dim", "end_dim"], {"start_dim": 0, "end_dim": -1},
                  args, kwargs, node, "flatten")
        s = a["input"]
        start = _norm_dim(a["start_dim"], s.rank, node)
        end = _norm_dim(a["end_dim"], s.rank, node)
        if start == end:
            return s
        if end != s.rank - 1 or start != s.rank - 2 or s.depth < 2:
            raise NotRotary("flatten of other dimensions than the last two (after "
                            "torch.stack(..., dim=-1))", node)
        data = _at(s.data, s.depth - 2, lambda d: [p for row in d for p in row])
        return Sym(s.lead, data, s.depth - 1)

    def cat(self, args, kwargs, node):
        a = _bind(["tensors", "dim"], {"dim": 0}, args, kwargs, node, "torch.cat")
        ts = self.tensors(a["tensors"], node, "torch.cat")
        first = ts[0]
        if _norm_dim(a["dim"], first.rank, node) != first.rank - 1:
            raise NotRotary("torch.cat along another dimension than the last", node)
        for t in ts[1:]:
            if t.lead != first.lead or t.depth != first.depth:
                raise NotRotary("torch.cat of tensors of other shapes", node)
        data = ts[0].data
        for t in ts[1:]:
            data = _zip([data, t.data], first.depth - 1, lambda x, y: x + y)
        return Sym(first.lead, data, first.depth)

    def repeat_interleave(self, args, kwargs, node):
        a = _bind(["input", "repeats", "dim"], {"dim": None}, args, kwargs, node,
                  "repeat_interleave")
        s, n = a["input"], a["repeats"]
        if not isinstance(s, Sym) or isinstance(n, bool) or not isinstance(n, int) or \
                n < 1 or a["dim"] is None or \
                _norm_dim(a["dim"], s.rank, node) != s.rank - 1:
            raise NotRotary("repeat_interleave other than of a tensor's last dimension a "
                            "number of times", node)
        data = _at(s.data, s.depth - 1, lambda d: [p for p in d for _ in range(n)])
        return Sym(s.lead, data, s.depth)

    def pieces(self, s, sizes, dim, node, what):
        if _norm_dim(dim, s.rank, node) != s.rank - 1 or s.depth != 1:
            raise NotRotary("%s along another dimension than the last" % what, node)
        out, start = [], 0
        for n in sizes:
            out.append(Sym(s.lead, s.data[start:start + n], 1))
            start += n
        return tuple(out)

    def chunk(self, args, kwargs, node):
        a = _bind(["input", "chunks", "dim"], {"dim": 0}, args, kwargs, node, "chunk")
        s, n = a["input"], a["chunks"]
        width = len(s.data)
        step = -(-width // n)
        return self.pieces(s, [min(step, width - i) for i in range(0, width, step)],
                           a["dim"], node, "chunk")

    def split(self, args, kwargs, node):
        names = ["tensor", "split_size_or_sections", "dim"]
        if "split_size" in kwargs:
            kwargs = dict(kwargs)
            kwargs["split_size_or_sections"] = kwargs.pop("split_size")
        a = _bind(names, {"dim": 0}, args, kwargs, node, "split")
        s, n = a["tensor"], a["split_size_or_sections"]
        width = len(s.data)
        sizes = list(n) if isinstance(n, (list, tuple)) else \
            [min(n, width - i) for i in range(0, width, n)]
        if sum(sizes) != width:
            raise NotRotary("split sizes that do not add up", node)
        return self.pieces(s, sizes, a["dim"], node, "split")

    def narrow(self, args, kwargs, node):
        a = _bind(["input", "dim", "start", "length"], {}, args, kwargs, node, "narrow")
        s = a["input"]
        return self.pieces(s, [a["start"], a["length"]], a["dim"], node, "narrow")[1]

    def unsqueeze(self, args, kwargs, node):
        a = _bind(["input", "dim"], {}, args, kwargs, node, "unsqueeze")
        s = a["input"]
        d = _norm_dim(a["dim"], s.rank + 1, node)
        if d > len(s.lead):
            raise NotRotary("unsqueeze among the features", node)
        return Sym(s.lead[:d] + ["1"] + s.lead[d:], s.data, s.depth)

    def squeeze(self, args, kwargs, node):
        a = _bind(["input", "dim"], {}, args, kwargs, node, "squeeze")
        s = a["input"]
        d = _norm_dim(a["dim"], s.rank, node)
        if d >= len(s.lead) or s.lead[d] == "T":
            # Not of size 1 (the features, the tokens: many of them), so
            # PyTorch returns the tensor as it is (transformers v4.31-v4.35's
            # cos.squeeze(1).squeeze(0) of a [1, 1, seq, dim] cache, given
            # here as the tokens' rows).
            return s
        if s.lead[d] != "1":
            raise NotRotary("squeeze of the heads' dimension (of size 1 or not)", node)
        return Sym(s.lead[:d] + s.lead[d + 1:], s.data, s.depth)

    def transpose(self, args, kwargs, node):
        """x.transpose(a, b) of the last two dimensions (DeepSeek-V2's
        transpose(4, 3) of the pairs of a view(b, h, s, d // 2, 2))."""
        a = _bind(["input", "dim0", "dim1"], {}, args, kwargs, node, "transpose")
        s = a["input"]
        if not isinstance(s, Sym):
            raise NotRotary("transpose of something other than a tensor", node)
        d0, d1 = sorted((_norm_dim(a["dim0"], s.rank, node),
                         _norm_dim(a["dim1"], s.rank, node)))
        if d0 == d1:
            return s
        if (d0, d1) != (s.rank - 2, s.rank - 1) or s.depth < 2:
            raise NotRotary("transpose of other dimensions than the last two of the "
                            "features split into pairs", node)
        out = Sym(s.lead, _at(s.data, s.depth - 2, lambda d: [list(r) for r in zip(*d)]),
                  s.depth)
        out.transposed = not s.transposed
        return out

    def reshape(self, args, kwargs, node, view=False):
        """x.view(*sizes) / x.reshape(*sizes): the leading dimensions kept
        (their sizes as x.shape gives them, or -1), the features split into
        [n, m] (depth 1 to 2) or the last two joined (2 to 1); any other
        view is not run. A view of a tensor whose last two dimensions were
        transposed fails in PyTorch: not run either."""
        what = "view" if view else "reshape"
        s = args[0] if args else None
        sizes = list(args[1:])
        if kwargs or not isinstance(s, Sym):
            raise NotRotary("%s with other arguments" % what, node)
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = list(sizes[0])
        n = len(s.lead)
        if len(sizes) < n or sum(1 for x in sizes if x == -1 and
                                 not isinstance(x, bool)) > 1:
            raise NotRotary("a %s of the leading dimensions" % what, node)
        for label, x in zip(s.lead, sizes[:n]):
            same = x == 1 if label == "1" else \
                isinstance(x, _Unknown) and x.label == label
            if not same and not (x == -1 and not isinstance(x, bool)):
                raise NotRotary("a %s of the leading dimensions" % what, node)
        shape = _shape(s.data, s.depth)
        want = sizes[n:]
        if not all(isinstance(x, int) and not isinstance(x, bool) and (x > 0 or x == -1)
                   for x in want):
            raise NotRotary("a %s to sizes not known at import" % what, node)
        total = 1
        for x in shape:
            total *= x
        known = 1
        for x in want:
            known *= x if x != -1 else 1
        if -1 in want:
            if known == 0 or total % known:
                raise NotRotary("a %s to sizes that do not fit" % what, node)
            want = [total // known if x == -1 else x for x in want]
        if want == shape:
            return s
        if view and s.transposed:
            raise NotRotary("a view of a tensor whose last two dimensions were "
                            "transposed (PyTorch's view fails; reshape copies)", node)
        if s.depth == 1 and len(want) == 2 and want[0] * want[1] == shape[0]:
            m = want[1]
            return Sym(s.lead, [s.data[i * m:(i + 1) * m] for i in range(want[0])], 2)
        if s.depth == 2 and len(want) == 1 and want[0] == total:
            return Sym(s.lead, [p for row in s.data for p in row], 1)
        raise NotRotary("a %s of the features to %s" % (what, "x".join(map(str, want))),
                        node)

    def neg(self, args, kwargs, node):
        s = _bind(["input"], {}, args, kwargs, node, "neg")["input"]
        return Sym(s.lead, _at(s.data, s.depth, lambda p: _pscale(p, -1.0)), s.depth)

    def tensors(self, seq, node, what):
        if not isinstance(seq, (tuple, list)) or not seq or \
                not all(isinstance(t, Sym) for t in seq):
            raise NotRotary("%s of something other than tensors" % what, node)
        return list(seq)


TORCH_FUNCTIONS = {
    "stack": Evaluator.stack, "flatten": Evaluator.flatten, "cat": Evaluator.cat,
    "concat": Evaluator.cat, "concatenate": Evaluator.cat,
    "repeat_interleave": Evaluator.repeat_interleave, "chunk": Evaluator.chunk,
    "split": Evaluator.split, "narrow": Evaluator.narrow, "unsqueeze": Evaluator.unsqueeze,
    "squeeze": Evaluator.squeeze, "neg": Evaluator.neg,
    "transpose": Evaluator.transpose, "reshape": Evaluator.reshape,
}


# -- what tx.rotary computes ------------------------------------------------------
def expected(name, width, rot, interleaved):
    """The features of tx.rotary's result for input `name` of `width`
    features, the first `rot` rotated. `interleaved` "deinterleaved": the
    halves rotated of the input's pairs de-interleaved (feature i of the
    de-interleaved input is 2i, feature rot/2 + i is 2i + 1)."""
    half = rot // 2
    out = []
    for j in range(width):
        if j >= rot:
            out.append(_var(name, j))
            continue
        if interleaved == "deinterleaved":
            p, first = j % half, j < half
            feature = lambda i: 2 * i if i < half else 2 * (i - half) + 1  # noqa: E731
            c = _pmul(_var(name, feature(j)), _var("cos", p))
            s = _pmul(_var(name, feature(j + half if first else j - half)),
                      _var("sin", p))
            out.append(_padd(c, s, -1.0 if first else 1.0))
            continue
        if interleaved:
            p, first = j // 2, j % 2 == 0
            other = j + 1 if first else j - 1
        else:
            p, first = j % half, j < half
            other = j + half if first else j - half
        c = _pmul(_var(name, j), _var("cos", p))
        s = _pmul(_var(name, other), _var("sin", p))
        out.append(_padd(c, s, -1.0 if first else 1.0))
    return out


# How HF's rotary modules lay out cos/sin for a rotated width `rot`: angle of
# feature j. NeoX: the halves repeated; interleaved: each angle twice in
# place (Cohere), or once per pair (GPT-J, whose helper repeats them). Each
# entry: (whether the helper must rotate interleaved pairs, the angles); the
# halves may also feed interleaved pairs (GLM's helper takes the first half
# of each row and repeats each angle in place itself), or the halves of the
# pairs de-interleaved ("deinterleaved": DeepSeek-V2's helper; tried last).
LAYOUTS = {
    "halves": (False, lambda rot: [j % (rot // 2) for j in range(rot)]),
    "halves-interleaved": (True, lambda rot: [j % (rot // 2) for j in range(rot)]),
    "interleaved": (True, lambda rot: [j // 2 for j in range(rot)]),
    "pairs": (True, lambda rot: list(range(rot // 2))),
    "halves-deinterleaved": ("deinterleaved", lambda rot: [j % (rot // 2)
                                                           for j in range(rot)]),
}


class Input:
    """A tensor argument of the helper: `width` features, the leading
    dimensions labelled `lead`."""

    def __init__(self, width, lead):
        self.width, self.lead = width, list(lead)


class Rope:
    """The cos or sin argument (`kind`), leading dimensions labelled `lead`."""

    def __init__(self, kind, lead):
        self.kind, self.lead = kind, list(lead)


def classify(src, fn, params, order, rot):
    """Runs helper `fn` on `params` (parameter name -> Input, Rope or a
    Python value) with cos/sin in each layout of LAYOUTS. Returns the layout
    in which its results are tx.rotary's (NeoX or interleaved, the first
    `rot` features rotated) of the Inputs named in `order`, in that order;
    raises NotRotary with what differs (or what could not be run)
    otherwise."""
    inputs = [(n, params[n]) for n in order]
    failures = []
    # Each layout as HF gives cos/sin, then (only if none matched) each with
    # the helper given -sin: a helper that computes tx.rotary's rotation of
    # -sin (NanoChat's rotate_half, `cat((x2, -x1))`: the rotation by minus
    # the angle) is tx.rotary of the negated sin (NEGATED_SIN).
    tries = [(layout, False) for layout in LAYOUTS] + [(layout, True) for layout in LAYOUTS]
    for layout, negated in tries:
        interleaved, angles = LAYOUTS[layout]
        env = {}
        for n, v in params.items():
            if isinstance(v, Input):
                v = Sym(v.lead, [_var(n, j) for j in range(v.width)])
            elif isinstance(v, Rope):
                v = Sym(v.lead, [_pscale(_var(v.kind, a), -1.0) if negated and
                                 v.kind == "sin" else _var(v.kind, a) for a in angles(rot)])
            env[n] = v
        ev = Evaluator(src)
        try:
            ev.run(fn.body, env)
            result = None
        except _Return as r:
            result = r.value
        except NotRotary as e:
            if not negated:
                failures.append((1, e))
            continue
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        try:
            check_results(results, inputs, rot, interleaved)
        except NotRotary as e:
            if not negated:
                failures.append((0, e))
            continue
        return layout + NEGATED_SIN if negated else layout
    # The layout whose run got furthest (a result computed, but another
    # rotation), and of those the closest, tells best what the helper does.
    raise min(failures, key=lambda f: (f[0], getattr(f[1], "distance", ())))[1]


# classify's layout suffix for a helper computing tx.rotary with -sin.
NEGATED_SIN = "/negated-sin"


def split_layout(layout):
    """(the LAYOUTS key, whether sin is negated) of a layout classify gave."""
    if layout.endswith(NEGATED_SIN):
        return layout[:-len(NEGATED_SIN)], True
    return layout, False


def check_results(results, inputs, rot, interleaved):
    if len(results) != len(inputs):
        raise NotRotary("it returns %d values for %d tensors" % (len(results), len(inputs)))
    first, terms, signs = None, 0, 0
    for (name, spec), r in zip(inputs, results):
        if not isinstance(r, Sym) or r.depth != 1:
            raise NotRotary("its result for '%s' is not a tensor of the head's features"
                            % name)
        if r.lead != spec.lead:
            raise NotRotary("its result for '%s' has other dimensions than '%s'"
                            % (name, name))
        want = expected(name, spec.width, rot, interleaved)
        if len(r.data) != len(want):
            raise NotRotary("its result for '%s' has %d features, not %d"
                            % (name, len(r.data), len(want)))
        for j, (got, w) in enumerate(zip(r.data, want)):
            if got == w:
                continue
            if first is None:
                first = "feature %d of its result for '%s' is %s, not %s" % (
                    j, name, format_poly(got), format_poly(w))
            terms += len(set(got) ^ set(w))
            signs += 1
    if first is not None:
        e = NotRotary(first)
        # How far from this rotation (of all features of all results): terms
        # other than its, then features of other signs (the rotation the
        # other way round).
        e.distance = (terms, signs)
        raise e

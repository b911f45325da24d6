"""A small builder that writes a transformer block as tx IR.

    b = tx.ModuleBuilder(tp_size=1)
    q = b.layer("q_proj", 64, 64)
    with b.function("forward", x=tx.memref(None, 64)) as f:
        y = f.linear(q, f.arg("x"))
        f.ret(y)
    module = b.build()            # parsed and verified: a tx.Module

Values carry their memref types, so result types are derived the way the
tx verifiers expect them; whatever the builder gets wrong the verifier
reports through TxError when build() parses the text.
"""

import contextlib
import math

from .module import Module


class MemRefType:
    """memref<d0 x d1 x ... x dtype>; a dimension of None is dynamic (?)."""

    def __init__(self, shape, dtype="f32"):
        self.shape = tuple(shape)
        self.dtype = dtype
        for d in self.shape:
            if d is not None and (not isinstance(d, int) or d < 0):
                raise ValueError("bad dimension %r in %r" % (d, shape))

    def with_last(self, size):
        return MemRefType(self.shape[:-1] + (size,), self.dtype)

    def __eq__(self, other):
        return isinstance(other, MemRefType) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        dims = "".join("%sx" % ("?" if d is None else d) for d in self.shape)
        return "memref<%s%s>" % (dims, self.dtype)

    __repr__ = __str__


def memref(*shape, dtype="f32"):
    """memref(None, 64) is memref<?x64xf32>."""
    return MemRefType(shape, dtype)


def _float(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("not a finite float: %r" % x)
    text = repr(x)
    if "." not in text:  # MLIR float literals need a '.': 1e-06 -> 1.0e-06
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0" + ("e" + exponent if exponent else "")
    return text


class Value:
    """An SSA value in the function being built."""

    def __init__(self, name, type):
        self.name = name
        self.type = type

    def __str__(self):
        return self.name


class Symbol:
    def __init__(self, name, kind):
        self.name = name
        self.kind = kind

    def __str__(self):
        return "@" + self.name


class _Region:
    """Lines of one region, indented when the enclosing op is written."""

    def __init__(self):
        self.lines = []


class _IfBuilder:
    """scf.if with results: `then_` / `else_` regions each end in yield_."""

    def __init__(self, fn, cond, name):
        self._fn = fn
        self._cond = cond
        self._name = name
        self._regions = {}
        self._yields = {}
        self.results = None

    @contextlib.contextmanager
    def _region(self, which):
        if which in self._regions:
            raise ValueError("scf.if: %s region built twice" % which)
        region = _Region()
        self._regions[which] = region
        self._fn._regions.append(region)
        try:
            yield self
        finally:
            self._fn._regions.pop()

    def then_(self):
        return self._region("then")

    def else_(self):
        return self._region("else")

    def yield_(self, *values):
        region = self._fn._regions[-1]
        which = [k for k, r in self._regions.items() if r is region]
        if not which:
            raise ValueError("yield_ outside a then_/else_ region")
        self._yields[which[0]] = list(values)
        types = ", ".join(str(v.type) for v in values)
        operands = ", ".join(str(v) for v in values)
        region.lines.append("scf.yield %s : %s" % (operands, types) if values
                            else "scf.yield")

    def _finish(self):
        then_values = self._yields.get("then")
        if then_values is None:
            raise ValueError("scf.if: the then_ region has no yield_")
        types = [v.type for v in then_values]
        if "else" in self._regions:
            else_types = [v.type for v in self._yields.get("else", [])]
            if else_types != types:
                raise ValueError("scf.if: then yields %s, else yields %s" %
                                 (types, else_types))
        elif types:
            raise ValueError("scf.if with results needs an else_ region")
        lines = []
        if types:
            results = self._fn._fresh(self._name)
            head = "%s%s = " % (results, ":%d" % len(types)
                                if len(types) > 1 else "")
            self.results = [
                Value(results if len(types) == 1 else "%s#%d" % (results, i),
                      t) for i, t in enumerate(types)
            ]
            lines.append("%sscf.if %s -> (%s) {" %
                         (head, self._cond, ", ".join(map(str, types))))
        else:
            self.results = []
            lines.append("scf.if %s {" % self._cond)
        lines += ["  " + l for l in self._regions["then"].lines]
        if "else" in self._regions:
            lines.append("} else {")
            lines += ["  " + l for l in self._regions["else"].lines]
        lines.append("}")
        return lines


class FunctionBuilder:
    """Builds one func.func; use as a context manager from
    ModuleBuilder.function and end it with ret()."""

    def __init__(self, module, name, args):
        self._module = module
        self.name = name
        self._names = set()
        self._args = []
        for arg_name, type in args.items():
            value = Value(self._fresh(arg_name), type)
            self._args.append(value)
        self._regions = [_Region()]
        self._results = None

    # -- naming and emission ------------------------------------------------
    def _fresh(self, hint):
        hint = "".join(c if c.isalnum() or c == "_" else "_" for c in
                       (hint or "v"))
        name, i = hint, 0
        while name in self._names:
            i += 1
            name = "%s_%d" % (hint, i)
        self._names.add(name)
        return "%" + name

    def _emit(self, line):
        self._regions[-1].lines.append(line)

    def _op(self, name, type, text):
        value = Value(self._fresh(name), type)
        self._emit("%s = %s" % (value, text))
        return value

    def arg(self, name):
        for value in self._args:
            if value.name == "%" + name:
                return value
        raise KeyError("no argument %r in @%s" % (name, self.name))

    @property
    def args(self):
        return list(self._args)

    # -- module state ---------------------------------------------------------
    def get_param(self, param, name=None):
        return self._op(name or param.name, param.type,
                        "tx.get_param %s : %s" % (param, param.type))

    def layer_ref(self, layer, name=None):
        return self._op(name or layer.name + "_ref", "!tx.layer_ref",
                        "tx.layer_ref %s" % layer)

    def guard(self, predicate, ref, name=None):
        """predicate: is_none, is_not_none, truthy, falsy, eq_none, ne_none."""
        return self._op(name or "guard", "i1",
                        "tx.guard %s %s" % (predicate, ref))

    def constant_index(self, value, name=None):
        return self._op(name or "c%d" % value, "index",
                        "arith.constant %d : index" % value)

    # -- compute ------------------------------------------------------------
    def linear(self, layer, x, name=None):
        if layer.kind != "layer":
            raise ValueError("@%s is not a tx.layer" % layer.name)
        out = x.type.with_last(self._module._layers[layer.name][1])
        return self._op(name or layer.name, out, "tx.linear %s(%s) : %s -> %s"
                        % (layer, x, x.type, out))

    def view(self, x, *shape, name=None):
        out = MemRefType(shape, x.type.dtype)
        return self._op(name or "view", out,
                        "tx.view %s : %s -> %s" % (x, x.type, out))

    def rmsnorm(self, x, weight, eps=1e-6, name=None):
        """weight: a param symbol, a value, or None (a norm without a scale)."""
        if weight is None:
            return self._op(name or "norm", x.type, "tx.rmsnorm %s eps %s : %s -> %s"
                            % (x, _float(eps), x.type, x.type))
        w = self.get_param(weight) if isinstance(weight, Symbol) else weight
        return self._op(name or "norm", x.type,
                        "tx.rmsnorm %s, %s eps %s : %s, %s -> %s" %
                        (x, w, _float(eps), x.type, w.type, x.type))

    def add_rmsnorm(self, x, residual, weight, eps=1e-6, name=None):
        """Returns (normed, residual_out)."""
        w = self.get_param(weight) if isinstance(weight, Symbol) else weight
        normed = Value(self._fresh(name or "norm"), x.type)
        res = Value(self._fresh((name or "norm") + "_residual"), x.type)
        self._emit("%s, %s = tx.add_rmsnorm %s, %s, %s eps %s : %s, %s, %s -> "
                   "%s, %s" % (normed, res, x, residual, w, _float(eps),
                               x.type, residual.type, w.type, x.type, x.type))
        return normed, res

    def rotary(self, x, cos, sin, interleaved=False, name=None):
        """interleaved: pairs (2i, 2i+1) (GPT-J, Cohere), else the halves
        (NeoX); cos/sin [tokens, head_dim / 2] either way."""
        return self._op(name or "rot", x.type,
                        "tx.rotary %s, %s, %s%s : %s, %s, %s -> %s" %
                        (x, cos, sin, " interleaved" if interleaved else "",
                         x.type, cos.type, sin.type, x.type))

    def attention(self, q, k, v, scale, causal=False, window=None, softcap=None,
                  name=None):
        """window: a sliding window (key s visible to query t when t - s <
        window; needs causal); softcap: Gemma 2's c * tanh(score / c). The
        result has v's head_dim (MLA's differs from q's and k's)."""
        attrs = " causal" if causal else ""
        if window is not None:
            attrs += " window %d" % int(window)
        if softcap is not None:
            attrs += " softcap %s" % _float(softcap)
        # [tokens, q_heads, v_head_dim]: v's head_dim may differ (MLA).
        out = q.type.with_last(v.type.shape[-1])
        return self._op(name or "attn", out,
                        "tx.attention %s, %s, %s scale %s%s : %s, %s, %s -> %s"
                        % (q, k, v, _float(scale), attrs, q.type, k.type, v.type, out))

    def unary(self, kind, x, name=None):
        """kind: silu, gelu, gelu_tanh, relu, neg, exp, tanh, sigmoid."""
        return self._op(name or kind, x.type, "tx.unary %s %s : %s -> %s" %
                        (kind, x, x.type, x.type))

    def binary(self, kind, a, b, name=None):
        """kind: add, sub, mul, div, max, min."""
        return self._op(name or kind, a.type, "tx.binary %s %s, %s : %s, %s -> %s"
                        % (kind, a, b, a.type, b.type, a.type))

    def silu(self, x, name=None):
        return self.unary("silu", x, name)

    def add(self, a, b, name=None):
        return self.binary("add", a, b, name)

    def mul(self, a, b, name=None):
        return self.binary("mul", a, b, name)

    # -- control flow ---------------------------------------------------------
    @contextlib.contextmanager
    def if_(self, cond, name="if"):
        """`with f.if_(c) as br:` then `with br.then_(): ... br.yield_(v)`
        and `with br.else_(): ...`; afterwards br.results holds the values."""
        branch = _IfBuilder(self, cond, name)
        yield branch
        for line in branch._finish():
            self._emit(line)

    def ret(self, *values):
        if self._results is not None:
            raise ValueError("@%s already returned" % self.name)
        self._results = list(values)
        if values:
            self._emit("return %s : %s" % (", ".join(map(str, values)),
                                           ", ".join(str(v.type)
                                                     for v in values)))
        else:
            self._emit("return")

    def _text(self):
        if self._results is None:
            raise ValueError("@%s has no ret()" % self.name)
        args = ", ".join("%s: %s" % (a, a.type) for a in self._args)
        results = ", ".join(str(v.type) for v in self._results)
        head = "func.func @%s(%s)%s {" % (self.name, args, " -> (%s)" %
                                          results if results else "")
        return [head] + ["  " + l for l in self._regions[0].lines] + ["}"]


class ModuleBuilder:
    """Module-level declarations (layers, parameters) and functions."""

    def __init__(self, tp_size=1):
        self._decls = []
        self._layers = {}
        self._symbols = set()
        self._functions = []
        self.tp_size = tp_size

    def _declare(self, name):
        if name in self._symbols:
            raise ValueError("symbol @%s declared twice" % name)
        self._symbols.add(name)

    def layer(self, name, in_features, out_features, dtype="f32", bias=False,
              checkpoint=None):
        """self.<name> = nn.Linear(in_features, out_features, bias)."""
        self._declare(name)
        self._layers[name] = (in_features, out_features)
        attrs = ' {checkpoint = "%s"}' % checkpoint if checkpoint else ""
        self._decls.append("tx.layer @%s : %d -> %d, %s%s%s" %
                           (name, in_features, out_features, dtype,
                            " bias" if bias else "", attrs))
        return Symbol(name, "layer")

    def none_layer(self, name):
        """self.<name> = None."""
        self._declare(name)
        self._decls.append("tx.none_layer @%s" % name)
        return Symbol(name, "none_layer")

    def param(self, name, shape, dtype="f32", checkpoint=None):
        self._declare(name)
        symbol = Symbol(name, "param")
        symbol.type = MemRefType(shape, dtype)
        attrs = ' {checkpoint = "%s"}' % checkpoint if checkpoint else ""
        self._decls.append("tx.param @%s : %s%s" % (name, symbol.type, attrs))
        return symbol

    @contextlib.contextmanager
    def function(self, name, **args):
        """Arguments in order, as name=type (a MemRefType or an MLIR type
        string such as "i1" or "!tx.container")."""
        self._declare(name)
        fn = FunctionBuilder(self, name, args)
        yield fn
        self._functions.append(fn)

    def text(self):
        lines = ["module attributes {tx.config = #tx.config<tp_size = %d>} {"
                 % self.tp_size]
        lines += ["  " + d for d in self._decls]
        for fn in self._functions:
            lines += ["  " + l for l in fn._text()]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def build(self, context=None):
        """The module, parsed and verified (TxError when it is invalid)."""
        return Module.parse(self.text(), source_name="<tx.ModuleBuilder>",
                            context=context)

"""Whether a file's own helper computes what tx puts in its place.

A file's own `eager_attention_forward` is replaced by tx.attention and its
own `repeat_kv` by tx's grouped key/value heads (table.FUNCTIONS), by name:
neither body is translated. So before the import trusts the name, the
helper's body is run here, on small pseudo-random numbers (a fixed seed),
by a small interpreter of its Python (rotary_check.Evaluator's statements
and calls; the values here are tensors of floats, `T`), and its result is
compared with what tx computes in its place, in double precision:

- eager_attention_forward(module, q, k, v, mask, scaling, ...) with the
  call's own arguments (the module itself: its attributes and config as the
  import knows them; scaling, dropout, softcap, sliding_window as passed or
  defaulted by the file's signature; the mask the causal mask, with the
  window where one is passed, as HF's model builds it, or None): its first
  result must be tx.attention's [batch, tokens, heads, v_head_dim]
  (softmax(cap(q k^T * scale) + mask) v, query head h reading key/value
  head h // (heads / kv_heads)), its second anything (tx gives None);
- repeat_kv(x, n_rep): x [batch, kv_heads, tokens, head_dim] with each head
  repeated n_rep times in place (head j of the result is head j // n_rep),
  also where eager_attention_forward calls it;
- a class Conv1D of the file (table.MODULES takes it as transformers'
  Conv1D(nf, nx)): its __init__ and forward run, the parameters `weight`
  [nx, nf] and `bias` [nf] only, forward x @ weight + bias.

The sizes are the call's own (heads, head_dim, the number of key/value
heads, the module's attributes), the tokens two small numbers that differ
from every other size (a transpose or a swapped dimension changes the
shape). What the interpreter cannot run (a call it does not know, a module
attribute that is a parameter, a branch on a tensor) is an error naming its
line: never a helper assumed right."""
import ast
import math
import os
import random

from . import rotary_check as rc
from . import table
from . import values as V
from .errors import FrontendError
from .rotary_check import NotRotary as Stop

F32_MIN = -3.4028234663852886e38
TOLERANCE = 1e-9


# -- tensors ------------------------------------------------------------------------
def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


class T:
    """A tensor of floats: `data` a flat list, seen through `shape`,
    `strides` and `offset` (views, transposes and expands share data)."""

    def __init__(self, data, shape, strides=None, offset=0):
        self.data, self.shape = data, tuple(shape)
        self.strides = tuple(strides) if strides is not None else \
            _contiguous_strides(self.shape)
        self.offset = offset

    @property
    def ndim(self):
        return len(self.shape)

    def offsets(self):
        out = [self.offset]
        for n, s in zip(self.shape, self.strides):
            out = [o + i * s for o in out for i in range(n)]
        return out

    def values(self):
        """The elements in row-major order."""
        data = self.data
        return [data[o] for o in self.offsets()]

    def copy(self):
        return T(self.values(), self.shape)

    def is_contiguous(self):
        expect = 1
        for n, s in reversed(list(zip(self.shape, self.strides))):
            if n != 1 and s != expect:
                return False
            expect *= n
        return True

    def __repr__(self):
        return "tensor of shape %s" % _fmt_shape(self.shape)


def _fmt_shape(shape):
    return "[%s]" % ", ".join(str(s) for s in shape)


class Obj:
    """An object of the import (the module, its config) as the probe reads
    it: `path` the way from a helper argument (what the cache compares)."""

    def __init__(self, host, path):
        self.host, self.path = host, path


class Unknown:
    """A value the probe has no numbers for: any use is an error."""

    def __init__(self, what):
        self.what = what


class Identity:
    """nn.Dropout / nn.Identity of the module (eval mode): calling it gives
    its argument."""


class SoftmaxFn:
    def __init__(self, dim):
        self.dim = dim


class FInfo:
    min, max, eps = F32_MIN, -F32_MIN, 1.1920928955078125e-07


class MaxResult(tuple):
    """torch.max(x, dim)'s (values, indices)."""

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


def _dim(d, ndim, node, extra=0):
    return rc._norm_dim(d, ndim + extra, node)


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def permute(t, dims):
    return T(t.data, [t.shape[d] for d in dims], [t.strides[d] for d in dims], t.offset)


def transpose(t, a, b, node):
    a, b = _dim(a, t.ndim, node), _dim(b, t.ndim, node)
    dims = list(range(t.ndim))
    dims[a], dims[b] = dims[b], dims[a]
    return permute(t, dims)


def unsqueeze(t, d, node):
    d = _dim(d, t.ndim, node, 1)
    shape, strides = list(t.shape), list(t.strides)
    shape.insert(d, 1)
    strides.insert(d, 0)
    return T(t.data, shape, strides, t.offset)


def squeeze(t, d, node):
    if d is None:
        keep = [i for i, n in enumerate(t.shape) if n != 1]
    else:
        ds = d if isinstance(d, (tuple, list)) else (d,)
        drop = {_dim(x, t.ndim, node) for x in ds}
        keep = [i for i in range(t.ndim) if not (i in drop and t.shape[i] == 1)]
    return T(t.data, [t.shape[i] for i in keep], [t.strides[i] for i in keep], t.offset)


def broadcast_shapes(a, b, node):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise Stop("tensors of shapes %s and %s that do not broadcast (PyTorch "
                       "fails)" % (_fmt_shape(a), _fmt_shape(b)), node)
        out.append(y if x == 1 else x)
    return tuple(out)


def expand_to(t, shape, node):
    """t broadcast to `shape` (a view: stride 0 along new or size-1 dims)."""
    n = len(shape)
    if t.ndim > n:
        raise Stop("an expand of a %d-dimensional tensor to %d dimensions"
                   % (t.ndim, n), node)
    lead = n - t.ndim
    strides = [0] * lead
    for i, (have, s) in enumerate(zip(t.shape, t.strides)):
        want = shape[lead + i]
        if have == want:
            strides.append(s)
        elif have == 1:
            strides.append(0)
        else:
            raise Stop("an expand of size %d to %d (PyTorch fails)" % (have, want), node)
    return T(t.data, shape, strides, t.offset)


def elementwise(f, a, b, node):
    if not isinstance(a, T):
        bv = b.values()
        return T([f(a, y) for y in bv], b.shape)
    if not isinstance(b, T):
        return T([f(x, b) for x in a.values()], a.shape)
    shape = broadcast_shapes(a.shape, b.shape, node)
    av, bv = expand_to(a, shape, node).values(), expand_to(b, shape, node).values()
    return T([f(x, y) for x, y in zip(av, bv)], shape)


def unary(f, t):
    return T([f(x) for x in t.values()], t.shape)


def _div(x, y):
    if y == 0:
        if x == 0 or x != x:
            return float("nan")
        return math.copysign(float("inf"), x) * math.copysign(1.0, y)
    return x / y


def _pow(x, y):
    try:
        return float(x) ** y
    except (OverflowError, ZeroDivisionError):
        return float("inf")


def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return float("inf")


def matmul(a, b, node, batched=False):
    if not isinstance(a, T) or not isinstance(b, T):
        raise Stop("a matmul of something other than tensors", node)
    if batched and (a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]):
        raise Stop("torch.bmm of shapes %s and %s (PyTorch fails)"
                   % (_fmt_shape(a.shape), _fmt_shape(b.shape)), node)
    squeeze_a = squeeze_b = False
    if a.ndim == 1:
        a, squeeze_a = unsqueeze(a, 0, node), True
    if b.ndim == 1:
        b, squeeze_b = unsqueeze(b, -1, node), True
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise Stop("a matmul of shapes %s and %s (PyTorch fails)"
                   % (_fmt_shape(a.shape), _fmt_shape(b.shape)), node)
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], node)
    av = expand_to(a, batch + (m, k), node).values()
    bv = expand_to(b, batch + (k, n), node).values()
    out = []
    for i in range(_numel(batch)):
        ab, bb = av[i * m * k:(i + 1) * m * k], bv[i * k * n:(i + 1) * k * n]
        cols = [bb[j::n] for j in range(n)]
        for r in range(m):
            row = ab[r * k:(r + 1) * k]
            out.extend(math.fsum(x * y for x, y in zip(row, c)) for c in cols)
    shape = batch + (m, n)
    t = T(out, shape)
    if squeeze_b:
        t = squeeze(t, -1, node)
    if squeeze_a:
        t = squeeze(t, -2 if not squeeze_b else -1, node)
    return t


def rows_apply(t, dim, f, node, keepdim=True):
    """f on each row along `dim` (a list -> a list of the same length, or
    one number when reducing)."""
    d = _dim(dim, t.ndim, node)
    order = [i for i in range(t.ndim) if i != d] + [d]
    moved = permute(t, order)
    n = t.shape[d]
    vals = moved.values()
    rows = [vals[i:i + n] for i in range(0, len(vals), n)] if n else []
    out = [f(r) for r in rows]
    lead = [t.shape[i] for i in order[:-1]]
    if out and isinstance(out[0], list):
        flat = [x for r in out for x in r]
        width = len(out[0])
        res = T(flat, lead + [width])
        back = [0] * t.ndim
        for pos, i in enumerate(order):
            back[i] = pos
        return permute(res, back)
    res = T(out, lead)
    return unsqueeze(res, d, node) if keepdim else res


def _softmax_row(r):
    m = max(r)
    if m == float("-inf"):
        return [float("nan")] * len(r)
    e = [_exp(x - m) for x in r]
    s = math.fsum(e)
    return [x / s for x in e]


def view_strides(t, shape):
    """PyTorch's computeStride: the strides of t viewed as `shape`, or None
    when the view is impossible (its memory does not allow it)."""
    old_shape, old_strides = t.shape, t.strides
    if _numel(old_shape) == 0:
        return _contiguous_strides(shape)
    new_strides = [0] * len(shape)
    view_d = len(shape) - 1
    chunk_base_stride = old_strides[-1] if old_strides else 1
    tensor_numel, view_numel = 1, 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel, view_numel = 1, 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def _sizes(args, node, what):
    sizes = list(args)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = list(sizes[0])
    if not all(_is_int(s) for s in sizes):
        raise Stop("%s to sizes that are not numbers" % what, node)
    return sizes


def reshape(t, args, node, view=False):
    what = "view" if view else "reshape"
    sizes = _sizes(args, node, what)
    total = _numel(t.shape)
    if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
        raise Stop("a %s to sizes %s" % (what, sizes), node)
    if -1 in sizes:
        known = _numel([s for s in sizes if s != -1])
        if known == 0 or total % known:
            raise Stop("a %s of %s to %s (PyTorch fails)"
                       % (what, _fmt_shape(t.shape), sizes), node)
        sizes = [total // known if s == -1 else s for s in sizes]
    if _numel(sizes) != total:
        raise Stop("a %s of %s to %s (PyTorch fails)" % (what, _fmt_shape(t.shape), sizes),
                   node)
    strides = view_strides(t, sizes)
    if strides is None:
        if view:
            raise Stop("a view of a tensor whose memory does not allow it (a transposed "
                       "tensor: PyTorch's view fails; reshape copies)", node)
        return T(t.values(), sizes)
    return T(t.data, sizes, strides, t.offset)


def expand(t, args, node):
    sizes = _sizes(args, node, "expand")
    lead = len(sizes) - t.ndim
    if lead < 0:
        raise Stop("an expand to fewer dimensions (PyTorch fails)", node)
    shape = [t.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes)]
    if any(s < 0 for s in shape):
        raise Stop("an expand with -1 for a new dimension (PyTorch fails)", node)
    return expand_to(t, tuple(shape), node)


def repeat(t, args, node):
    reps = _sizes(args, node, "repeat")
    if len(reps) < t.ndim:
        raise Stop("a repeat with fewer sizes than dimensions (PyTorch fails)", node)
    lead = len(reps) - t.ndim
    src = T(t.data, (1,) * lead + t.shape, (0,) * lead + t.strides, t.offset)
    shape = [n * r for n, r in zip(src.shape, reps)]
    out = []
    offsets = [src.offset]
    for n, s, size in zip(src.shape, src.strides, shape):
        offsets = [o + (i % n) * s for o in offsets for i in range(size)]
    out = [src.data[o] for o in offsets]
    return T(out, shape)


def repeat_interleave(t, repeats, dim, node):
    if not _is_int(repeats) or repeats < 0:
        raise Stop("repeat_interleave by something other than a number", node)
    if dim is None:
        t, dim = T(t.values(), [_numel(t.shape)]), 0
    d = _dim(dim, t.ndim, node)
    shape = list(t.shape)
    shape[d] *= repeats
    offsets = [t.offset]
    for i, (n, s) in enumerate(zip(t.shape, t.strides)):
        idx = [j // repeats for j in range(n * repeats)] if i == d else range(n)
        offsets = [o + j * s for o in offsets for j in idx]
    return T([t.data[o] for o in offsets], shape)


def cat(ts, dim, node, stack=False):
    if not isinstance(ts, (tuple, list)) or not ts or not all(isinstance(x, T) for x in ts):
        raise Stop("torch.%s of something other than tensors" % ("stack" if stack else "cat"),
                   node)
    if stack:
        d = _dim(dim, ts[0].ndim, node, 1)
        ts = [unsqueeze(x, d, node) for x in ts]
    d = _dim(dim, ts[0].ndim, node)
    for x in ts:
        if x.ndim != ts[0].ndim or any(a != b for i, (a, b) in
                                       enumerate(zip(x.shape, ts[0].shape)) if i != d):
            raise Stop("torch.cat of tensors of other shapes (PyTorch fails)", node)
    moved = [permute(x, [d] + [i for i in range(x.ndim) if i != d]) for x in ts]
    data = [v for x in moved for v in x.values()]
    shape = list(moved[0].shape)
    shape[0] = sum(x.shape[d] for x in ts)
    res = T(data, shape)
    back = list(range(1, ts[0].ndim))
    back.insert(d, 0)
    return permute(res, back)


def index(t, items, node):
    """Basic indexing: integers, slices (positive steps), None, Ellipsis."""
    if not isinstance(items, tuple):
        items = (items,)
    consuming = [x for x in items if x is not None and x is not Ellipsis]
    if sum(1 for x in items if x is Ellipsis) > 1 or len(consuming) > t.ndim:
        raise Stop("an index of %d dimensions of a %d-dimensional tensor"
                   % (len(consuming), t.ndim), node)
    items = list(items)
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (t.ndim - len(consuming))
    else:
        items += [slice(None)] * (t.ndim - len(consuming))
    shape, strides, offset, d = [], [], t.offset, 0
    for x in items:
        if x is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = t.shape[d], t.strides[d]
        if isinstance(x, slice):
            if not all(v is None or _is_int(v) for v in (x.start, x.stop, x.step)):
                raise Stop("a slice with bounds that are not numbers", node)
            if x.step is not None and x.step <= 0:
                raise Stop("a slice with a step that is not positive (PyTorch fails)", node)
            start, stop, step = x.indices(n)
            count = max(0, -(-(stop - start) // step))
            offset += start * s
            shape.append(count)
            strides.append(s * step)
        elif _is_int(x):
            if not -n <= x < n:
                raise Stop("an index %d of a dimension of size %d (PyTorch fails)" % (x, n),
                           node)
            offset += (x % n) * s
        else:
            raise Stop("an index by %s (only numbers, slices, None and ...)"
                       % _describe(x), node)
        d += 1
    return T(t.data, shape, strides, offset)


def _describe(v):
    if isinstance(v, T):
        return "a tensor"
    if isinstance(v, Unknown):
        return v.what
    if isinstance(v, Obj):
        return "a module" if isinstance(v.host, V.Instance) else "the config"
    return type(v).__name__


# -- the interpreter ------------------------------------------------------------
IDENTITY_METHODS = ("float", "half", "bfloat16", "double", "to", "type", "type_as", "detach",
                    "clone", "requires_grad_", "cpu", "cuda")
UNARY = {"tanh": math.tanh, "exp": _exp, "neg": lambda x: -x, "negative": lambda x: -x,
         "sqrt": lambda x: math.sqrt(x) if x >= 0 else float("nan"),
         "rsqrt": lambda x: 1 / math.sqrt(x) if x > 0 else (float("inf") if x == 0
                                                              else float("nan")),
         "abs": abs, "square": lambda x: x * x}
BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y,
          "subtract": lambda x, y: x - y, "mul": lambda x, y: x * y,
          "multiply": lambda x, y: x * y, "div": _div, "divide": _div, "true_divide": _div,
          "pow": _pow}


class TokenCount(int):
    """The token count of a probe (and what is computed from it): the check
    runs at two token counts and the import holds for all, so a body that
    compares it or branches on it is not checked (Probe.compare, truth, min
    and max stop there); sizes, views and slices take it as an int."""

    def _same(self, v):
        return TokenCount(v) if isinstance(v, int) and not isinstance(v, bool) else v

    def __add__(self, o): return self._same(int.__add__(self, o))
    def __radd__(self, o): return self._same(int.__radd__(self, o))
    def __sub__(self, o): return self._same(int.__sub__(self, o))
    def __rsub__(self, o): return self._same(int.__rsub__(self, o))
    def __mul__(self, o): return self._same(int.__mul__(self, o))
    def __rmul__(self, o): return self._same(int.__rmul__(self, o))
    def __floordiv__(self, o): return self._same(int.__floordiv__(self, o))
    def __rfloordiv__(self, o): return self._same(int.__rfloordiv__(self, o))
    def __mod__(self, o): return self._same(int.__mod__(self, o))
    def __rmod__(self, o): return self._same(int.__rmod__(self, o))
    def __neg__(self): return TokenCount(-int(self))


def _has_tokens(v):
    if isinstance(v, TokenCount):
        return True
    return isinstance(v, (tuple, list)) and any(_has_tokens(x) for x in v)


class Probe(rc.Evaluator):
    """Runs a function of the file on T tensors and Python values.
    `attribute(obj, name, node)` reads an attribute of an Obj (the caller's
    module, its config); `on_return(fn, args, kwargs, result, node)` is told
    of each file function's result (the repeat_kv inside attention)."""

    def __init__(self, src, attribute, on_return=None):
        super().__init__(src)
        self.attribute_of = attribute
        self.on_return = on_return
        self.names_read = []  # (name, line): what the window check looks at

    # -- expressions -------------------------------------------------------------
    def eval(self, e, env):
        if isinstance(e, ast.Name):
            self.names_read.append((e.id, e.lineno))
            return super().eval(e, env)
        if isinstance(e, ast.Attribute):
            self.names_read.append((e.attr, e.lineno))
            return self.attribute(self.eval(e.value, env), e.attr, e)
        if isinstance(e, ast.Subscript):
            base = self.eval(e.value, env)
            key = self.subscript_key(e.slice, env)
            return self.subscript(base, key, e)
        if isinstance(e, ast.UnaryOp):
            v = self.eval(e.operand, env)
            if isinstance(e.op, ast.USub):
                if isinstance(v, T):
                    return unary(lambda x: -x, v)
                return -self.number(v, e)
            if isinstance(e.op, ast.UAdd):
                return v
            if isinstance(e.op, ast.Not):
                return not self.truth(v, e)
            raise Stop("the operator '%s'" % type(e.op).__name__, e)
        if isinstance(e, ast.BoolOp):
            is_and = isinstance(e.op, ast.And)
            v = None
            for x in e.values:
                v = self.eval(x, env)
                if self.truth(v, x) != is_and:
                    return v
            return v
        if isinstance(e, ast.Compare):
            left = self.eval(e.left, env)
            for op, right_node in zip(e.ops, e.comparators):
                right = self.eval(right_node, env)
                if not self.compare(op, left, right, e):
                    return False
                left = right
            return True
        if isinstance(e, ast.IfExp):
            return self.eval(e.body if self.truth(self.eval(e.test, env), e) else e.orelse,
                             env)
        if isinstance(e, ast.Call) and any(isinstance(a, ast.Starred) for a in e.args):
            func = self.eval(e.func, env)
            args = []
            for a in e.args:
                if isinstance(a, ast.Starred):
                    v = self.eval(a.value, env)
                    if not isinstance(v, (tuple, list)):
                        raise Stop("*%s" % _describe(v), a)
                    args.extend(v)
                else:
                    args.append(self.eval(a, env))
            kwargs = {kw.arg: self.eval(kw.value, env) for kw in e.keywords
                      if kw.arg is not None}
            if any(kw.arg is None for kw in e.keywords):
                raise Stop("**arguments", e)
            return self.call(func, args, kwargs, e)
        if isinstance(e, ast.JoinedStr):
            raise Stop("an f-string", e)
        return super().eval(e, env)

    def truth(self, v, node):
        if isinstance(v, (T, Unknown, Obj)) or isinstance(v, rc._Opaque):
            raise Stop("a condition on %s" % _describe(v), node)
        if _has_tokens(v):
            raise Stop("a condition on the token count", node)
        return bool(v)

    def compare(self, op, a, b, node):
        if not isinstance(op, (ast.Is, ast.IsNot)) and (_has_tokens(a) or _has_tokens(b)):
            raise Stop("a comparison of the token count (checked at two token counts, "
                       "the import holds for all)", node)
        if isinstance(op, ast.Is):
            return a is b
        if isinstance(op, ast.IsNot):
            return a is not b
        if isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(b, (tuple, list, dict, str)) or isinstance(a, (T, Unknown)):
                raise Stop("'in' of %s" % _describe(b), node)
            return (a in b) == isinstance(op, ast.In)
        for v in (a, b):
            if isinstance(v, (T, Unknown, Obj, rc._Opaque)):
                raise Stop("a comparison of %s" % _describe(v), node)
        ops = {ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y,
               ast.Lt: lambda x, y: x < y, ast.LtE: lambda x, y: x <= y,
               ast.Gt: lambda x, y: x > y, ast.GtE: lambda x, y: x >= y}
        try:
            return ops[type(op)](a, b)
        except TypeError:
            raise Stop("a comparison of %s and %s" % (_describe(a), _describe(b)), node)

    def subscript_key(self, sl, env):
        if isinstance(sl, ast.Slice):
            return slice(*(self.eval(x, env) if x is not None else None
                           for x in (sl.lower, sl.upper, sl.step)))
        if isinstance(sl, ast.Tuple):
            return tuple(self.subscript_key(x, env) for x in sl.elts)
        return self.eval(sl, env)

    def subscript(self, base, key, node):
        if isinstance(base, T):
            return index(base, key, node)
        if isinstance(base, (tuple, list, str)):
            if not (_is_int(key) or isinstance(key, slice)):
                raise Stop("an index of a sequence by %s" % _describe(key), node)
            try:
                return base[key]
            except IndexError:
                raise Stop("an index out of range", node)
        if isinstance(base, dict):
            if key not in base:
                raise Stop("the key %r, which the call does not pass" % (key,), node)
            return base[key]
        raise Stop("a subscript of %s" % _describe(base), node)

    def attribute(self, base, name, node):
        if isinstance(base, rc._Dotted):
            return rc._Dotted(base.name + "." + name)
        if isinstance(base, T):
            if name == "shape":
                return tuple(base.shape)
            if name == "ndim":
                return base.ndim
            if name in ("dtype", "device"):
                return rc._Opaque()
            if name == "mT":
                return transpose(base, -2, -1, node)
            if name == "T" and base.ndim == 2:
                return transpose(base, 0, 1, node)
            return rc._Method(base, name)
        if isinstance(base, Obj):
            return self.attribute_of(base, name, node)
        if isinstance(base, dict):
            if name in ("get", "items", "keys", "values", "pop"):
                return rc._Method(base, name)
        if isinstance(base, FInfo) and name in ("min", "max", "eps"):
            return getattr(base, name)
        if isinstance(base, MaxResult) and name in ("values", "indices"):
            return getattr(base, name)
        if isinstance(base, Unknown):
            raise Stop(base.what, node)
        raise Stop("the attribute '%s' of %s" % (name, _describe(base)), node)

    def number(self, v, node):
        if isinstance(v, Unknown):
            raise Stop(v.what, node)
        return super().number(v, node)

    def binop(self, op, a, b, node):
        for v in (a, b):
            if isinstance(v, Unknown):
                raise Stop(v.what, node)
        if isinstance(op, ast.MatMult):
            return matmul(a, b, node)
        if isinstance(a, T) or isinstance(b, T):
            other = b if isinstance(a, T) else a
            if not isinstance(other, T) and not _is_num(other):
                raise Stop("arithmetic of a tensor and %s" % _describe(other), node)
            fns = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y,
                   ast.Mult: lambda x, y: x * y, ast.Div: _div, ast.Pow: _pow}
            if type(op) not in fns:
                raise Stop("the operator '%s' on a tensor" % type(op).__name__, node)
            return elementwise(fns[type(op)], a, b, node)
        if isinstance(a, (tuple, list)) and isinstance(b, type(a)) and isinstance(op, ast.Add):
            return a + b
        if isinstance(a, (tuple, list)) and _is_int(b) and isinstance(op, ast.Mult):
            return a * b
        a, b = self.number(a, node), self.number(b, node)
        try:
            return super().binop(op, a, b, node)
        except (ZeroDivisionError, OverflowError, ValueError):
            raise Stop("arithmetic that fails in Python", node)

    # -- statements ---------------------------------------------------------------
    def run(self, body, env):
        for s in body:
            if isinstance(s, ast.If):
                test = self.eval(s.test, env)
                self.run(s.body if self.truth(test, s) else s.orelse, env)
            elif isinstance(s, ast.Assert):
                if not self.truth(self.eval(s.test, env), s):
                    raise Stop("an assertion that fails", s)
            elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Subscript):
                raise Stop("an assignment into a tensor", s)
            else:
                super().run([s], env)

    def assign(self, target, value, env):
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, T):
            if value.ndim == 0 or value.shape[0] != len(target.elts):
                raise Stop("an unpacking of a tensor", target)
            value = [index(value, i, target) for i in range(value.shape[0])]
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            raise Stop("an assignment to '%s'" % type(target).__name__, target)
        super().assign(target, value, env)

    # -- calls ----------------------------------------------------------------------
    def call(self, func, args, kwargs, node):
        for v in list(args) + list(kwargs.values()):
            if isinstance(v, Unknown):
                raise Stop(v.what, node)
        if isinstance(func, ast.FunctionDef):
            result = self.call_function(func, args, kwargs, node)
            if self.on_return is not None:
                self.on_return(func, args, kwargs, result, node)
            return result
        if isinstance(func, rc._Method):
            obj = func.obj
            if isinstance(obj, T):
                return self.tensor_method(obj, func.name, args, kwargs, node)
            if isinstance(obj, dict):
                if func.name == "get":
                    a = rc._bind(["key", "default"], {"default": None}, args, kwargs, node,
                                 "dict.get")
                    if isinstance(a["key"], str):
                        self.names_read.append((a["key"], node.lineno))
                    return obj.get(a["key"], a["default"])
                if func.name in ("items", "keys", "values") and not args and not kwargs:
                    return list(getattr(obj, func.name)())
                raise Stop("dict.%s()" % func.name, node)
        if isinstance(func, Identity):
            return rc._bind(["input"], {}, args, kwargs, node, "nn.Dropout")["input"]
        if isinstance(func, SoftmaxFn):
            x = rc._bind(["input"], {}, args, kwargs, node, "nn.Softmax")["input"]
            return self.softmax(x, func.dim, node)
        if isinstance(func, rc._Dotted):
            return self.call_named(func.name, args, kwargs, node)
        raise Stop("a call of %s" % _describe(func), node)

    def call_named(self, name, args, kwargs, node):
        head, _, fn = name.rpartition(".")
        if name in ("builtins.int", "int", "float", "bool", "abs", "round"):
            f = {"int": int, "float": float, "bool": bool, "abs": abs,
                 "round": round}[name.rpartition(".")[2]]
            if len(args) != 1 or kwargs or not isinstance(args[0], (int, float, bool)):
                raise Stop("%s() of %s" % (fn, _describe(args[0] if args else None)), node)
            return f(args[0])
        if name in ("builtins.min", "builtins.max", "builtins.len"):
            if name != "builtins.len" and _has_tokens(list(args)):
                raise Stop("%s() of the token count" % fn, node)
            if name == "builtins.len" and len(args) == 1 and isinstance(args[0], T):
                if args[0].ndim == 0:
                    raise Stop("len() of a 0-d tensor (PyTorch fails)", node)
                return args[0].shape[0]
            return rc.Evaluator.call(self, rc._Dotted(name), args, kwargs, node)
        if name == "getattr" and len(args) in (2, 3) and not kwargs and \
                isinstance(args[0], Obj) and isinstance(args[1], str):
            try:
                return self.attribute_of(args[0], args[1], node)
            except Stop:
                if len(args) == 3 and not self.attribute_of.missing(args[0], args[1]):
                    raise
                if len(args) == 3:
                    return args[2]
                raise
        if name == "isinstance":
            raise Stop("isinstance()", node)
        if head == "math" and hasattr(math, fn) and fn not in ("fsum",):
            vals = [self.number(a, node) for a in args]
            if kwargs:
                raise Stop("math.%s with keywords" % fn, node)
            try:
                return getattr(math, fn)(*vals)
            except (TypeError, ValueError, OverflowError):
                raise Stop("math.%s() that fails in Python" % fn, node)
        for prefix in ("torch.nn.functional.", "torch.", "torch.special."):
            if name.startswith(prefix) and name[len(prefix):] in TORCH:
                return TORCH[name[len(prefix):]](self, args, kwargs, node, name)
        raise Stop("%s()" % name, node)

    def tensor_method(self, t, name, args, kwargs, node):
        if name in IDENTITY_METHODS:
            for a in args:
                if isinstance(a, T) and name != "type_as":
                    raise Stop("%s() of a tensor" % name, node)
            if kwargs.get("copy") or kwargs.get("memory_format") is not None:
                raise Stop("%s() with a copy or a memory format" % name, node)
            return t
        if name == "contiguous":
            if args or kwargs:
                raise Stop("contiguous() with a memory format", node)
            return t if t.is_contiguous() else t.copy()
        if name == "size":
            if not args and not kwargs:
                return tuple(t.shape)
            d = rc._bind(["dim"], {}, args, kwargs, node, "size")["dim"]
            return t.shape[_dim(d, t.ndim, node)]
        if name == "dim" and not args and not kwargs:
            return t.ndim
        if name == "numel" and not args and not kwargs:
            return _numel(t.shape)
        if name == "item" and not args and not kwargs:
            if _numel(t.shape) != 1:
                raise Stop("item() of a tensor of more than one element (PyTorch fails)",
                           node)
            return t.values()[0]
        if name in ("view", "reshape"):
            return reshape(t, args, node, view=name == "view") if not kwargs else \
                self._fail("%s with keywords" % name, node)
        if name == "expand":
            return expand(t, args, node) if not kwargs else self._fail("expand=", node)
        if name == "expand_as":
            other = rc._bind(["other"], {}, args, kwargs, node, "expand_as")["other"]
            return expand_to(t, other.shape, node)
        if name == "view_as" or name == "reshape_as":
            other = rc._bind(["other"], {}, args, kwargs, node, name)["other"]
            return reshape(t, [other.shape], node, view=name == "view_as")
        if name == "repeat":
            return repeat(t, args, node) if not kwargs else self._fail("repeat=", node)
        if name == "permute":
            dims = _sizes(args, node, "permute")
            if kwargs or sorted(_dim(d, t.ndim, node) for d in dims) != list(range(t.ndim)):
                raise Stop("a permute that is not of every dimension once", node)
            return permute(t, [_dim(d, t.ndim, node) for d in dims])
        if name == "t" and not args and not kwargs and t.ndim <= 2:
            return transpose(t, 0, -1, node) if t.ndim == 2 else t
        if name in TORCH:
            return TORCH[name](self, [t] + list(args), kwargs, node, "Tensor." + name)
        raise Stop("%s()" % name, node)

    def _fail(self, what, node):
        raise Stop(what, node)

    def softmax(self, x, dim, node):
        if not isinstance(x, T):
            raise Stop("softmax of %s" % _describe(x), node)
        if dim is None:
            raise Stop("softmax without dim (PyTorch picks one)", node)
        return rows_apply(x, dim, _softmax_row, node)


# torch functions (and the tensor methods of the same name): (probe, args,
# kwargs, node, name) -> value.
def _tensor_arg(v, node, what):
    if not isinstance(v, T):
        raise Stop("%s of %s" % (what, _describe(v)), node)
    return v


def _t_matmul(p, args, kwargs, node, name):
    a = rc._bind(["input", "other"], {}, args, kwargs, node, name)
    return matmul(a["input"], a["other"], node)


def _t_bmm(p, args, kwargs, node, name):
    a = rc._bind(["input", "mat2"], {}, args, kwargs, node, name)
    return matmul(a["input"], a["mat2"], node, batched=True)


def _t_transpose(p, args, kwargs, node, name):
    a = rc._bind(["input", "dim0", "dim1"], {}, args, kwargs, node, name)
    return transpose(_tensor_arg(a["input"], node, name), a["dim0"], a["dim1"], node)


def _t_unsqueeze(p, args, kwargs, node, name):
    a = rc._bind(["input", "dim"], {}, args, kwargs, node, name)
    return unsqueeze(_tensor_arg(a["input"], node, name), a["dim"], node)


def _t_squeeze(p, args, kwargs, node, name):
    a = rc._bind(["input", "dim"], {"dim": None}, args, kwargs, node, name)
    return squeeze(_tensor_arg(a["input"], node, name), a["dim"], node)


def _t_flatten(p, args, kwargs, node, name):
    a = rc._bind(["input", "start_dim", "end_dim"], {"start_dim": 0, "end_dim": -1},
                 args, kwargs, node, name)
    t = _tensor_arg(a["input"], node, name)
    if t.ndim == 0:
        return reshape(t, [[1]], node)
    s, e = _dim(a["start_dim"], t.ndim, node), _dim(a["end_dim"], t.ndim, node)
    if s > e:
        raise Stop("flatten with start_dim after end_dim (PyTorch fails)", node)
    shape = list(t.shape[:s]) + [_numel(t.shape[s:e + 1])] + list(t.shape[e + 1:])
    return reshape(t, [shape], node)


def _t_reshape(p, args, kwargs, node, name):
    a = rc._bind(["input", "shape"], {}, args, kwargs, node, name)
    return reshape(_tensor_arg(a["input"], node, name), [a["shape"]], node)


def _t_repeat_interleave(p, args, kwargs, node, name):
    a = rc._bind(["input", "repeats", "dim", "output_size"], {"dim": None, "output_size": None},
                 args, kwargs, node, name)
    return repeat_interleave(_tensor_arg(a["input"], node, name), a["repeats"], a["dim"], node)


def _t_softmax(p, args, kwargs, node, name):
    names = ["input", "dim", "_stacklevel", "dtype"] if "functional" in name else \
        ["input", "dim", "dtype"]
    a = rc._bind(names, {"dim": None, "_stacklevel": 3, "dtype": None}, args, kwargs, node,
                 name)
    return p.softmax(a["input"], a["dim"], node)


def _t_dropout(p, args, kwargs, node, name):
    if name == "torch.dropout" or name.startswith("Tensor."):
        a = rc._bind(["input", "p", "train"], {}, args, kwargs, node, name)
        training = a["train"]
    else:
        a = rc._bind(["input", "p", "training", "inplace"],
                     {"p": 0.5, "training": True, "inplace": False}, args, kwargs, node, name)
        training = a["training"]
    if training is not False and a["p"] not in (0, 0.0):
        raise Stop("dropout with p=%r in training mode" % (a["p"],), node)
    return a["input"]


def _t_unary(fn):
    def handler(p, args, kwargs, node, name):
        a = rc._bind(["input"], {}, args, kwargs, node, name)
        x = a["input"]
        if _is_num(x):
            return UNARY[fn](x)
        return unary(UNARY[fn], _tensor_arg(x, node, name))
    return handler


def _t_binary(fn):
    def handler(p, args, kwargs, node, name):
        params = ["input", "other", "alpha"] if fn in ("add", "sub", "subtract") else \
            ["input", "other", "rounding_mode"] if fn in ("div", "divide") else \
            ["input", "exponent"] if fn == "pow" else ["input", "other"]
        a = rc._bind(params, {"alpha": 1, "rounding_mode": None}, args, kwargs, node, name)
        if a.get("alpha", 1) != 1 or a.get("rounding_mode") is not None:
            raise Stop("%s with alpha or rounding_mode" % name, node)
        x, y = a["input"], a.get("other", a.get("exponent"))
        for v in (x, y):
            if not isinstance(v, T) and not _is_num(v):
                raise Stop("%s of %s" % (name, _describe(v)), node)
        if not isinstance(x, T) and not isinstance(y, T):
            return BINARY[fn](x, y)
        return elementwise(BINARY[fn], x, y, node)
    return handler


def _t_reduce(kind):
    def handler(p, args, kwargs, node, name):
        a = rc._bind(["input", "dim", "keepdim", "dtype"],
                     {"dim": None, "keepdim": False, "dtype": None}, args, kwargs, node, name)
        t = _tensor_arg(a["input"], node, name)
        dim = a["dim"]
        if isinstance(dim, (tuple, list)) and len(dim) == 1:
            dim = dim[0]
        if dim is None or dim == ():
            flat = T(t.values(), [_numel(t.shape)])
            vals = flat.values()
            if kind == "max" and name.endswith(".max") and a["dim"] is None:
                return T([max(vals)], [])
            f = {"sum": math.fsum, "mean": lambda r: math.fsum(r) / len(r),
                 "amax": max, "max": max}[kind]
            return T([f(vals)], [])
        if not _is_int(dim):
            raise Stop("%s over several dimensions" % name, node)
        if kind == "max":
            values = rows_apply(t, dim, max, node, a["keepdim"])
            indices = rows_apply(t, dim, lambda r: float(r.index(max(r))), node, a["keepdim"])
            return MaxResult((values, indices))
        f = {"sum": math.fsum, "mean": lambda r: math.fsum(r) / len(r), "amax": max}[kind]
        return rows_apply(t, dim, f, node, a["keepdim"])
    return handler


def _t_cat(stack):
    def handler(p, args, kwargs, node, name):
        a = rc._bind(["tensors", "dim"], {"dim": 0}, args, kwargs, node, name)
        return cat(a["tensors"], a["dim"], node, stack)
    return handler


def _t_full(p, args, kwargs, node, name):
    a = rc._bind(["size", "fill_value", "dtype", "device", "layout", "requires_grad"],
                 {"dtype": None, "device": None, "layout": None, "requires_grad": False},
                 args, kwargs, node, name)
    sizes = _sizes([a["size"]], node, name)
    if not _is_num(a["fill_value"]):
        raise Stop("torch.full of %s" % _describe(a["fill_value"]), node)
    return T([float(a["fill_value"])] * _numel(sizes), sizes)


def _t_tensor(p, args, kwargs, node, name):
    a = rc._bind(["data", "dtype", "device", "requires_grad"],
                 {"dtype": None, "device": None, "requires_grad": False}, args, kwargs, node,
                 name)
    if not _is_num(a["data"]):
        raise Stop("torch.tensor of %s" % _describe(a["data"]), node)
    return T([float(a["data"])], [])


def _t_finfo(p, args, kwargs, node, name):
    return FInfo()


TORCH = {
    "matmul": _t_matmul, "bmm": _t_bmm,
    "transpose": _t_transpose, "swapaxes": _t_transpose, "unsqueeze": _t_unsqueeze,
    "squeeze": _t_squeeze, "flatten": _t_flatten, "reshape": _t_reshape,
    "repeat_interleave": _t_repeat_interleave,
    "softmax": _t_softmax, "dropout": _t_dropout,
    "sum": _t_reduce("sum"), "mean": _t_reduce("mean"), "amax": _t_reduce("amax"),
    "max": _t_reduce("max"),
    "cat": _t_cat(False), "concat": _t_cat(False), "concatenate": _t_cat(False),
    "stack": _t_cat(True),
    "full": _t_full, "tensor": _t_tensor, "finfo": _t_finfo,
}
TORCH.update({n: _t_unary(n) for n in UNARY})
TORCH.update({n: _t_binary(n) for n in BINARY})


# -- what tx computes -------------------------------------------------------------
def attention_reference(q, k, v, scale, causal, window=None, softcap=None, group="grouped",
                        softmax_dim=-1):
    """tx.attention of q [1, H, S, D], k [1, Hk, S, D], v [1, Hk, S, Dv]
    (query head h reads key/value head h // (H / Hk); `group` "tiled": h %
    Hk, for messages), as the handler returns it: [1, S, H, Dv]."""
    _, heads, s_len, d = q.shape
    kv_heads, dv = k.shape[1], v.shape[3]
    qv, kv, vv = q.values(), k.values(), v.values()
    n_rep = heads // kv_heads

    def row(x, h, t, width, nh):
        base = ((h * s_len) + t) * width
        return x[base:base + width]

    scores = []  # [h][t][s]
    for h in range(heads):
        kh = h // n_rep if group == "grouped" else h % kv_heads
        sh = []
        for t in range(s_len):
            qr = row(qv, h, t, d, heads)
            r = []
            for s in range(s_len):
                x = scale * math.fsum(a * b for a, b in zip(qr, row(kv, kh, s, d, kv_heads)))
                if softcap is not None:
                    x = softcap * math.tanh(x / softcap)
                visible = not causal or (s <= t and (window is None or t - s < window))
                r.append(x if visible else float("-inf"))
            sh.append(r)
        scores.append(sh)
    probs = []
    for h in range(heads):
        if softmax_dim == -1:
            probs.append([_softmax_row(r) for r in scores[h]])
        else:
            cols = [_softmax_row([scores[h][t][s] for t in range(s_len)])
                    for s in range(s_len)]
            probs.append([[cols[s][t] for s in range(s_len)] for t in range(s_len)])
    out = []
    for t in range(s_len):
        for h in range(heads):
            kh = h // n_rep if group == "grouped" else h % kv_heads
            p = probs[h][t]
            for e in range(dv):
                out.append(math.fsum(p[s] * vv[((kh * s_len) + s) * dv + e]
                                     for s in range(s_len) if p[s] != 0.0))
    return T(out, [1, s_len, heads, dv])


def repeat_reference(x, n):
    """HF's repeat_kv: head j of the result is head j // n of x."""
    return repeat_interleave(x, n, 1, None)


def difference(got, want):
    """(max |got - want|, index, max |want|), or None when the shapes
    differ."""
    if got.shape != want.shape:
        return None
    gv, wv = got.values(), want.values()
    worst, at = 0.0, 0
    for i, (a, b) in enumerate(zip(gv, wv)):
        if a != a or b != b:
            d = 0.0 if (a != a and b != b) else float("inf")
        else:
            d = abs(a - b)
        if d > worst:
            worst, at = d, i
    scale = max((abs(b) for b in wv if b == b), default=0.0)
    return worst, at, scale


def close(got, want):
    d = difference(got, want)
    return d is not None and d[0] <= TOLERANCE * max(d[2], 1e-300)


def _unravel(i, shape):
    out = []
    for n in reversed(shape):
        out.append(i % n)
        i //= n
    return out[::-1]


# -- binding a call's arguments to numbers ---------------------------------------------
class Binder:
    """Probe values of the import's values: each tensor its own
    pseudo-random numbers (the same tensor the same numbers), the causal
    mask additive (-3.4e38 where a key is hidden), the module and config
    as Objs; `tokens` the token count."""

    def __init__(self, rng, tokens, window):
        self.rng, self.tokens, self.window = rng, TokenCount(tokens), window
        self.tensors = {}

    def sizes(self, t):
        return tuple(self.tokens if s is V.TOKENS else s for s in t.sizes())

    def random(self, shape):
        return T([self.rng.uniform(-1.0, 1.0) for _ in range(_numel(shape))], shape)

    def tensor(self, t):
        if id(t) not in self.tensors:
            self.tensors[id(t)] = (t, self.random(self.sizes(t)))
        return self.tensors[id(t)][1]

    def mask(self):
        s, w = self.tokens, self.window
        data = [0.0 if (j <= i and (w is None or i - j < w)) else F32_MIN
                for i in range(s) for j in range(s)]
        return T(data, [1, 1, s, s])

    def value(self, v, path):
        if isinstance(v, V.RepeatedKV):
            return repeat_reference(self.tensor(v.tensor), v.n_rep)
        if isinstance(v, V.Tensor):
            if v.dims is None or v.type is None:
                return Unknown("a tensor of unknown layout")
            return self.tensor(v)
        if isinstance(v, V.CausalMask):
            return self.mask()
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, (V.Instance, V.Config)):
            return Obj(v, path)
        if isinstance(v, V.Identity):
            return Identity()
        if isinstance(v, V.SoftmaxModule):
            return SoftmaxFn(v.dim)
        if isinstance(v, tuple):
            return tuple(self.value(x, path + (i,)) for i, x in enumerate(v))
        if isinstance(v, list):
            return [self.value(x, path + (i,)) for i, x in enumerate(v)]
        if isinstance(v, dict):
            return {k: self.value(x, path + (k,)) for k, x in v.items()}
        if isinstance(v, V.Positions):
            return Unknown("the position ids")
        if isinstance(v, V.Unavailable):
            return Unknown("%s (%s)" % (".".join(str(x) for x in path), v.why))
        what = {V.Param: "a parameter", V.Linear: "a linear layer", V.Norm: "a norm",
                V.Instance: "a module"}.get(type(v), type(v).__name__)
        return Unknown("%s (%s)" % (".".join(str(x) for x in path), what))


class Attributes:
    """Reads attributes of the module and config as the import knows them
    (Python values only); records each read for the cache."""

    def __init__(self, tr, binder):
        self.tr, self.binder = tr, binder
        self.reads = []

    def lookup(self, host, name):
        """(found, value)."""
        if isinstance(host, V.Instance):
            if name in self.tr.flags:
                return True, V.Unavailable("module.%s is a flag given at run time" % name)
            if name in host.attrs:
                return True, host.attrs[name]
            return self.tr.src.class_constant(host.cls, name)
        value = table.config_value(host.data, name)
        return (value is not table._NO_VALUE), value

    def missing(self, obj, name):
        return not self.lookup(obj.host, name)[0]

    def __call__(self, obj, name, node):
        found, value = self.lookup(obj.host, name)
        owner = ".".join(str(x) for x in obj.path)
        if not found:
            raise Stop("%s.%s, which %s" % (owner, name, "is not set in __init__"
                                              if isinstance(obj.host, V.Instance)
                                              else "the config does not have"), node)
        if isinstance(value, V.Unavailable):
            raise Stop(value.why, node)
        path = obj.path + (name,)
        out = self.binder.value(value, path)
        self.reads.append((path, _key(out)))
        if isinstance(out, Unknown):
            raise Stop(out.what, node)
        return out


def _key(v):
    """What the cache compares of a probe value."""
    if isinstance(v, T):
        return ("T", v.shape)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__,) + tuple(_key(x) for x in v)
    if isinstance(v, dict):
        return ("dict",) + tuple(sorted((k, _key(x)) for k, x in v.items()))
    if isinstance(v, (Obj, Identity, SoftmaxFn, Unknown)):
        return (type(v).__name__, getattr(v, "dim", None))
    return (type(v).__name__, v)


def _follow(tr, bound, path):
    """The import's value at `path` from the bound arguments (cache check)."""
    v = bound
    for step in path:
        if isinstance(v, dict):
            if step not in v:
                return None, False
            v = v[step]
        elif isinstance(v, (tuple, list)):
            v = v[step]
        elif isinstance(v, V.Instance):
            if step in tr.flags:
                return None, False
            if step in v.attrs:
                v = v.attrs[step]
            else:
                found, v = tr.src.class_constant(v.cls, step)
                if not found:
                    return None, False
        elif isinstance(v, V.Config):
            v = table.config_value(v.data, step)
            if v is table._NO_VALUE:
                return None, False
        else:
            return None, False
    return v, True


# -- the checks ------------------------------------------------------------------------
def _signature(bound):
    """The call's arguments as the probe sees them, but the module objects
    (their attributes are checked as read)."""
    ids = {}

    def sig(v):
        if isinstance(v, V.RepeatedKV):
            return ("rep", sig(v.tensor), v.n_rep)
        if isinstance(v, V.Tensor):
            return ("T", ids.setdefault(id(v), len(ids)), tuple(str(s) for s in v.sizes())
                    if v.dims is not None and v.type is not None else None)
        if isinstance(v, (tuple, list)):
            return (type(v).__name__,) + tuple(sig(x) for x in v)
        if isinstance(v, dict):
            return ("dict",) + tuple(sorted((k, sig(x)) for k, x in v.items()))
        if v is None or isinstance(v, (bool, int, float, str)):
            return (type(v).__name__, v)
        return (type(v).__name__,)
    return sig(bound)


def _cache(tr):
    """Checks passed in this import: key -> the attribute reads (path,
    value) each passed with (another layer's module may differ)."""
    if not hasattr(tr, "_body_checks"):
        tr._body_checks = {}
    return tr._body_checks


def _cached(tr, key, bound):
    for reads in _cache(tr).get(key, ()):
        ok = True
        for path, want in reads:
            value, found = _follow(tr, bound, path)
            if not found:
                ok = False
                break
            probe_value = Binder(random.Random(0), 1, None).value(value, path)
            if _key(probe_value) != want:
                ok = False
                break
        if ok:
            return True
    return False


def _token_counts(avoid, window):
    """Two token counts that are none of the other sizes (a transpose or a
    swapped dimension then changes a shape), larger than the window when
    that is small enough to run."""
    low = window + 2 if window is not None and window + 2 <= 24 else 2
    picks = [n for n in range(max(low, 3), 64) if n not in avoid and n % 2][:2]
    return picks


def _where(src, fn):
    return "%s (%s:%d)" % (fn.name, os.path.basename(src.path or "<input>"), fn.lineno)


class Differs(Exception):
    """A helper's result is not what tx computes in its place: `fn` the
    helper, `what` how."""

    def __init__(self, fn, what):
        super().__init__(what)
        self.fn, self.what = fn, what


def _unsupported(src, fn, e, what):
    line = " (line %d)" % e.line if e.line else ""
    return "%s is replaced by %s only when it computes %s, which could not be " \
           "checked: %s%s" % (_where(src, fn), what[0], what[1], e.what, line)


REPEAT = ("tx's grouped key/value heads", "HF's repeat_kv (each key/value head repeated "
          "n_rep times in place)")
EAGER = ("tx.attention", "HF's eager attention (softmax(q k^T * scaling + mask) v)")


def _repeat_diff(x, n, result):
    """What differs between `result` and repeat_kv(x, n), or None."""
    want = repeat_reference(x, n)
    if not isinstance(result, T):
        return "it returns %s, not a tensor" % _describe(result)
    if result.shape != want.shape:
        return "its result has shape %s, not %s" % (_fmt_shape(result.shape),
                                                    _fmt_shape(want.shape))
    if close(result, want):
        return None
    heads = x.shape[1]
    tiled = repeat(x, [1, n, 1, 1], None)
    if close(result, tiled):
        return "the heads are tiled (head j of its result is head j %% %d of the input, " \
               "not j // %d)" % (heads, n)
    worst, at, _ = difference(result, want)
    return "its result differs by %.3g at %s" % (worst, _fmt_shape(_unravel(at, want.shape)))


def _check_repeat_call(fn, args, kwargs, result, node):
    """on_return hook: a repeat_kv of the file called inside the probed
    helper must compute HF's repeat_kv too."""
    if table.lookup_function(fn.name) is not table.repeat_kv:
        return
    params = [p.arg for p in fn.args.args]
    bound = dict(zip(params, args))
    bound.update(kwargs)
    x = bound.get(params[0]) if params else None
    n = bound.get(params[1]) if len(params) > 1 else None
    if not isinstance(x, T) or x.ndim != 4 or not _is_int(n) or n < 1:
        return  # not HF's call form: the caller's result is compared anyway
    what = _repeat_diff(x, n, result)
    if what is not None:
        raise Differs(fn, what)


def _run(probe, fn, env):
    try:
        probe.run(fn.body, env)
    except rc._Return as r:
        return r.value
    return None


def repeat_kv(tr, fn, bound, names, named, node):
    """The file's own repeat_kv, replaced by tx's grouped heads (table.
    repeat_kv, which has run): an error at the call unless its body
    repeats each head n_rep times in place."""
    positional = [bound[n] for n in names]
    x = table._arg(positional, named, 0, "hidden_states", node)
    n = table._arg(positional, named, 1, "n_rep", node)
    key = (id(fn), "repeat_kv", _signature(bound))
    if _cached(tr, key, bound):
        return
    heads = x.sizes()[1] if isinstance(x, V.Tensor) and x.dims is not None else 1
    avoid = {1, n, heads, heads * n} | set(s for s in x.sizes() if _is_int(s))
    reads = []
    for i, tokens in enumerate(_token_counts(avoid, None)):
        binder = Binder(random.Random(1000 + i), tokens, None)
        attrs = Attributes(tr, binder)
        env = {p: binder.value(v, (p,)) for p, v in bound.items()}
        probe = Probe(tr.src, attrs)
        try:
            result = _run(probe, fn, env)
        except Stop as e:
            raise FrontendError(_unsupported(tr.src, fn, e, REPEAT), node)
        what = _repeat_diff(binder.tensor(x), n, result)
        if what is not None:
            raise FrontendError("%s does not compute %s: %s" % (_where(tr.src, fn), REPEAT[1],
                                                                what), node)
        reads.extend(attrs.reads)
    _cache(tr).setdefault(key, []).append(reads)


def eager_attention(tr, fn, bound, names, named, node):
    """The file's own eager_attention_forward, replaced by tx.attention
    (table.eager_attention, which has run on these arguments): an error at
    the call unless its body computes what tx.attention does, with the
    call's arguments, at two token counts."""
    positional = [bound[n] for n in names]
    q = table._arg(positional, named, 1, ("query", "q"), node)
    k = table._arg(positional, named, 2, ("key", "k"), node)
    v = table._arg(positional, named, 3, ("value", "v"), node)
    mask = table._arg(positional, named, 4, ("attention_mask", "mask"), node, None)
    scaling = table._arg(positional, named, 5, "scaling", node, None)
    window = named.get("sliding_window")
    softcap = named.get("softcap")
    key = (id(fn), "eager", _signature(bound), _signature(named))
    if _cached(tr, key, bound):
        return
    base = lambda t: t.tensor if isinstance(t, V.RepeatedKV) else t  # noqa: E731
    qs, ks, vs = (base(t).sizes() for t in (q, k, v))
    head_dim = qs[3]
    scale = float(head_dim ** -0.5 if scaling is None else scaling)
    avoid = {1} | {s for s in qs + ks + vs if _is_int(s)}
    for t in (k, v):
        if isinstance(t, V.RepeatedKV):
            avoid.add(t.n_rep)
    if _is_int(window):
        avoid.add(window)
    counts = _token_counts(avoid, window)
    window_unseen = window is not None and counts and counts[0] <= window
    reads = []
    for i, tokens in enumerate(counts):
        binder = Binder(random.Random(2000 + i), tokens, window)
        attrs = Attributes(tr, binder)
        env = {p: binder.value(val, (p,)) for p, val in bound.items()}
        probe = Probe(tr.src, attrs,
                      on_return=_check_repeat_call)
        try:
            result = _run(probe, fn, env)
        except Stop as e:
            raise FrontendError(_unsupported(tr.src, fn, e, EAGER), node)
        except Differs as e:
            raise FrontendError("%s, which %s calls, does not compute %s: %s"
                                % (_where(tr.src, e.fn), fn.name, REPEAT[1], e.what), node)
        if window_unseen:
            line = next((ln for n_, ln in probe.names_read if "window" in n_.lower()), None)
            if line is not None:
                raise FrontendError(
                    "%s reads the sliding window (line %d), %d tokens: more than the check "
                    "of its body against %s can run; not supported"
                    % (_where(tr.src, fn), line, window, EAGER[1]), node)
        qt, kt, vt = (binder.tensor(base(t)) for t in (q, k, v))
        what = _eager_diff(result, qt, kt, vt, scale, mask is not None, window, softcap)
        if what is not None:
            raise FrontendError("%s does not compute %s: %s"
                                % (_where(tr.src, fn), EAGER[1], what), node)
        reads.extend(attrs.reads)
    _cache(tr).setdefault(key, []).append(reads)


def _eager_diff(result, q, k, v, scale, causal, window, softcap):
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return "it returns %s, not (attn_output, attn_weights)" % (
            "%d values" % len(result) if isinstance(result, (tuple, list))
            else _describe(result))
    out = result[0]
    ref = attention_reference(q, k, v, scale, causal, window, softcap)
    if not isinstance(out, T):
        return "its attn_output is %s, not a tensor" % _describe(out)
    if out.shape != ref.shape:
        hint = ""
        if out.shape == (1, ref.shape[2], ref.shape[1], ref.shape[3]):
            hint = " (the heads before the tokens: not transposed back)"
        return "its attn_output has shape %s, not [batch, tokens, heads, head_dim] = %s%s" % (
            _fmt_shape(out.shape), _fmt_shape(ref.shape), hint)
    if close(out, ref):
        return None
    d = q.shape[3]
    alternatives = []
    if k is not v and k.shape == v.shape:
        alternatives.append(("the keys used as the values",
                             dict(v=k)))
    if causal:
        alternatives.append(("the mask is not applied", dict(causal=False)))
        if window is not None:
            alternatives.append(("the sliding window is not applied", dict(window=None)))
    else:
        alternatives.append(("a causal mask is applied, but the call passes none",
                             dict(causal=True)))
    if softcap is not None:
        alternatives.append(("the scores are not soft-capped", dict(softcap=None)))
    alternatives.append(("softmax is over the queries (dim=-2), not the keys",
                         dict(softmax_dim=-2)))
    if q.shape[1] != k.shape[1] and k.shape[1] > 1:
        alternatives.append(("query head h reads key/value head h %% %d (tiled), not "
                             "h // %d" % (k.shape[1], q.shape[1] // k.shape[1]),
                             dict(group="tiled")))
    for other in (scale * 2, scale / 2, scale * scale, 1.0, d ** -0.5, 1.0 / d,
                  scale * d ** -0.5, scale * d ** 0.5):
        if abs(other - scale) > 1e-12 * scale:
            alternatives.append(("the scores are scaled by %.6g, not %.6g" % (other, scale),
                                 dict(scale=other)))
    for what, change in alternatives:
        args = dict(q=q, k=k, v=v, scale=scale, causal=causal, window=window, softcap=softcap)
        args.update(change)
        if close(out, attention_reference(**args)):
            return what
    ov, rv = out.values(), ref.values()
    dot = math.fsum(a * b for a, b in zip(ov, rv))
    norm = math.fsum(b * b for b in rv)
    if norm > 0:
        c = dot / norm
        if abs(c - 1) > 1e-6 and close(out, T([c * b for b in rv], ref.shape)):
            return "its attn_output is %.6g times tx.attention's" % c
    worst, at, _ = difference(out, ref)
    b, t, h, f = _unravel(at, ref.shape)
    return "its attn_output differs from tx.attention's by %.3g (of at most %.3g) at token " \
           "%d, head %d, feature %d" % (worst, max(abs(x) for x in rv), t, h, f)


# -- a Conv1D class of the file -------------------------------------------------------
class Module:
    """A module the probe builds by running a class's __init__: its
    attributes, and which of them are parameters."""

    def __init__(self, name):
        self.name, self.attrs, self.params = name, {}, set()


class _Super:
    pass


class _NoOp:
    pass


class ModuleProbe(Probe):
    """Probe with what a module's __init__ does: super().__init__(),
    attributes set on self, torch.empty/zeros/ones, nn.Parameter,
    nn.init.*, and torch.addmm in forward."""

    def __init__(self, src):
        super().__init__(src, None)
        self.module = None

    def attribute(self, base, name, node):
        if isinstance(base, Module):
            if name not in base.attrs:
                raise Stop("self.%s, which __init__ does not set" % name, node)
            return base.attrs[name]
        if isinstance(base, _Super) and name == "__init__":
            return _NoOp()
        return super().attribute(base, name, node)

    def assign(self, target, value, env):
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and \
                isinstance(env.get(target.value.id), Module):
            module = env[target.value.id]
            module.attrs[target.attr] = value
            if isinstance(value, T) and getattr(value, "parameter", False):
                module.params.add(target.attr)
            return
        super().assign(target, value, env)

    def call(self, func, args, kwargs, node):
        if isinstance(func, _NoOp):
            return None
        return super().call(func, args, kwargs, node)

    def call_named(self, name, args, kwargs, node):
        if name == "super" and not args and not kwargs:
            return _Super()
        if name.startswith("torch.nn.init."):
            return args[0] if args else None
        if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            a = rc._bind(["data", "requires_grad"], {"requires_grad": True}, args, kwargs,
                         node, "nn.Parameter")
            t = _tensor_arg(a["data"], node, "nn.Parameter")
            t = T(t.values(), t.shape)
            t.parameter = True
            return t
        if name in ("torch.empty", "torch.zeros", "torch.ones"):
            extra = set(kwargs) - {"dtype", "device", "requires_grad"}
            if extra:
                raise Stop("%s with %s" % (name, ", ".join(sorted(extra))), node)
            sizes = _sizes(args, node, name)
            return T([1.0 if name.endswith("ones") else 0.0] * _numel(sizes), sizes)
        if name == "torch.addmm":
            a = rc._bind(["input", "mat1", "mat2", "beta", "alpha"], {"beta": 1, "alpha": 1},
                         args, kwargs, node, name)
            prod = matmul(_tensor_arg(a["mat1"], node, name),
                          _tensor_arg(a["mat2"], node, name), node, batched=False)
            if a["mat1"].ndim != 2 or a["mat2"].ndim != 2:
                raise Stop("torch.addmm of tensors that are not matrices (PyTorch fails)",
                           node)
            out = elementwise(lambda x, y: a["beta"] * x + a["alpha"] * y, a["input"], prod,
                              node)
            if out.shape != prod.shape:
                raise Stop("torch.addmm whose input does not broadcast to the product",
                           node)
            return out
        return super().call_named(name, args, kwargs, node)


CONV1D = ("transformers' Conv1D", "x @ weight + bias with weight [nx, nf] and bias [nf]")


def conv1d(tr, cls, args, kwargs, node):
    """A class of the file named Conv1D, taken as transformers' Conv1D(nf,
    nx) by its name (table.conv1d, which has run: the checkpoint's
    `weight` [nx, nf] and `bias` [nf] of a linear layer): its __init__ and
    forward, run on numbers, must compute x @ weight + bias."""
    where = _where(tr.src, cls)
    init = tr.src.method(cls, "__init__", node, required=False)
    forward = tr.src.method(cls, "forward", node, required=False)
    if init is None or forward is None:
        raise FrontendError("%s is replaced by %s only when it computes %s, which could "
                            "not be checked: it has no %s of its own"
                            % (where, CONV1D[0], CONV1D[1],
                               "__init__" if init is None else "forward"), node)
    nf = table._arg(args, kwargs, 0, "nf", node)
    nx = table._arg(args, kwargs, 1, "nx", node)
    key = (id(cls), "conv1d", nf, nx)
    if key in _cache(tr):
        return
    rng = random.Random(3000)
    probe = ModuleProbe(tr.src)
    module = Module(cls.name)
    try:
        probe.call_function(init, [module] + list(args), kwargs, node)
        weight, bias = module.attrs.get("weight"), module.attrs.get("bias")
        shapes = {n: module.attrs[n].shape for n in sorted(module.params)}
        if not isinstance(weight, T) or weight.shape != (nx, nf) or \
                not isinstance(bias, T) or bias.shape != (nf,) or \
                set(module.params) != {"weight", "bias"}:
            raise FrontendError(
                "%s does not compute %s: its parameters are %s, not weight [%d, %d] and "
                "bias [%d]" % (where, CONV1D[1], ", ".join(
                    "%s %s" % (n, _fmt_shape(s)) for n, s in shapes.items()) or "none",
                    nx, nf, nf), node)
        for n in module.params:
            t = module.attrs[n]
            module.attrs[n] = T([rng.uniform(-1, 1) for _ in t.data], t.shape)
        tokens = next(n for n in range(3, 64, 2) if n not in (nf, nx))
        x = T([rng.uniform(-1, 1) for _ in range(tokens * nx)], [1, tokens, nx])
        result = probe.call_function(forward, [module, x], {}, node)
    except Stop as e:
        raise FrontendError(_unsupported(tr.src, cls, e, CONV1D), node)
    want = elementwise(lambda a, b: a + b, matmul(x, module.attrs["weight"], node),
                       module.attrs["bias"], node)
    if not isinstance(result, T) or not close(result, want):
        what = "it returns %s" % _describe(result) if not isinstance(result, T) else \
            "its result has shape %s, not %s" % (_fmt_shape(result.shape),
                                                 _fmt_shape(want.shape)) \
            if result.shape != want.shape else \
            "its result differs from x @ weight + bias by %.3g" % difference(result, want)[0]
        raise FrontendError("%s does not compute %s: %s" % (where, CONV1D[1], what), node)
    _cache(tr)[key] = True

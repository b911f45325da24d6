"""Tensor operations of the frontend: each PyTorch form becomes a tx op.

Buffers stay token-major ([tokens, heads, head_dim]); a PyTorch transpose
only permutes `Tensor.dims`, and each op checks that the PyTorch dimensions
it gets are the ones its tx op means (heads before tokens for the HF
attention helpers, the same order for both operands of `+`, ...)."""

from .errors import FrontendError
from .ir import Block, MemRef, _If, float_literal
from .table import bind
from . import values as V

PENDING = None  # a MemRef dimension size not known yet is stored as None too

# The parameters after the input of the clamp forms (Tensor.clamp(min=None,
# max=None), torch.clip the same).
CLAMP_PARAMS = {"clamp": [("min", None), ("max", None)],
                "clip": [("min", None), ("max", None)],
                "clamp_min": ["min"], "clamp_max": ["max"]}


# Methods of a Python list the import runs as Python does.
LIST_METHODS = ("append", "extend", "insert", "pop", "index", "count", "copy", "clear",
                "remove", "reverse")


class Ops:
    def __init__(self, emitter):
        self.em = emitter
        self.hint = None
        self.dtype = "f32"
        # Buffers holding a copy cast to a wider dtype than the model's.
        self.widened = {}  # buffer value -> its PyTorch dtype
        self.untyped = []  # container reads whose types a later op must give
        # Copies that PyTorch makes only with more than one token (at one
        # token the source is contiguous and .contiguous()/.reshape return
        # it): buffer root -> [(tensor, its one-token alias)]. After an
        # in-place write to the root, the tensor is copied into its alias
        # when the call has one token (token_sync), so that both hold what
        # PyTorch's one tensor holds then.
        self.token_aliases = {}

    # -- blocks ----------------------------------------------------------------
    def em_push(self):
        block = Block()
        self.em.blocks.append(block)
        return block

    def em_pop(self):
        self.em.blocks.pop()

    def em_if(self, results, cond, blocks, node):
        self.em.add(_If(results, cond, blocks[0], blocks[1], self.em.loc(node)))

    def new_arg(self, name, type):
        value = self.em.fresh(name, type)
        self.em.args.append((value, name))
        return value

    def rope_arg(self, role, name):
        """A rotary cos or sin argument of the function: [tokens, n], n fixed
        by the tx.rotary that reads it."""
        v = self.new_arg(name, MemRef((None, None), self.dtype))
        v.pending = True
        v.rope = True  # unused, sized from the config (import_source)
        return V.Tensor(v, [None, 0, 1], role=role)

    def rope_pair(self, names):
        """A (cos, sin) pair of arguments named `names`."""
        pair = (self.rope_arg("cos", names[0]), self.rope_arg("sin", names[1]))
        return pair[::-1] if getattr(self, "test_break", None) == "swap-rope" else pair

    def view_of(self, t, hint, type):
        """A fresh SSA value for a view of tensor t: `root` is the buffer it
        shows elements of."""
        out = self.fresh(hint, type)
        out.root = getattr(t.value, "root", t.value)
        return out

    @staticmethod
    def root(t):
        return getattr(t.value, "root", t.value)

    def fresh(self, hint, type):
        return self.em.fresh(self.hint or hint, type)

    # -- checks ----------------------------------------------------------------
    def tensor(self, v, node, what="argument"):
        if isinstance(v, V.Unavailable):
            raise FrontendError(v.why, node)
        if isinstance(v, V.NormChain) and v.stage == "sq":
            v = self.norm_square(v, node)
        self.no_chain(v, node)
        if not isinstance(v, V.Tensor):
            raise FrontendError("%s must be a tensor, got %s" % (what, self.describe(v)), node)
        if v.type is None:
            raise FrontendError("the type of this tensor is not known here (read from "
                                "a container before anything was stored in it)", node)
        if v.role is not None:
            raise FrontendError("the rotary %s may only be passed to the rotary helper"
                                % v.role, node)
        return v

    def no_chain(self, v, node):
        """An attention chain or a repeat_kv result used other than by the
        next step of the written-out attention: an error here."""
        if isinstance(v, V.AttentionChain):
            raise FrontendError(
                "%s (torch.matmul(q, k.transpose(-2, -1)) ...) may only be scaled by a "
                "positive number, soft-capped (s / c, torch.tanh, * c), masked with the "
                "forward's attention mask, put through "
                "softmax(dim=-1) and multiplied by v (torch.matmul(probs, v)): this "
                "other use is not supported (tx.attention does not compute them)"
                % v.what(), node)
        if isinstance(v, V.RepeatedKV):
            raise FrontendError(
                "the result of %s (line %d) may only be an operand of the "
                "attention (tx.attention does GQA by head counts)" % (v.what, v.node.lineno),
                node)
        if isinstance(v, V.NormChain):
            raise FrontendError(
                "%s (a norm written out: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) "
                "+ eps), or (x - mean) * torch.rsqrt(variance + eps)) may only be the "
                "next step of that norm: this other use is not supported (tx.rmsnorm / "
                "tx.layernorm do not compute it)" % v.what(), node)

    def fix_last(self, t, size, node, what):
        """Checks (or, for an input of unknown width, sets) the last size."""
        shape = t.type.shape
        if shape[-1] is PENDING and getattr(t.value, "pending", False):
            t.value.type = MemRef(shape[:-1] + (size,), t.type.dtype)
            t.value.pending = False
            return
        if shape[-1] != size:
            raise FrontendError("%s: last dimension is %s, expected %d"
                                % (what, "?" if shape[-1] is None else shape[-1], size), node)

    def last_is_last(self, t, node, what):
        if t.dims[-1] != len(t.type.shape) - 1:
            raise FrontendError("%s needs the tensor's last dimension to be its "
                                "innermost (it was transposed)" % what, node)

    # -- projections, norms, elementwise --------------------------------------
    def linear(self, layer, x, node):
        x = self.tensor(x, node, "the input of self.%s" % layer.path)
        self.last_is_last(x, node, "a projection")
        self.fix_last(x, layer.in_features, node, "input of self.%s" % layer.path)
        out = self.em.fresh(layer.symbol, MemRef(x.type.shape[:-1] + (layer.out_features,),
                                                 self.dtype))
        self.em.op([out], lambda: "tx.linear @%s(%s) : %s -> %s" % (
            layer.symbol, x.value, x.type, out.type), node)
        # PyTorch's output is a new contiguous tensor in x's order.
        return V.Tensor(out, x.dims, tlayout=x.dims)

    def norm(self, norm, x, node):
        x = self.tensor(x, node, "the input of self.%s" % norm.path)
        self.last_is_last(x, node, "a norm")
        self.fix_last(x, norm.size, node, "input of self.%s" % norm.path)
        operands = [x.value]
        if norm.weight:
            w = self.em.fresh("w_" + norm.symbol, MemRef((norm.size,), self.dtype))
            self.em.op([w], lambda: "tx.get_param @%s : %s" % (norm.symbol, w.type), node)
            operands.append(w)
        if norm.bias:
            b = self.em.fresh("b_" + norm.symbol, MemRef((norm.size,), self.dtype))
            self.em.op([b], lambda: "tx.get_param @%s_bias : %s" % (norm.symbol, b.type),
                       node)
            operands.append(b)
        return self.emit_norm(norm.kind, x, operands, norm.eps, norm.offset, norm.symbol,
                              node)

    def emit_norm(self, kind, x, operands, eps, offset, name, node):
        """tx.rmsnorm / tx.layernorm (`kind`) of tensor x over its last
        dimension; `operands` the values x.value[, weight[, bias]] (no
        weight: a norm without a learned scale)."""
        offset = " offset %s" % float_literal(offset) if offset else ""
        out = self.fresh(name, x.type.contiguous())
        # Printed at the end: a pending input type is known by then.
        self.em.op([out], lambda: "tx.%s %s eps %s%s : %s -> %s" % (
            kind, ", ".join(str(v) for v in operands), float_literal(eps),
            offset, ", ".join(str(v.type) for v in operands), out.type), node)
        return V.Tensor(out, x.dims, tlayout=x.tlayout)

    def unary(self, kind, x, node):
        x = self.tensor(x, node)
        out = self.fresh(kind, x.type.contiguous())
        self.em.op([out], lambda: "tx.unary %s %s : %s -> %s" % (kind, x.value, x.type,
                                                                   out.type), node)
        return V.Tensor(out, x.dims, tlayout=x.tlayout)

    def activation(self, kind, x, node):
        """An activation module or ACT2FN entry: tx.unary, or the steps of
        a composite one (table.COMPOSITE_ACTIVATIONS: relu2 is relu, then
        the square y * y; quick_gelu x * sigmoid(1.702 * x))."""
        from .table import COMPOSITE_ACTIVATIONS
        if kind not in COMPOSITE_ACTIVATIONS:
            return self.unary(kind, x, node)
        y = x
        for step in COMPOSITE_ACTIVATIONS[kind]:
            if step[0] == "unary":
                y = self.unary(step[1], y, node)
            elif step[0] == "square":
                y = self.binary("mul", y, y, node)
            elif step[0] == "scale":
                y = self.binary("mul", y, step[1], node)
            else:
                assert step[0] == "times_input", step
                y = self.binary("mul", x, y, node)
        return y

    def wrote(self, target, node, done=None):
        """Records an in-place write to `target`: with one token, what its
        buffer holds is copied into its one-token aliases (and theirs)."""
        done = set() if done is None else done
        root = self.root(target)
        if root in done:
            return
        done.add(root)
        for src, dst in self.token_aliases.get(root, ()):
            if self.root(dst) in done:
                continue  # written already (where the write came from)
            self.token_sync(src, dst, node)
            self.wrote(dst, node, done)

    def token_sync(self, src, dst, node):
        """scf.if (tokens == 1) { tx.copy src into dst }: at one token PyTorch
        has one tensor where tx has two buffers (see token_aliases)."""
        c0 = self.em.constant(0, "index", node)
        c1 = self.em.constant(1, "index", node)
        n = self.em.fresh("tokens", "index")
        self.em.op([n], lambda: "memref.dim %s, %s : %s" % (src.value, c0, src.type), node)
        one = self.em.fresh("one_token", "i1")
        self.em.op([one], lambda: "arith.cmpi eq, %s, %s : index" % (n, c1), node)
        then = self.em_push()
        self.em.op([], lambda: "tx.copy %s into %s : %s, %s" % (
            src.value, dst.value, src.type, dst.type), node)
        self.em_pop()
        self.em_if([], one, (then, Block()), node)

    def unary_into(self, kind, x, target, node):
        x, target = self.tensor(x, node), self.tensor(target, node, "out")
        self.same_layout(x, target, node)
        self.em.op([], lambda: "tx.unary_into %s %s into %s : %s, %s" % (
            kind, x.value, target.value, x.type, target.type), node)
        self.wrote(target, node)
        return target

    def operand(self, lhs, rhs, node, commutative):
        """(tensor, tensor-or-scalar) for a binary op, checking broadcasting."""
        if not isinstance(lhs, V.Tensor):
            if not commutative:
                raise FrontendError("a Python number on the left of '/' with a "
                                    "tensor is not supported", node)
            lhs, rhs = rhs, lhs
        lhs = self.tensor(lhs, node)
        if isinstance(rhs, bool) or not isinstance(rhs, (int, float, V.Tensor)):
            raise FrontendError("unsupported operand %s" % self.describe(rhs), node)
        if isinstance(rhs, V.Tensor):
            rhs = self.tensor(rhs, node)
            if len(rhs.type.shape) > len(lhs.type.shape) and commutative:
                lhs, rhs = rhs, lhs
            self.broadcastable(lhs, rhs, node)
            return lhs, rhs, rhs.value, rhs.type
        c = self.em.constant(float(rhs), self.dtype, node)
        return lhs, None, c, self.dtype

    def broadcastable(self, lhs, rhs, node):
        """Checks that tx.binary's broadcast (the right buffer's shape a
        suffix of the left's, repeated over the left's leading axes) is
        PyTorch's on these tensors: their PyTorch dimensions (`dims`, size-1
        ones included) aligned from the right, each of the right's axes
        meets the left's axis of the same suffix position, and every axis
        of that suffix meets one of the right's (not a size-1 dimension: a
        [heads, 1] scale on [T, heads, head_dim] repeats along head_dim in
        PyTorch, while a [heads] buffer would be taken along head_dim)."""
        ls, rs = lhs.type.shape, rhs.type.shape
        if ls[len(ls) - len(rs):] != rs:
            raise FrontendError("shapes %s and %s do not broadcast as tx does (the "
                                "right one must be a suffix)" % (lhs.type, rhs.type), node)
        shift = len(ls) - len(rs)
        n = max(len(lhs.dims), len(rhs.dims))
        ld = [None] * (n - len(lhs.dims)) + list(lhs.dims)
        rd = [None] * (n - len(rhs.dims)) + list(rhs.dims)
        for pos, (l, r) in enumerate(zip(ld, rd)):
            if r is None:
                if l is not None and l >= shift:
                    raise FrontendError(
                        "a size-1 dimension of the right operand (dimension %d of %d) "
                        "would be repeated along an axis of the left one that tx.binary "
                        "matches with the right buffer (%s and %s): not supported"
                        % (pos - (n - len(rhs.dims)), len(rhs.dims), lhs.type, rhs.type),
                        node)
            elif l is None:
                raise FrontendError(
                    "the result is larger than the left operand (its size-1 dimension "
                    "%d meets a dimension of the right one, %s and %s): not supported"
                    % (pos - (n - len(lhs.dims)), lhs.type, rhs.type), node)
        if any(l != shift + r for l, r in zip(ld, rd) if r is not None):
            raise FrontendError("operands are transposed differently", node)

    def same_layout(self, a, b, node):
        if a.type.shape != b.type.shape or [d for d in a.dims if d is not None] != \
                [d for d in b.dims if d is not None]:
            raise FrontendError("operands differ in shape or order (%s, %s)"
                                % (a.type, b.type), node)

    def binary(self, kind, lhs, rhs, node):
        if kind == "mul":
            fused = self.fold_norm_weight(lhs, rhs, node)
            if fused is not None:
                return fused
        if kind == "sub" and isinstance(lhs, (int, float)) and not isinstance(lhs, bool) \
                and isinstance(rhs, V.Tensor):
            # c - x (1 - gate): -x + c, the same number (IEEE subtraction
            # adds the negated operand exactly).
            return self.binary("add", self.unary("neg", rhs, node), lhs, node)
        a, b = lhs, rhs
        block = self.em.blocks[-1]
        start = len(block.items)
        lhs, rt, r, rtype = self.operand(lhs, rhs, node, kind in ("add", "mul"))
        out = self.fresh(kind, lhs.type.contiguous())
        self.em.op([out], lambda: "tx.binary %s %s, %s : %s, %s -> %s" % (
            kind, lhs.value, r, lhs.type, rtype, out.type), node)
        # PyTorch's result has as many dimensions as the larger operand: the
        # right one's extra leading ones (size 1, as broadcastable checked).
        extra = [None] * (len(rt.dims) - len(lhs.dims)) if rt is not None else []
        result = V.Tensor(out, extra + lhs.dims,
                          tlayout=None if lhs.tlayout is None else extra + lhs.tlayout)
        if kind == "add" and self.em.blocks[-1] is block:
            # c + weight (Gemma's 1.0 + self.weight): a norm weight with an
            # offset, for fold_norm_weight.
            for c, w in ((a, b), (b, a)):
                info = getattr(w, "norm_weight", None)
                if info is not None and info[1] == 0.0 and \
                        isinstance(c, (int, float)) and not isinstance(c, bool):
                    result.norm_weight = (info[0], float(c), info[2],
                                          info[3] + block.items[start:])
        return result

    def fold_norm_weight(self, a, b, node):
        """`weight * y` or `y * (c + weight)` (either order) with y the
        weightless tx.rmsnorm of a norm written out (norm_result) and weight
        a [n] parameter (get_param), n y's last size, nothing emitted since
        the norm or the weight's first op but the norm and the weight's own
        ops (nothing wrote x, the parameter or c + weight in between): the
        weighted tx.rmsnorm of the norm's input, `offset c` (None: not that
        form, a tx.binary mul).
        The same product in PyTorch's order: tx.rmsnorm multiplies
        x * rsqrt(mean(x^2) + eps) by (c + weight), in f32 (for 16-bit
        tensors rounded once, where PyTorch may round the norm first). The
        weightless norm and the weight's offset are left out of the IR
        when nothing else uses them (Emitter.drop_if_unused)."""
        for y, w in ((a, b), (b, a)):
            fold = getattr(y, "norm_fold", None)
            weight = getattr(w, "norm_weight", None)
            if fold is not None and weight is not None and isinstance(y, V.Tensor) and \
                    isinstance(w, V.Tensor):
                break
        else:
            return None
        x, eps, block, item = fold
        param, offset, wvalue, items = weight
        members = [item] + list(items)
        at = [next((k for k, i in enumerate(block.items) if i is m), None) for m in members]
        if self.em.blocks[-1] is not block or None in at or \
                any(not any(i is m for m in members) for i in block.items[min(at):]):
            return None  # something in between: PyTorch's two steps
        if y.dims != x.dims or w.dims != [0] or w.type.shape != (y.type.shape[-1],) or \
                w.type.dtype != y.type.dtype or y.type.shape[-1] is None:
            return None
        self.em.drop_if_unused(item)
        for i in items[1:]:
            self.em.drop_if_unused(i)  # the offset's constant and addition
        if not param.norm_weight:
            return self.emit_norm("rmsnorm", x, [x.value, wvalue], eps, offset, "rmsnorm",
                                  node)
        # A *RMSNorm module's result is named by the module.
        saved, self.hint = self.hint, None
        try:
            return self.emit_norm("rmsnorm", x, [x.value, wvalue], eps, offset,
                                  param.symbol, node)
        finally:
            self.hint = saved

    def binary_into(self, kind, lhs, rhs, target, node):
        target = self.tensor(target, node, "the written tensor")
        lhs2, _, r, rtype = self.operand(lhs, rhs, node, kind in ("add", "mul"))
        self.same_layout(lhs2, target, node)
        self.em.op([], lambda: "tx.binary_into %s %s, %s into %s : %s, %s, %s" % (
            kind, lhs2.value, r, target.value, lhs2.type, rtype, target.type), node)
        self.wrote(target, node)
        return target

    def clamp(self, name, args, kwargs, node, into=None):
        """torch.clamp(input, min=None, max=None) / Tensor.clamp (its input
        first in `args`; clip the same), clamp_min(min), clamp_max(max):
        min(max(x, min), max) as PyTorch computes it (NaN stays NaN; min >
        max gives max), bounds that are numbers known at import (OLMo's
        clip_qkv); `into`: the tensor the in-place and out= forms write."""
        kind = name.rsplit(".", 1)[-1].rstrip("_")
        a = bind(name, ["input"] + CLAMP_PARAMS[kind], args, kwargs, node)
        t = self.tensor(a["input"], node)
        bounds = [(op, a.get(key)) for op, key in (("max", "min"), ("min", "max"))
                  if a.get(key) is not None]
        if not bounds:
            raise FrontendError("%s: at least one of min and max must not be None" % name, node)
        for _, bound in bounds:
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise FrontendError("%s: a bound must be a number known at import, got %s"
                                    % (name, self.describe(bound)), node)
        for op, bound in bounds:
            if into is not None:
                t = self.binary_into(op, t, float(bound), into, node)
            else:
                t = self.binary(op, t, float(bound), node)
        return t

    def scaled(self, value, alpha, node):
        """alpha * value (torch.add's alpha): value itself when alpha is 1."""
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise FrontendError("alpha must be a number known at import, got %s"
                                % self.describe(alpha), node)
        if alpha == 1:
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value * alpha
        return self.binary("mul", value, alpha, node)

    def copy_into(self, source, target, node):
        source, target = self.tensor(source, node), self.tensor(target, node)
        self.same_layout(source, target, node)
        self.em.op([], lambda: "tx.copy %s into %s : %s, %s" % (
            source.value, target.value, source.type, target.type), node)
        self.wrote(target, node)
        return target

    # -- views -----------------------------------------------------------------
    def size_method(self, name, sizes, args, kwargs, node):
        """t.dim(), t.size(), t.size(d) (or dim=d) of a tensor of `sizes`."""
        if name == "dim":
            bind("Tensor.dim", [], args, kwargs, node)
            return len(sizes)
        dim = bind("Tensor.size", [("dim", None)], args, kwargs, node)["dim"]
        if dim is None:
            return sizes
        return sizes[self.dim_index(dim, len(sizes), "size", node)]

    def dim_index(self, d, n, what, node, extra=0):
        """d as an index of n (+ extra) dimensions, as PyTorch checks it."""
        if isinstance(d, bool) or not isinstance(d, int) or not -n - extra <= d < n + extra:
            shown = repr(d) if isinstance(d, (int, str, type(None))) else self.describe(d)
            raise FrontendError("%s: dimension %s of a tensor of %d dimensions"
                                % (what, shown, n), node)
        return d % (n + extra)

    def transposed(self, t, a, b, node=None):
        dims = list(t.dims)
        n = len(dims)
        a, b = self.dim_index(a, n, "transpose", node), self.dim_index(b, n, "transpose", node)
        dims[a], dims[b] = dims[b], dims[a]
        return V.Tensor(t.value, dims, t.role, t.tlayout)

    def view(self, t, sizes, node, copy=False):
        """t.view(sizes) (copy: t.reshape(sizes), which copies a slice whose
        dimensions do not merge or split in place, as PyTorch does)."""
        t = self.tensor(t, node)
        sizes = list(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) \
            else list(sizes)
        have = t.sizes()
        if len(sizes) == len(have) and sum(s == -1 for s in sizes) <= 1 and all(
                s is h or (s == -1 or s == h) and s is not V.TOKENS and h is not V.TOKENS
                or s == -1 and h is V.TOKENS for s, h in zip(sizes, have)):
            # To the sizes it has (Falcon's x.transpose(1, 2).reshape(b, heads, T,
            # d)): the same tensor, in any order.
            return t
        unit = self.unit_view(t, sizes)
        if unit is not None:
            return unit
        if copy and t.tlayout is not None and not self.is_contiguous(t):
            # PyTorch lays the tensor out in another order than its
            # dimensions (an attention output transposed back): reshape
            # copies it, so a later in-place write reaches one of the two.
            t = self.token_dependent_copy(t, node)
        if not t.identity():
            raise FrontendError("view/reshape of a transposed tensor is not supported "
                                "(tx buffers stay token-major)", node)
        src = t.type.shape
        src_static = 1
        for d in src:
            src_static *= d if d is not None else 1
        src_dynamic = sum(d is None for d in src)
        target, infer = [], None
        for i, s in enumerate(sizes):
            if s is V.TOKENS:
                target.append(None)
            elif s == -1 and infer is None:
                infer = len(target)
                target.append(-1)
            elif isinstance(s, int) and not isinstance(s, bool) and s >= 1:
                if s != 1:
                    target.append(s)
            else:
                raise FrontendError("unsupported view size %r" % (s,), node)
        static = 1
        for d in target:
            static *= d if d not in (None, -1) else 1
        dynamic = sum(d is None for d in target)
        if infer is not None:
            if dynamic == src_dynamic:
                if src_static % static:
                    raise FrontendError("view: %s elements do not split into %s"
                                        % (t.type, sizes), node)
                target[infer] = src_static // static
            elif dynamic == src_dynamic - 1 and src_static % static == 0:
                target[infer] = None
            else:
                raise FrontendError("view: cannot infer -1 for %s" % (t.type,), node)
        elif dynamic != src_dynamic or static != src_static:
            raise FrontendError("view: %s cannot be viewed as %s" % (t.type, sizes), node)
        dims, axis = [], 0
        for s in sizes:
            if isinstance(s, int) and s == 1:
                dims.append(None)
            else:
                dims.append(axis)
                axis += 1
        rtype = MemRef(tuple(target), t.type.dtype)
        if t.type.strides is not None:
            strided = self.strided_view(t.type, tuple(target), node, not copy)
            if strided is None:
                t = self.token_dependent_copy(t, node)
            else:
                rtype = strided
        if rtype == t.type:
            return V.Tensor(t.value, dims)
        out = self.view_of(t, "view", rtype)
        self.em.op([out], lambda: "tx.view %s : %s -> %s" % (t.value, t.type, out.type), node)
        return V.Tensor(out, dims)

    def unit_view(self, t, sizes):
        """A view that only adds or drops size-1 dimensions (BART's
        `x.view(bsz * heads, -1, head_dim)` of [1, heads, tokens, head_dim],
        bsz 1, and back): the same buffer in any order, the size-1
        dimensions None; None when the view does more, or when the buffer
        has an axis of size 1 (a PyTorch dimension of size 1 that is an axis,
        as a one-head [tokens, 1, head_dim] buffer: the general view keeps
        it)."""
        if any(d is not None and t.type.shape[d] == 1 for d in t.dims):
            return None
        have = [h for h in t.sizes() if h != 1]
        want = [s for s in sizes if not (isinstance(s, int) and not isinstance(s, bool)
                                         and s == 1)]
        if len(have) != len(want) or sum(s == -1 and s is not V.TOKENS for s in want) > 1:
            return None
        for s, h in zip(want, have):
            if not (s is h or s == -1 and s is not V.TOKENS or
                    isinstance(s, int) and not isinstance(s, bool) and s == h and
                    h is not V.TOKENS):
                return None
        axes = iter(d for d in t.dims if d is not None)
        dims = [None if isinstance(s, int) and not isinstance(s, bool) and s == 1
                else next(axes) for s in sizes]
        return V.Tensor(t.value, dims)

    def is_contiguous(self, t):
        """Whether PyTorch's tensor t is contiguous (with more than one
        token): its dimensions in buffer order and its buffer row-major
        (size-1 dimensions' strides do not matter), or laid out by PyTorch
        in the order of its dimensions (Tensor.tlayout)."""
        if t.tlayout is not None:
            return [d for d in t.dims if d is not None] == \
                [d for d in t.tlayout if d is not None]
        if not t.identity():
            return False
        if t.type.strides is None:
            return True
        expect = 1
        for size, stride in reversed(list(zip(t.type.shape, t.type.strides))):
            if size == 1:
                continue
            if expect is None or stride != expect:
                return False
            expect = None if size is None else expect * size
        return True

    # Float dtypes by precision (a cast down the list rounds).
    _PRECISION = {"f64": 3, "f32": 2, "bf16": 1, "f16": 1}
    _TORCH_DTYPES = {"float32": "f32", "float": "f32", "bfloat16": "bf16", "float16": "f16",
                     "half": "f16", "float64": "f64", "double": "f64"}

    def cast_target(self, name, args, kwargs, node):
        """The dtype a cast method gives (`.float()`, `.to(torch.bfloat16)`,
        `.to(x.dtype)`, `.type_as(y)`, ...): tx's name of it, or None for a
        `.to` that changes no dtype (a device)."""
        fixed = {"float": "f32", "half": "f16", "bfloat16": "bf16", "double": "f64"}
        if name in fixed:
            return fixed[name]
        if name == "type_as":
            return self.dtype  # another tensor of the import: the model's dtype
        spec = list(args) + [kwargs[k] for k in ("dtype", "device") if k in kwargs]
        for k in kwargs:
            if k not in ("dtype", "device", "copy", "non_blocking", "memory_format"):
                raise FrontendError(".%s() with keyword argument '%s' is not supported"
                                    % (name, k), node)
        target = None
        for a in spec:
            if a == "tensor.dtype" or isinstance(a, V.Tensor):
                target = self.dtype
            elif isinstance(a, V.Dotted) and a.name.startswith("torch.") and \
                    a.name[len("torch."):] in self._TORCH_DTYPES:
                target = self._TORCH_DTYPES[a.name[len("torch."):]]
            elif a == "tensor.device" or isinstance(a, str) or \
                    isinstance(a, V.Dotted) and a.name.startswith("torch.device") or \
                    isinstance(a, bool):
                continue  # a device (the one the model runs on), non_blocking
            else:
                raise FrontendError(".%s(%s): not a dtype the import knows"
                                    % (name, self.describe(a)), node)
        return target

    def cast(self, t, name, args, kwargs, node):
        """A cast of tensor `t`, as PyTorch's: the tensor itself when the
        dtype does not change, else a new tensor (a copy: an in-place write
        to one does not reach the other). The IR computes in the model's
        dtype (--dtype), so a cast that would round (to a narrower type than
        the model's) is an error, never a value PyTorch would not compute."""
        target = self.cast_target(name, args, kwargs, node)
        copy = kwargs.get("copy") is True
        source = self.widened.get(t.value, self.dtype)
        if target is None or target == source:
            return self.contiguous_copy(t, node) if copy else t
        if self._PRECISION[target] < self._PRECISION[self.dtype] or \
                target != self.dtype and self._PRECISION[target] == self._PRECISION[self.dtype]:
            raise FrontendError("a cast to %s in a %s import rounds each value: not supported "
                                "(the IR computes in %s; import with --dtype %s to compute "
                                "in it)" % (target, self.dtype, self.dtype, target), node)
        out = self.contiguous_copy(t, node)
        if target != self.dtype:
            # A wider copy (.float() of a bf16 tensor): its values are the
            # model's; a cast of it back is a copy again.
            self.widened[out.value] = target
        return out

    def contiguous_at_one_token(self, t):
        """Whether PyTorch's tensor t is contiguous when the call has one
        token (the token dimension, then of size 1, does not count)."""
        tok = 0 if t.type.shape and t.type.shape[0] is None else None
        if t.tlayout is not None:
            return [d for d in t.dims if d not in (None, tok)] == \
                [d for d in t.tlayout if d not in (None, tok)]
        axes = [d for d in t.dims if d is not None and d != tok]
        if axes != sorted(axes):
            return False
        try:
            strides, _ = t.type.layout()
        except ValueError:
            return False
        expect = 1
        for d in reversed(axes):
            size = t.type.shape[d]
            if size == 1:
                continue
            if expect is None or strides[d] != expect:
                return False
            expect = None if size is None else expect * size
        return True

    def token_dependent_copy(self, t, node):
        """contiguous_copy of t where PyTorch copies only with more than one
        token (.contiguous(), .reshape): at one token t is contiguous and
        PyTorch returns it, so the two are recorded as one-token aliases
        (kept equal after in-place writes when the call has one token)."""
        out = self.contiguous_copy(t, node)
        if self.contiguous_at_one_token(t):
            self.token_aliases.setdefault(self.root(t), []).append((t, out))
            self.token_aliases.setdefault(self.root(out), []).append((out, t))
        return out

    def contiguous_copy(self, t, node):
        """A fresh buffer (memref.alloc) holding t's elements (tx.copy)."""
        out = self.alloc(t.type.contiguous(), t, node, "contiguous")
        self.em.op([], lambda: "tx.copy %s into %s : %s, %s" % (
            t.value, out, t.type, out.type), node)
        # Contiguous in PyTorch, in t's order (the buffer stays token-major).
        return V.Tensor(out, t.dims, tlayout=t.dims)

    def alloc(self, rtype, like, node, hint):
        """memref.alloc of `rtype`, its token size that of tensor `like`."""
        sizes = ""
        if rtype.shape and rtype.shape[0] is None:
            c0 = self.em.constant(0, "index", node)
            n = self.em.fresh("tokens", "index")
            self.em.op([n], lambda: "memref.dim %s, %s : %s" % (like.value, c0, like.type),
                       node)
            sizes = str(n)
        out = self.fresh(hint, rtype)
        self.em.op([out], lambda: "memref.alloc(%s) : %s" % (sizes, out.type), node)
        return out

    def strided_view(self, src, shape, node, required=True):
        """tx.view's rule for a strided source (PyTorch's view: the leading
        dynamic token dimension stays, the rest is split or merged only
        within runs of contiguous dimensions)."""
        strides, offset = src.layout()
        lead = 1 if src.shape and src.shape[0] is None else 0
        if (shape[:lead] != src.shape[:lead] or None in shape[lead:]
                or None in src.shape[lead:]):
            raise FrontendError("view of a slice must keep the token dimension first", node)
        view = _view_strides(src.shape[lead:], strides[lead:], shape[lead:])
        if view is None:
            if not required:
                return None
            raise FrontendError("view of %s as [%s] splits or merges dimensions that are "
                                "not contiguous (PyTorch's view fails too; reshape copies)"
                                % (src, ", ".join("tokens" if d is None else str(d)
                                                  for d in shape)), node)
        return MemRef(shape, src.dtype, strides[:lead] + view, offset)

    # -- indexing, slicing, splitting, concatenation ----------------------------
    def tensor_index(self, t, key, node):
        """t[...]: slices (step 1) of static dimensions are tx.slice views;
        `None` adds a size-1 dimension, `...` stands for the rest, an int
        indexes a size-1 dimension (the batch) away."""
        t = self.tensor(t, node)
        key = list(key) if isinstance(key, tuple) else [key]
        if sum(k is Ellipsis for k in key) > 1:
            raise FrontendError("an index may have one '...'", node)
        used = sum(k is not None and k is not Ellipsis for k in key)
        if used > len(t.dims):
            raise FrontendError("too many indices (%d) for a tensor of %d dimensions"
                                % (used, len(t.dims)), node)
        if Ellipsis in key:
            i = key.index(Ellipsis)
            key[i:i + 1] = [slice(None)] * (len(t.dims) - used)
        else:
            key += [slice(None)] * (len(t.dims) - used)
        dims, d, dropped = [], 0, []
        for k in key:
            if k is None:
                dims.append(None)
                continue
            axis = t.dims[d]
            d += 1
            if isinstance(k, list) and len(k) == 1 and isinstance(k[0], int) and \
                    not isinstance(k[0], bool):
                # x[..., [i], :] (Falcon's multi-query key): one position, kept.
                k = slice(k[0], k[0] + 1 if k[0] != -1 else None)
            if isinstance(k, bool) or not isinstance(k, (int, slice)):
                raise FrontendError("unsupported index %s: only numbers and slices of "
                                    "numbers known at import, None and ..."
                                    % self.describe(k), node)
            if isinstance(k, int):
                if axis is None:
                    if k not in (0, -1):
                        raise FrontendError("index %d of a size-1 dimension" % k, node)
                    continue
                # One position of a static dimension (InternLM2's
                # qkv[..., -2, :]): a size-1 tx.slice, the axis dropped below.
                size = t.type.shape[axis]
                if size is None:
                    raise FrontendError("indexing one position of the token dimension is "
                                        "not supported (its size is dynamic)", node)
                if not -size <= k < size:
                    raise FrontendError("index %d of a dimension of size %d" % (k, size), node)
                t = self.narrow(t, axis, k % size, 1, node)
                dropped.append(axis)
                continue
            if axis is None:
                if k.indices(1) != (0, 1, 1):
                    raise FrontendError("a slice of a size-1 dimension must keep it", node)
                dims.append(None)
                continue
            t = self.slice_axis(t, axis, k, node)
            dims.append(axis)
        if dropped:
            t = self.drop_axes(t, dropped, node)
            dims = self.renumbered(dims, dropped)
        return V.Tensor(t.value, dims)

    @staticmethod
    def renumbered(dims, dropped):
        """`dims` (buffer axes or None) numbered as after drop_axes of the
        buffer axes `dropped`."""
        return None if dims is None else [
            None if a is None else a - sum(x < a for x in dropped) for a in dims]

    def drop_axes(self, t, axes, node):
        """tx.view of t without its size-1 buffer axes `axes` (the other
        strides stay, as PyTorch's view gives them)."""
        keep = [i for i in range(len(t.type.shape)) if i not in axes]
        shape = tuple(t.type.shape[i] for i in keep)
        if t.type.strides is None:
            rtype = MemRef(shape, t.type.dtype)
        else:
            strides, offset = t.type.layout()
            rtype = MemRef(shape, t.type.dtype, [strides[i] for i in keep], offset)
        out = self.view_of(t, "index", rtype)
        self.em.op([out], lambda: "tx.view %s : %s -> %s" % (t.value, t.type, out.type), node)
        return V.Tensor(out, [a for a in t.dims if a not in axes])

    def size_of(self, t, axis):
        return 1 if axis is None else (
            "tokens" if t.type.shape[axis] is None else t.type.shape[axis])

    def slice_axis(self, t, axis, k, node):
        """t sliced by the Python slice `k` along buffer axis `axis`."""
        for v in (k.start, k.stop, k.step):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                raise FrontendError("slice bounds must be numbers known at import, got %s"
                                    % self.describe(v), node)
        size = t.type.shape[axis]
        if size is None:
            if (k.start, k.stop, k.step) in ((None, None, None), (0, None, None)):
                return t
            raise FrontendError("slicing the token dimension is not supported (its size "
                                "is dynamic)", node)
        start, stop, step = k.indices(size)
        if step != 1:
            raise FrontendError("slices with a step are not supported", node)
        if stop <= start:
            raise FrontendError("empty slice [%d:%d] of a dimension of size %d"
                                % (start, stop, size), node)
        return self.narrow(t, axis, start, stop - start, node)

    def narrow(self, t, axis, start, length, node):
        """tx.slice of buffer axis `axis` (a view, no copy)."""
        if start == 0 and length == t.type.shape[axis]:
            return t
        strides, offset = t.type.layout()
        shape = list(t.type.shape)
        shape[axis] = length
        rtype = MemRef(shape, t.type.dtype, strides, offset + start * strides[axis])
        out = self.view_of(t, "slice", rtype)
        self.em.op([out], lambda: "tx.slice %s dim %d offset %d size %d : %s -> %s" % (
            t.value, axis, start, length, t.type, out.type), node)
        return V.Tensor(out, t.dims)

    def dim_axis(self, t, dim, node):
        """The buffer axis of PyTorch dimension `dim` (which must be a
        real one: not a size-1 batch or unsqueezed dimension)."""
        if isinstance(dim, bool) or not isinstance(dim, int) or not \
                -len(t.dims) <= dim < len(t.dims):
            raise FrontendError("dim must be a number in [-%d, %d), got %s"
                                % (len(t.dims), len(t.dims), self.describe(dim)), node)
        axis = t.dims[dim]
        if axis is None:
            raise FrontendError("splitting or concatenating along a size-1 dimension is "
                                "not supported", node)
        if t.type.shape[axis] is None:
            raise FrontendError("splitting or concatenating along the token dimension is "
                                "not supported (its size is dynamic)", node)
        return axis

    def split(self, t, sizes, dim, node, chunks=None):
        """t.split(size or sizes, dim) / t.chunk(chunks, dim): a tuple of
        tx.slice views."""
        t = self.tensor(t, node)
        axis = self.dim_axis(t, dim, node)
        total = t.type.shape[axis]
        if chunks is not None:
            if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
                raise FrontendError("chunk count must be a positive number, got %s"
                                    % self.describe(chunks), node)
            sizes = -(-total // chunks)
        if isinstance(sizes, int) and not isinstance(sizes, bool) and sizes > 0:
            sizes = [min(sizes, total - o) for o in range(0, total, sizes)]
        if not isinstance(sizes, (list, tuple)) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in sizes):
            raise FrontendError("split sizes must be positive numbers known at import, got "
                                "%s" % self.describe(sizes), node)
        if sum(sizes) != total:
            raise FrontendError("split sizes %s do not add up to the dimension's %d"
                                % (list(sizes), total), node)
        parts, start = [], 0
        for n in sizes:
            parts.append(self.narrow(t, axis, start, n, node))
            start += n
        if getattr(self, "test_break", None) == "split-order" and len(set(sizes)) == 1:
            parts.reverse()  # testing only: the pieces in the wrong order
        return tuple(parts)

    def unit_axes_aligned(self, ts, node):
        """Tensors of one rank with a size-1 PyTorch dimension that is a
        buffer axis in some and none in others (RecurrentGemma's one key
        head: the rotated half [tokens, 1, d], the passed half [tokens, d]):
        the others given that axis too (tx.view, no copy), so their buffers
        agree; where one cannot be given it, they stay as they are (the
        caller's error)."""
        if len({len(t.dims) for t in ts}) != 1:
            return ts
        for d in range(len(ts[0].dims)):
            have = [t.dims[d] is not None for t in ts]
            if all(have) or not any(have):
                continue
            if any(h and t.type.shape[t.dims[d]] != 1 for h, t in zip(have, ts)):
                continue  # sizes differ: the caller's error
            try:
                ts = [t if h else self.unit_axis(t, d, node) for h, t in zip(have, ts)]
            except FrontendError:
                return ts
        return ts

    def cat(self, tensors, dim, node):
        """torch.cat: a fresh buffer (memref.alloc) with each tensor copied
        into its slice (tx.copy into tx.slice)."""
        if not isinstance(tensors, (tuple, list)) or not tensors:
            raise FrontendError("torch.cat takes a non-empty tuple or list of tensors", node)
        ts = self.unit_axes_aligned(
            [self.tensor(x, node, "a concatenated tensor") for x in tensors], node)
        first = ts[0]
        axis = self.dim_axis(first, dim, node)
        for x in ts[1:]:
            if [a for a in x.dims if a is not None] != [a for a in first.dims
                                                       if a is not None] or \
                    x.type.dtype != first.type.dtype or len(x.type.shape) != \
                    len(first.type.shape) or any(
                        a != b for i, (a, b) in enumerate(zip(x.type.shape, first.type.shape))
                        if i != axis):
                raise FrontendError("torch.cat of tensors that differ in shape or order "
                                    "(%s, %s) other than along dim %d"
                                    % (first.type, x.type, dim), node)
        shape = list(first.type.shape)
        shape[axis] = sum(x.type.shape[axis] for x in ts)
        out = self.alloc(MemRef(shape, first.type.dtype), first, node, "cat")
        # PyTorch's result is a new tensor, contiguous in the order of its
        # dimensions (whatever the buffer's order).
        whole = V.Tensor(out, first.dims, tlayout=first.dims)
        start = 0
        for x in ts:
            part = self.narrow(whole, axis, start, x.type.shape[axis], node)
            self.em.op([], lambda x=x, part=part: "tx.copy %s into %s : %s, %s" % (
                x.value, part.value, x.type, part.type), node)
            start += x.type.shape[axis]
        return whole

    def method(self, obj, name, args, kwargs, node):
        if isinstance(obj, dict):
            if name == "get":
                return obj.get(*args)
            if name in ("items", "keys", "values"):
                return list(getattr(obj, name)())
        if isinstance(obj, str) and name in ("startswith", "endswith", "lower", "upper",
                                             "format"):
            return getattr(obj, name)(*args)
        if isinstance(obj, V.AttentionChain):
            return self.chain_method(obj, name, args, kwargs, node)
        if isinstance(obj, V.RepeatedKV):
            return self.repeated_method(obj, name, args, kwargs, node)
        if isinstance(obj, V.NormChain):
            return self.norm_chain_method(obj, name, args, kwargs, node)
        if isinstance(obj, V.LinearWeight):
            return self.weight_method(obj, name, args, kwargs, node)
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):
            from .table import NUMBER_METHODS
            if name in NUMBER_METHODS:
                return float(obj) if name in ("float", "double") else obj
        if isinstance(obj, V.Positions):
            return self.positions_method(obj, name, args, kwargs, node)
        if isinstance(obj, V.BoolMask):
            return self.mask_method(obj, name, args, kwargs, node)
        if isinstance(obj, V.SinusoidTable):
            return self.table_method(obj, name, args, kwargs, node)
        if isinstance(obj, V.SinusoidRows):
            if name == "split":
                return self.sinusoid_split(obj, args, kwargs, node)
            if name in ("to", "float", "type", "contiguous", "detach"):
                return obj
            raise FrontendError("the rows of a sinusoid table may only be split in their "
                                "two halves, not .%s()" % name, node)
        if isinstance(obj, V.CausalMask):
            if name in ("size", "dim"):
                return self.size_method(name, V.CausalMask.SIZES, args, kwargs, node)
            if name in ("to", "type", "type_as", "float", "contiguous", "detach"):
                return obj
        if isinstance(obj, V.Config) and name == "update":
            # PretrainedConfig.update(dict): its keys set as attributes.
            if kwargs or len(args) != 1 or not isinstance(args[0], dict):
                raise FrontendError("config.update() takes one dict", node)
            return self.config_set(obj, args[0], node)
        if isinstance(obj, list) and name in LIST_METHODS:
            # A Python list of the import (T5's `layers.append(...)`,
            # outputs collected in forward): changed in place, as Python's.
            if kwargs:
                raise FrontendError("list.%s() takes no keyword arguments here" % name, node)
            try:
                return getattr(obj, name)(*args)
            except (TypeError, ValueError, IndexError) as err:
                raise FrontendError("list.%s(): %s" % (name, err), node) from None
        if isinstance(obj, V.ModuleList) and name in ("append", "extend") and \
                getattr(self, "in_init", False) and not obj.sequential:
            # nn.ModuleList.append(module) / extend([...]) in __init__: named
            # by index, as the checkpoint names them.
            if kwargs or len(args) != 1:
                raise FrontendError("ModuleList.%s() takes one argument" % name, node)
            items = [args[0]] if name == "append" else list(args[0])
            names = [str(len(obj.items) + i) for i in range(len(items))]
            obj.names += names
            obj.items += items
            if obj.path is not None:
                for n, item in zip(names, items):
                    self.rebase(item, "%s.%s" % (obj.path, n))
            return obj
        if not isinstance(obj, V.Tensor):
            raise FrontendError("unsupported method '%s' of %s" % (name, self.describe(obj)),
                                node)
        t = obj
        if name == "flatten":
            return self.flatten(t, args, kwargs, node)
        if name in ("view", "reshape"):
            return self.view(t, args, node, copy=name == "reshape")
        if name == "transpose":
            a = bind("Tensor.transpose", ["dim0", "dim1"], args, kwargs, node)
            return self.transposed(self.tensor(t, node), a["dim0"], a["dim1"], node)
        if name == "permute":
            perm = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
                else list(args)
            if not args and "dims" in kwargs:
                perm = list(kwargs["dims"])
            t = self.tensor(t, node)
            n = len(t.dims)
            perm = [self.dim_index(p, n, "permute", node) for p in perm]
            if sorted(perm) != list(range(n)):
                raise FrontendError("permute: %r is not a permutation of the %d dimensions"
                                    % (perm, n), node)
            return V.Tensor(t.value, [t.dims[p] for p in perm], tlayout=t.tlayout)
        if name == "matmul":
            return self.matmul(t, args[0] if args else kwargs.get("other"), node)
        if name == "repeat_interleave":
            from .table import repeat_interleave
            return repeat_interleave(self, node, [t] + list(args), kwargs)
        if name == "contiguous":
            # PyTorch returns the tensor itself when it is contiguous and a
            # copy otherwise: an in-place write then reaches the original
            # or not. (At one token a column slice is contiguous too; tx
            # takes the many-token case.)
            bind("Tensor.contiguous", [("memory_format", "torch.contiguous_format")],
                 args, kwargs, node)
            t = self.tensor(t, node)
            return t if self.is_contiguous(t) else self.token_dependent_copy(t, node)
        if name in ("float", "half", "bfloat16", "double", "to", "type_as") or \
                (name == "type" and args):
            return self.cast(self.tensor(t, node), name, args, kwargs, node)
        if name in ("clone", "detach"):
            self.tensor(t, node)
            if name == "clone":
                return self.unary_copy(t, node)
            return t
        if name in ("size", "dim"):
            return self.size_method(name, self.tensor(t, node).sizes(), args, kwargs, node)
        if name == "unsqueeze":
            t = self.tensor(t, node)
            d = bind("Tensor.unsqueeze", ["dim"], args, kwargs, node)["dim"]
            d = self.dim_index(d, len(t.dims), "unsqueeze", node, extra=1)
            return V.Tensor(t.value, t.dims[:d] + [None] + t.dims[d:],
                            tlayout=None if t.tlayout is None else
                            t.tlayout[:d] + [None] + t.tlayout[d:])
        if name in ("chunk", "split", "narrow"):
            return self.split_method(name, t, args, kwargs, node)
        if name == "unbind":
            return self.unbind(t, args, kwargs, node)
        if name == "unflatten":
            return self.unflatten(t, args, kwargs, node)
        if name == "select":
            a = bind("Tensor.select", ["dim", "index"], args, kwargs, node)
            t = self.tensor(t, node)
            d = self.dim_index(a["dim"], len(t.dims), "select", node)
            return self.tensor_index(t, tuple([slice(None)] * d + [a["index"]]), node)
        if name == "expand":
            return self.expand(t, args, kwargs, node)
        if name == "squeeze" and (args or kwargs):
            a = bind("Tensor.squeeze", ["dim"], args, kwargs, node)
            t = self.tensor(t, node)
            d = self.dim_index(a["dim"], len(t.dims), "squeeze", node)
            axis = t.dims[d]
            if axis is None:
                return V.Tensor(t.value, t.dims[:d] + t.dims[d + 1:],
                                tlayout=None if t.tlayout is None else
                                t.tlayout[:d] + t.tlayout[d + 1:])
            size = t.type.shape[axis]
            if size is None:
                # PyTorch drops it when the call has one token only.
                raise FrontendError("squeeze of the token dimension is not supported (it "
                                    "depends on the token count)", node)
            if size != 1:
                return t  # PyTorch leaves a dimension of another size
            # A size-1 axis of the buffer (a slice, a piece, x[:, :, :1]): gone.
            out = self.drop_axes(t, [axis], node)
            return V.Tensor(out.value, self.renumbered(t.dims[:d] + t.dims[d + 1:], [axis]),
                            tlayout=self.renumbered(None if t.tlayout is None else
                                                    [x for x in t.tlayout if x != axis],
                                                    [axis]))
        kind = name[:-1] if name.endswith("_") else name
        if kind in CLAMP_PARAMS:
            return self.clamp("Tensor." + name, [t] + list(args), kwargs, node,
                              into=t if name.endswith("_") else None)
        if kind in ("add", "sub", "mul", "div"):
            # Tensor.add(other, *, alpha=1) (input + alpha * other), sub the
            # same, mul(other), div(other, *, rounding_mode=None); the _
            # forms write the tensor.
            params = ["other", "*"] + ([("alpha", 1)] if kind in ("add", "sub") else []) + \
                ([("rounding_mode", None)] if kind == "div" else [])
            a = bind("Tensor.%s" % name, params, args, kwargs, node,
                     fixed=("rounding_mode",) if kind == "div" else ())
            other = self.scaled(a["other"], a.get("alpha", 1), node)
            if name.endswith("_"):
                return self.binary_into(kind, t, other, t, node)
            return self.binary(kind, t, other, node)
        if name == "copy_":
            a = bind("Tensor.copy_", ["src", ("non_blocking", False)], args, kwargs, node)
            return self.copy_into(a["src"], t, node)
        if name == "new_empty":
            return self.new_empty(t, args, kwargs, node)
        if kind in ("exp", "neg", "relu", "tanh", "sigmoid"):
            bind("Tensor.%s" % name, [], args, kwargs, node)
            if name.endswith("_"):
                return self.unary_into(kind, t, t, node)
            return self.unary(kind, t, node)
        if name in self.NORM_METHODS:
            chain = self.norm_start(t, name, args, kwargs, node)
            if chain is not None:
                return chain
        return self.opaque("Tensor.%s" % name, [t] + list(args), kwargs, node)

    def new_empty(self, t, args, kwargs, node):
        """t.new_empty(*size) (DeepSeek-V2's `k_pe.new_empty(bsz, num_heads,
        q_len, q_head_dim)`): a fresh buffer (memref.alloc, its elements
        undefined as PyTorch's are), token-major as every tx buffer: the
        token dimension first, then the other dimensions larger than 1 in
        order; size-1 dimensions are no axes. Its token count is t's."""
        sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
            else list(args)
        bind("Tensor.new_empty", ["*", ("dtype", None), ("device", None),
                                   ("requires_grad", False), ("layout", None),
                                   ("pin_memory", False)], [], kwargs, node,
             fixed=("requires_grad", "layout", "pin_memory"))
        t = self.tensor(t, node)
        for x in sizes:
            if not (x is V.TOKENS or isinstance(x, int) and not isinstance(x, bool) and x >= 1):
                raise FrontendError("new_empty: sizes must be numbers known at import or the "
                                    "token count, got %s" % self.describe(x), node)
        if sum(x is V.TOKENS for x in sizes) > 1:
            raise FrontendError("new_empty with the token count in two dimensions is not "
                                "supported", node)
        axes = ([i for i, x in enumerate(sizes) if x is V.TOKENS] +
                [i for i, x in enumerate(sizes) if x is not V.TOKENS and x != 1])
        if V.TOKENS in sizes and (t.type.shape[:1] != (None,) or 0 not in t.dims):
            raise FrontendError("new_empty with the token count, of a tensor without the "
                                "token dimension: not supported", node)
        shape = tuple(None if sizes[i] is V.TOKENS else sizes[i] for i in axes)
        out = self.alloc(MemRef(shape, self.dtype), t, node, "empty")
        dims = [axes.index(i) if i in axes else None for i in range(len(sizes))]
        return V.Tensor(out, dims, tlayout=dims)

    def index_assign(self, t, key, value, node):
        """t[key] = value: PyTorch copies value into the view t[key],
        broadcasting it (DeepSeek-V2's `key_states[:, :, :, nope:] = k_pe`,
        k_pe's one head over all heads): tx.copy into the view (tx.slice),
        or, for each dimension value broadcasts (size 1 where the view's
        is larger), one tx.copy per position of it."""
        view = self.tensor_index(t, key, node)
        if not isinstance(value, V.Tensor):
            raise FrontendError("assigning %s to a slice of a tensor is not supported (only a "
                                "tensor)" % self.describe(value), node)
        value = self.tensor(value, node, "the assigned value")
        want, have = list(view.sizes()), list(value.sizes())
        if len(have) > len(want):
            extra = len(have) - len(want)
            if any(d is not None for d in value.dims[:extra]):
                raise FrontendError("a tensor of sizes %s assigned to a slice of sizes %s: "
                                    "they do not broadcast" % (tuple(have), tuple(want)),
                                    node)
            value = V.Tensor(value.value, value.dims[extra:])
            have = have[extra:]
        value = V.Tensor(value.value, [None] * (len(want) - len(have)) + value.dims)
        have = [1] * (len(want) - len(have)) + have
        spread = []
        for i, (w, h) in enumerate(zip(want, have)):
            if w is h or w == h and V.TOKENS not in (w, h):
                continue
            if h == 1 and isinstance(w, int):
                spread.append(i)
                continue
            raise FrontendError("a tensor of sizes %s assigned to a slice of sizes %s: they "
                                "do not broadcast" % (tuple(value.sizes()), tuple(want)),
                                node)
        if not spread:
            return self.copy_into(value, view, node)
        ones = [value.dims[i] for i in spread if value.dims[i] is not None]
        dims = self.renumbered([d for i, d in enumerate(value.dims) if i not in spread], ones)
        if ones:
            value = self.drop_axes(value, ones, node)
        value = V.Tensor(value.value, dims)
        import itertools
        for at in itertools.product(*(range(want[i]) for i in spread)):
            index = [slice(None)] * len(want)
            for i, j in zip(spread, at):
                index[i] = j
            self.copy_into(value, self.tensor_index(view, tuple(index), node), node)
        return view

    def split_method(self, name, t, args, kwargs, node):
        """t.chunk(n, dim=0), t.split(size_or_sizes, dim=0), t.narrow(dim,
        start, length) (and the torch.* functions of the same names)."""
        from .table import _arg
        if isinstance(t, V.SinusoidRows) and name == "split":
            return self.sinusoid_split(t, args, kwargs, node)
        if name == "narrow":
            t = self.tensor(t, node)
            axis = self.dim_axis(t, _arg(args, kwargs, 0, "dim", node), node)
            start = _arg(args, kwargs, 1, "start", node)
            length = _arg(args, kwargs, 2, "length", node)
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, length)) \
                    or length < 1:
                raise FrontendError("narrow(dim, start, length) needs numbers known at "
                                    "import", node)
            if start < 0:
                start += t.type.shape[axis]
            return self.slice_axis(t, axis, slice(start, start + length), node)
        dim = _arg(args, kwargs, 1, "dim", node, 0)
        if name == "chunk":
            return self.split(t, None, dim, node, chunks=_arg(args, kwargs, 0, "chunks", node))
        return self.split(t, _arg(args, kwargs, 0, ("split_size_or_sections", "split_size"),
                                  node), dim, node)

    def expand(self, t, args, kwargs, node):
        """t.expand(*sizes): -1 (or the size it has) keeps a dimension; a
        size-1 dimension expanded to n is a broadcast view. tx has no
        broadcast buffers, so this is only the key/value of an attention
        with one head (or fewer than the query's) expanded to the query's
        heads (GPTBigCode's `key.unsqueeze(1).expand(-1, heads, -1, -1)`
        before SDPA): a V.RepeatedKV, which only the attention may read
        (tx.attention does GQA by head counts); one expanded dimension of a
        4-dimensional tensor, else an error."""
        a = bind("Tensor.expand", [("size", None)], args[:1] if len(args) == 1 and
                 isinstance(args[0], (tuple, list)) else [tuple(args)] if args else [],
                 kwargs, node)
        t = self.tensor(t, node)
        sizes = a["size"]
        if not isinstance(sizes, (tuple, list)) or len(sizes) != len(t.dims):
            raise FrontendError("expand needs one size per dimension (%d), got %s"
                                % (len(t.dims), self.describe(sizes)), node)
        have = t.sizes()
        grown = []
        for i, (s, h) in enumerate(zip(sizes, have)):
            if s == -1 and s is not V.TOKENS or s is h or \
                    isinstance(s, int) and not isinstance(s, bool) and s == h:
                continue
            if h == 1 and t.dims[i] is None and isinstance(s, int) and \
                    not isinstance(s, bool) and s > 1:
                grown.append((i, s))
                continue
            raise FrontendError("expand of dimension %d (size %s) to %s is not supported "
                                "(only a size-1 dimension to a number known at import)"
                                % (i, "tokens" if h is V.TOKENS else h,
                                   s if isinstance(s, int) else self.describe(s)), node)
        if not grown:
            return t
        if len(grown) > 1 or len(t.dims) != 4:
            raise FrontendError("expand is supported only for the heads of an attention's "
                                "key or value (one size-1 dimension of a 4-dimensional "
                                "tensor expanded to the query's heads)", node)
        i, n = grown[0]
        return V.RepeatedKV(self.unit_axis(t, i, node), n, node, what="expand")

    def unit_axis(self, t, pos, node):
        """t with its size-1 PyTorch dimension `pos` (an unsqueezed one: no
        axis of the buffer) made a size-1 axis of the buffer (a tx.view, no
        copy): GPTBigCode's one key/value head `key.unsqueeze(1)`, which
        tx.attention reads as [tokens, 1, head_dim]."""
        if t.dims[pos] is not None:
            return t
        if not t.identity():
            raise FrontendError("a size-1 dimension of a transposed tensor cannot be made a "
                                "dimension of its buffer (tx buffers stay token-major)", node)
        k = sum(d is not None for d in t.dims[:pos])
        if k == 0 and t.type.shape and t.type.shape[0] is None:
            k = 1  # the tokens stay the buffer's first axis ([tokens, 1, head_dim])
        shape = list(t.type.shape)
        shape.insert(k, 1)
        if t.type.strides is None:
            rtype = MemRef(tuple(shape), t.type.dtype)
        else:
            rtype = self.strided_view(t.type, tuple(shape), node)
        out = self.view_of(t, "heads", rtype)
        self.em.op([out], lambda: "tx.view %s : %s -> %s" % (t.value, t.type, out.type), node)
        dims = [None if d is None else d + (d >= k) for d in t.dims]
        dims[pos] = k
        return V.Tensor(out, dims)

    def unary_copy(self, t, node):
        one = self.em.constant(1.0, self.dtype, node)
        out = self.fresh("clone", t.type.contiguous())
        self.em.op([out], lambda: "tx.binary mul %s, %s : %s, %s -> %s" % (
            t.value, one, t.type, self.dtype, out.type), node)
        return V.Tensor(out, t.dims)

    # -- transformer ops -------------------------------------------------------
    @staticmethod
    def rotary_shaped(x):
        """[tokens, heads, head_dim] buffers, or [tokens, head_dim] ones whose
        heads dimension is a size-1 one of PyTorch's (DeepSeek-V2's one
        rotary key head, `k_pe.view(bsz, q_len, 1, d).transpose(1, 2)`)."""
        n = len(x.type.shape)
        return (n == 3 and x.dims[-1] == 2) or \
            (n == 2 and x.dims[-1] == 1 and len(x.dims) == 4)

    def unit_heads(self, x, heads_dim, node):
        """x [tokens, head_dim] whose PyTorch dimension `heads_dim` is a
        size-1 one: the same elements viewed [tokens, 1, head_dim]."""
        if len(x.type.shape) != 2 or len(x.dims) != 4 or \
                not isinstance(heads_dim, int) or isinstance(heads_dim, bool) or \
                not -4 <= heads_dim < 4 or x.dims[heads_dim] is not None or \
                [d for d in x.dims if d is not None] != [0, 1]:
            return x
        shape = (x.type.shape[0], 1, x.type.shape[1])
        rtype = MemRef(shape, x.type.dtype) if x.type.strides is None else \
            self.strided_view(x.type, shape, node)
        out = self.view_of(x, "heads", rtype)
        self.em.op([out], lambda: "tx.view %s : %s -> %s" % (x.value, x.type, out.type),
                   node)
        dims = [2 if d == 1 else d for d in x.dims]
        dims[heads_dim] = 1
        return V.Tensor(out, dims)

    def deinterleaved(self, x, node):
        """A fresh [tokens, heads, d] buffer holding x's pairs de-interleaved:
        features 2i first, then 2i + 1 (DeepSeek-V2's `x.view(b, h, s, d // 2,
        2).transpose(4, 3).reshape(b, h, s, d)`): x viewed [tokens, heads,
        d / 2, 2], each of the two strided slices copied into one half."""
        shape = x.type.shape
        half = shape[2] // 2
        split = shape[:2] + (half, 2)
        rtype = MemRef(split, x.type.dtype) if x.type.strides is None else \
            self.strided_view(x.type, split, node)
        pairs = self.view_of(x, "pairs", rtype)
        self.em.op([pairs], lambda: "tx.view %s : %s -> %s" % (
            x.value, x.type, pairs.type), node)
        out = self.alloc(x.type.contiguous(), x, node, "deinterleaved")
        whole = V.Tensor(out, [0, 1, 2])
        for p in (0, 1):
            part = self.drop_axes(self.narrow(V.Tensor(pairs, [0, 1, 2, 3]), 3, p, 1, node),
                                  [3], node)
            self.copy_into(part, self.narrow(whole, 2, p * half, half, node), node)
        return V.Tensor(out, x.dims)

    def rotary_heads_dim(self, x, cos, unsqueeze_dim):
        """The dimension of a [batch, ., ., head_dim] x that cos/sin
        unsqueezed at `unsqueeze_dim` broadcast over, as PyTorch aligns the
        shapes from the last dimension: cos [1, tokens, d] unsqueezed at 0
        (Pixtral's `unsqueeze_dim=0`) is [1, 1, tokens, d], as at 1; at -2 as
        at 2. Any other `unsqueeze_dim` (or x) is returned as it is (the
        checks of rotary then decide)."""
        u = unsqueeze_dim
        if isinstance(u, bool) or not isinstance(u, int) or not isinstance(x, V.Tensor) or \
                x.dims is None or len(x.dims) != 4 or not isinstance(cos, V.Tensor) or \
                cos.dims is None:
            return u
        r = len(cos.dims)
        if not -(r + 1) <= u <= r:
            return u
        cd = list(cos.dims)
        cd.insert(u + r + 1 if u < 0 else u, None)
        if len(cd) > 4 or x.dims.count(1) != 1:
            return u
        cd = [None] * (4 - len(cd)) + cd
        heads = x.dims.index(1)
        if cd[heads] is None and all((c == 0) == (d == 0) for c, d in zip(cd, x.dims)):
            return heads
        return u

    def rotary(self, x, cos, sin, heads_dim, node, rotary_dim=None, interleaved=False,
               negate_sin=False):
        """tx.rotary on the first `rotary_dim` features of each head (all of
        them by default); the rest pass through (HF's partial rotary: the
        rotated part and the rest concatenated). `interleaved`: pairs (2i,
        2i+1) (GPT-J, Cohere), else the halves (NeoX); "deinterleaved": the
        halves of a copy with the pairs de-interleaved (DeepSeek-V2). A
        [tokens, head_dim] x whose heads are a size-1 dimension of PyTorch's
        is viewed [tokens, 1, head_dim] first."""
        x = self.tensor(x, node, "the rotary input")
        for c in (cos, sin):
            if not isinstance(c, V.Tensor) or c.role not in ("cos", "sin"):
                raise FrontendError("rotary cos/sin must be the forward's position "
                                    "embeddings", node)
        heads_dim = self.rotary_heads_dim(x, cos, heads_dim)
        x = self.unit_heads(x, heads_dim, node)
        if len(x.type.shape) != 3 or x.dims[-1] != 2 or x.dims[heads_dim] != 1:
            raise FrontendError("rotary input must be [..., heads, tokens, head_dim] with "
                                "heads at dimension %d" % heads_dim, node)
        head_dim = x.type.shape[2]
        rot = head_dim if rotary_dim is None else rotary_dim
        if isinstance(rot, bool) or not isinstance(rot, int) or rot < 2 or rot % 2 or \
                rot > head_dim:
            raise FrontendError("the rotary dimension must be even and within the head "
                                "dimension %d, got %r" % (head_dim, rot), node)
        if interleaved == "deinterleaved":
            if rot != head_dim:
                raise FrontendError("a rotary helper de-interleaving the pairs with partial "
                                    "rotary (%d of %d features) is not supported"
                                    % (rot, head_dim), node)
            x, interleaved = self.deinterleaved(x, node), False
        for c in (cos, sin):
            self.fix_last(c, rot // 2, node, "rotary %s" % c.role)
        if negate_sin:
            # The helper rotates by minus the angle (NanoChat's rotate_half):
            # tx.rotary of -sin.
            src = sin
            neg = self.fresh("negsin", src.type.contiguous())
            self.em.op([neg], lambda: "tx.unary neg %s : %s -> %s" % (
                src.value, src.type, neg.type), node)
            sin = V.Tensor(neg, src.dims)
        part = self.narrow(x, 2, 0, rot, node)
        out = self.fresh("rot", part.type.contiguous())
        self.em.op([out], lambda: "tx.rotary %s, %s, %s%s : %s, %s, %s -> %s" % (
            part.value, cos.value, sin.value, " interleaved" if interleaved else "",
            part.type, cos.type, sin.type, out.type), node)
        if rot == head_dim:
            return V.Tensor(out, x.dims)
        rest = self.narrow(x, 2, rot, head_dim - rot, node)
        return self.cat([V.Tensor(out, x.dims), rest], -1, node)

    def attention(self, q, k, v, mask, scale, node, heads_first, window=None,
                  softcap=None, window_given=True):
        """tx.attention of q, k, v; `mask` the forward's causal mask or None;
        `window` a sliding window (HF's sliding_window: key s visible to
        query t when t - s < window), `softcap` Gemma 2's score soft-capping
        (c * tanh(x / c)). `window_given`: whether the code said whether
        this attention is windowed (a `sliding_window=` argument); if not,
        and the config gives a sliding window, the mask the model passes may
        be windowed: an error (see effective_sliding_window)."""
        reps = [a.n_rep if isinstance(a, V.RepeatedKV) else 1 for a in (k, v)]
        k, v = (a.tensor if isinstance(a, V.RepeatedKV) else a for a in (k, v))
        q, k, v = (self.tensor(a, node, "attention %s" % w) for a, w in
                   ((q, "query"), (k, "key"), (v, "value")))
        for a, rep in zip((k, v), reps):
            if rep != 1 and len(a.type.shape) == 3 and len(q.type.shape) == 3 and \
                    a.type.shape[1] * rep != q.type.shape[1]:
                raise FrontendError("repeat_kv gives %d heads, the query has %d"
                                    % (a.type.shape[1] * rep, q.type.shape[1]), node)
        want = [None, 1, 0, 2] if heads_first else [None, 0, 1, 2]
        # One key/value head unsqueezed (GPTBigCode's `key.unsqueeze(1)`
        # before SDPA, [batch, 1, tokens, head_dim] on a [tokens, head_dim]
        # buffer): a size-1 heads axis of the buffer, broadcast by
        # tx.attention.
        heads = 1 if heads_first else 2
        k, v = (self.unit_axis(a, heads, node) if len(a.dims) == 4 and
                len(a.type.shape) == 2 and a.dims[heads] is None else a for a in (k, v))
        for a in (q, k, v):
            if len(a.type.shape) != 3 or [d for d in a.dims] != want:
                raise FrontendError("attention expects [batch, %s, head_dim] tensors"
                                    % ("heads, tokens" if heads_first else "tokens, heads"),
                                    node)
        if mask is not None and not isinstance(mask, V.CausalMask):
            raise FrontendError("the attention mask must be the forward's attention_mask "
                                "(causal) or None", node)
        if scale is None:
            scale = q.type.shape[2] ** -0.5
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise FrontendError("attention scale must be a number known at import", node)
        if window is not None:
            if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
                raise FrontendError("sliding_window must be a positive integer known at "
                                    "import, got %s" % self.describe(window), node)
            if mask is None:
                raise FrontendError("sliding_window=%d without the causal attention mask: "
                                    "tx.attention's window is causal (the keys before "
                                    "the query)" % window, node)
        elif not window_given and mask is not None:
            configured = self.effective_sliding_window(node)
            if configured is not None:
                raise FrontendError(
                    "the config's sliding_window is %d, but this attention does not say "
                    "whether it is windowed (no sliding_window= argument): the mask the "
                    "model passes may be a sliding-window mask; not supported (pass "
                    "sliding_window= to the attention function)" % configured, node)
        if softcap is not None:
            if isinstance(softcap, bool) or not isinstance(softcap, (int, float)) or \
                    not 0 < softcap < float("inf"):
                raise FrontendError("softcap must be a positive number known at import, "
                                    "got %s" % self.describe(softcap), node)
        # [tokens, q_heads, the value's head_dim] (DeepSeek-V2's v_head_dim
        # differs from the query's).
        out = self.fresh("attn", MemRef(q.type.shape[:2] + v.type.shape[2:], q.type.dtype))
        attrs = " causal" if mask is not None else ""
        if window is not None:
            attrs += " window %d" % window
        if softcap is not None:
            attrs += " softcap %s" % float_literal(float(softcap))
        self.em.op([out], lambda: "tx.attention %s, %s, %s scale %s%s : %s, %s, %s -> %s" % (
            q.value, k.value, v.value, float_literal(scale), attrs, q.type, k.type, v.type,
            out.type), node)
        # PyTorch's result (the product with v) is a new tensor, contiguous in
        # [batch, heads, tokens, head_dim] order.
        return V.Tensor(out, q.dims, tlayout=q.dims)

    def effective_sliding_window(self, node):
        """The sliding window the config gives, as HF's config classes read
        it (table.config_value: None when use_sliding_window is false)."""
        from . import table
        window = table.config_value(self.config.data, "sliding_window", None)
        if window is None:
            return None
        if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
            raise FrontendError("config sliding_window must be a positive integer or null, "
                                "got %r" % (window,), node)
        return window

    # -- attention written out: matmul, scale, mask, softmax, matmul ------------
    HEADS_FIRST = [None, 1, 0, 2]    # [batch, heads, tokens, head_dim]
    KEY_TRANSPOSED = [None, 1, 2, 0]  # [batch, heads, head_dim, tokens]

    def weight_method(self, w, name, args, kwargs, node):
        """Methods of an nn.Linear subclass's weight (V.LinearWeight): its
        transpose (`.t()`, `.transpose(0, 1)`), sizes, dtype conversions;
        nothing else."""
        if name == "t" and not args and not kwargs:
            return V.LinearWeight(w.layer, not w.transposed)
        if name == "transpose" and not kwargs and len(args) == 2 and \
                sorted(d % 2 if isinstance(d, int) and not isinstance(d, bool) and
                       -2 <= d < 2 else 9 for d in args) == [0, 1]:
            return V.LinearWeight(w.layer, not w.transposed)
        if name in ("size", "dim") and not kwargs:
            sizes = w.sizes()
            return len(sizes) if name == "dim" else sizes if not args else sizes[args[0]]
        if name in ("to", "type", "type_as", "float", "contiguous", "detach"):
            return w
        raise FrontendError("method '%s' of %s: not supported (only x @ self.weight.T is)"
                            % (name, self.describe(w)), node)

    def weight_matmul(self, a, b, node):
        """x @ self.weight.T of an nn.Linear subclass (Falcon's FalconLinear):
        tx.linear of the weight alone; any other product with the weight is
        an error."""
        if isinstance(a, V.Tensor) and isinstance(b, V.LinearWeight) and b.transposed:
            return self.linear(b.layer, a, node)
        w = a if isinstance(a, V.LinearWeight) else b
        raise FrontendError("%s is used in a product other than x @ self.weight.T "
                            "(tx.linear): not supported" % self.describe(w), node)

    def matmul(self, a, b, node):
        """torch.matmul(a, b), a @ b, a.matmul(b): the two matmuls of
        attention written out (q @ k^T begins an AttentionChain, probs @ v
        ends it in one tx.attention); x @ self.weight.T of an nn.Linear
        subclass is tx.linear; any other matmul of tensors is an opaque
        call, as before."""
        if isinstance(a, V.LinearWeight) or isinstance(b, V.LinearWeight):
            return self.weight_matmul(a, b, node)
        for x in (a, b):
            if isinstance(x, V.AttentionChain) and not x.probs:
                raise FrontendError("%s are multiplied by a matrix before softmax: not "
                                    "supported (only torch.matmul(probs, v) after "
                                    "softmax(dim=-1))" % x.what(), node)
        if isinstance(b, V.AttentionChain):
            raise FrontendError("%s are the right operand of a matmul: only "
                                "torch.matmul(probs, v) is supported" % b.what(), node)
        if isinstance(a, V.AttentionChain):
            return self.chain_output(a, b, node)
        if isinstance(a, V.RepeatedKV):
            raise FrontendError("repeat_kv of the query is not supported", node)
        k = b.tensor if isinstance(b, V.RepeatedKV) else b
        merged = False
        if isinstance(a, V.Tensor) and isinstance(k, V.Tensor) and a.dims == [1, 0, 2] and \
                k.dims == [1, 2, 0] and a.type is not None and k.type is not None:
            # BART's torch.bmm(q, k.transpose(1, 2)) of [batch * heads,
            # tokens, head_dim] views (batch 1): the heads-first product.
            a, k = V.Tensor(a.value, [None] + a.dims), V.Tensor(k.value, [None] + k.dims)
            merged = True
        if isinstance(a, V.Tensor) and isinstance(k, V.Tensor) and a.type is not None \
                and k.type is not None and len(a.type.shape) == 3 and \
                len(k.type.shape) == 3 and a.dims == self.HEADS_FIRST and \
                k.dims == self.KEY_TRANSPOSED:
            q = self.tensor(a, node, "the query")
            rep = b.n_rep if isinstance(b, V.RepeatedKV) else 1
            qh, kh, d = q.type.shape[1], k.type.shape[1], q.type.shape[2]
            if k.type.shape[2] != d:
                raise FrontendError("q @ k^T: head dimensions %d and %d differ"
                                    % (d, k.type.shape[2]), node)
            if kh * rep != qh and not (kh == 1 and rep == 1):
                raise FrontendError("q @ k^T: %d query heads and %d key heads%s do not "
                                    "broadcast (repeat_kv the keys to the query's heads)"
                                    % (qh, kh * rep, " (repeated)" if rep != 1 else ""),
                                    node)
            k = V.Tensor(k.value, list(self.HEADS_FIRST))  # k itself, not k^T
            chain = V.AttentionChain(q, (k, rep), node)
            chain.mark = self.norm_mark()
            chain.merged = merged
            return chain
        if isinstance(b, V.RepeatedKV):
            raise FrontendError("the result of repeat_kv (line %d) in a matmul that is not "
                                "q @ k.transpose(-2, -1) with q and k [batch, heads, "
                                "tokens, head_dim]" % b.node.lineno, node)
        return self.opaque("torch.matmul", [a, b], {}, node)

    def chain_output(self, probs, v, node):
        """torch.matmul(probs, v): the one tx.attention of the chain."""
        rep = v.n_rep if isinstance(v, V.RepeatedKV) else 1
        v = v.tensor if isinstance(v, V.RepeatedKV) else v
        v = self.tensor(v, node, "the value")
        if probs.merged and v.dims == [1, 0, 2]:
            v = V.Tensor(v.value, [None] + v.dims)  # BART's [batch * heads, tokens, d]
        (k, krep), q = probs.k, probs.q
        if len(v.type.shape) != 3 or v.dims != self.HEADS_FIRST:
            raise FrontendError("torch.matmul(probs, v): v must be [batch, heads, tokens, "
                                "head_dim] (as k was)", node)
        qh, kh, vh = q.type.shape[1], k.type.shape[1], v.type.shape[1]
        if vh * rep != qh and not (vh == 1 and rep == 1):
            raise FrontendError("probs @ v: %d query heads and %d value heads do not "
                                "broadcast" % (qh, vh * rep), node)
        if vh != kh or qh % kh:
            raise FrontendError("probs @ v: the keys have %d heads and the values %d (tx."
                                "attention shares one head count for k and v)"
                                % (kh, vh), node)
        block, length = probs.mark
        if block is not self.em.blocks[-1] or len(block.items) != length:
            raise FrontendError("%s and torch.matmul(probs, v) here are apart (other "
                                "operations, or another block, in between: q or k may "
                                "have been written since): not supported" % probs.what(),
                                node)
        scale, softcap = probs.scale, None
        if probs.capped:
            # post * tanh(scale * s) = c * tanh((scale * c) * s / c), c = post.
            if not 0 < probs.post < float("inf"):
                raise FrontendError("%s are soft-capped (tanh) and then multiplied by %r: "
                                    "only a positive factor (the cap) is supported"
                                    % (probs.what(), probs.post), node)
            scale, softcap = probs.scale * probs.post, probs.post
        window = probs.where[1] if probs.where is not None else None
        out = self.attention(q, k, v, V.CausalMask() if probs.causal or probs.where
                             else None, scale, node, heads_first=True, softcap=softcap,
                             window=window, window_given=False)
        if probs.merged:
            return V.Tensor(out.value, out.dims[1:])  # [batch * heads, tokens, d]
        return out

    def mask_method(self, m, name, args, kwargs, node):
        """A boolean mask of __init__: `.view(1, 1, n, n)` (leading size-1
        dimensions), dtype/device conversions."""
        if name in ("to", "bool", "type", "contiguous", "detach"):
            return m
        if name in ("view", "reshape") and not kwargs and not getattr(m, "tokens", False):
            sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
                else list(args)
            if len(sizes) >= 2 and all(x == 1 for x in sizes[:-2]) and \
                    sizes[-2:] == [m.size, m.size]:
                return V.BoolMask(m.keep, m.size, len(sizes) - 2)
        raise FrontendError("a boolean attention mask: .%s() is not supported (only "
                            ".view(1, 1, n, n) and its rows and columns of the tokens)"
                            % name, node)

    def chain_where(self, cond, x, other, node):
        """torch.where(mask, scores, very negative) (GPT-Neo): the mask a
        causal (or sliding-window) one of __init__, read for the tokens."""
        if not isinstance(x, V.AttentionChain) or not isinstance(cond, V.BoolMask):
            raise FrontendError("torch.where(mask, scores, value): only a boolean mask of "
                                "__init__ selecting attention scores is supported", node)
        if x.probs or x.capped or x.where is not None:
            raise FrontendError("%s: torch.where after softmax, soft-capping or another "
                                "torch.where is not supported" % x.what(), node)
        if not getattr(cond, "tokens", False) or cond.lead != 2:
            raise FrontendError("torch.where: the mask must be [1, 1, tokens, tokens] (its "
                                "rows and columns of the tokens)", node)
        if isinstance(other, bool) or not isinstance(other, (int, float)) or other > -1e4:
            raise FrontendError("torch.where(mask, scores, %s): the masked scores must be a "
                                "very negative number (torch.finfo(dtype).min, -1e9)"
                                % self.describe(other), node)
        kind = cond.classify()
        if kind is None:
            raise FrontendError("torch.where with a boolean mask that is neither causal nor "
                                "a causal sliding window (key s visible to query t when "
                                "0 <= t - s < window): not supported", node)
        return x.but(where=kind)

    def chain_binop(self, kind, a, b, node):
        """scores * c, c * scores, scores / c (c a positive number known at
        import), scores + mask, mask + scores (the forward's causal mask)."""
        chain, other = (a, b) if isinstance(a, V.AttentionChain) else (b, a)
        if isinstance(other, V.AttentionChain):
            raise FrontendError("an operation on two attention chains is not supported",
                                node)
        if chain.probs:
            raise FrontendError("%s are used by '%s' after softmax: not supported"
                                % (chain.what(), kind), node)
        if kind in ("mul", "div") and isinstance(other, (int, float)) and \
                not isinstance(other, bool):
            if kind == "div" and chain is not a:
                raise FrontendError("a number divided by %s: not supported"
                                    % chain.what(), node)
            factor = float(other) if kind == "mul" else 1.0 / float(other) \
                if other else float("inf")
            if not (0 < factor < float("inf")):
                raise FrontendError("scaling %s by %r: only positive finite factors are "
                                    "supported" % (chain.what(), other), node)
            if chain.capped:
                # After tanh: the cap (Gemma 2's `* softcap`).
                return chain.but(post=chain.post * factor)
            return chain.but(scale=chain.scale * factor)
        if kind == "add" and isinstance(other, V.CausalMask):
            if chain.causal:
                raise FrontendError("%s are masked twice" % chain.what(), node)
            return chain.but(causal=True)
        raise FrontendError("%s: '%s' with %s is not supported (only scaling by a "
                            "positive number and adding the forward's attention mask)"
                            % (chain.what(), kind, self.describe(other)), node)

    def chain_tanh(self, chain, node):
        """torch.tanh(scores) (Gemma 2's soft-capping: scores / c, tanh,
        * c): before the mask and softmax, once."""
        if chain.probs:
            raise FrontendError("tanh of %s: not supported" % chain.what(), node)
        if chain.causal:
            raise FrontendError("tanh of %s after the attention mask was added: not "
                                "supported (soft-capping comes before the mask; tanh of "
                                "the masked scores is not a mask)" % chain.what(), node)
        if chain.capped:
            raise FrontendError("%s are soft-capped (tanh) twice: not supported"
                                % chain.what(), node)
        return chain.but(capped=True)

    def chain_softmax(self, chain, dim, node):
        if chain.probs:
            raise FrontendError("softmax of %s: not supported" % chain.what(), node)
        if dim not in ((-1, 2) if chain.merged else (-1, 3)):
            raise FrontendError("softmax of %s over dim %r: only over the keys (dim=-1) "
                                "is attention" % (chain.what(), dim), node)
        return chain.but(probs=True)

    def chain_method(self, chain, name, args, kwargs, node):
        if name in ("to", "type", "type_as", "float", "contiguous", "detach", "clone"):
            # Another chain object: a copy in PyTorch (clone, or a
            # conversion to another dtype), or the same tensor; either way an
            # in-place change of the one makes the other stale (an error
            # where it is used).
            return chain.but()
        if name == "softmax":
            from .table import _arg
            return self.chain_softmax(chain, _arg(args, kwargs, 0, "dim", node), node)
        if name == "matmul":
            return self.matmul(chain, args[0] if args else kwargs.get("other"), node)
        if name in ("size", "dim"):
            sizes = chain.sizes()
            return len(sizes) if name == "dim" else sizes if not args else sizes[args[0]]
        if name in ("view", "reshape") and not kwargs:
            # BART's scores viewed [batch, heads, tgt, src] to add the mask,
            # and back to [batch * heads, tgt, src] (batch 1).
            sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
                else list(args)
            heads = chain.q.type.shape[1]
            want = [s for s in sizes if not (isinstance(s, int) and not isinstance(s, bool)
                                             and s == 1)]
            if len(sizes) in (3, 4) and len(want) == 3 and (
                    want[0] == heads or want[0] == -1) and all(
                    s is V.TOKENS or s == -1 and s is not V.TOKENS for s in want[1:]) and \
                    sum(s == -1 and s is not V.TOKENS for s in want) <= 1 and \
                    (len(sizes) == 3 or sizes[0] == 1):
                return chain.but(merged=len(sizes) == 3)
            raise FrontendError("%s: view to %s is not supported (only [batch, heads, "
                                "tokens, tokens] and [batch * heads, tokens, tokens])"
                                % (chain.what(), self.describe(tuple(sizes))), node)
        if name in ("mul", "div", "add"):
            return self.chain_binop(name, chain, args[0] if args else None, node)
        if name == "tanh":
            return self.chain_tanh(chain, node)
        raise FrontendError("%s: .%s() is not supported (only scaling, soft-capping "
                            "(tanh), the attention mask, softmax(dim=-1), dtype "
                            "conversions, dropout in eval mode and torch.matmul(probs, v))"
                            % (chain.what(), name), node)

    def repeated_method(self, r, name, args, kwargs, node):
        if name == "transpose":
            return V.RepeatedKV(self.transposed(r.tensor, args[0], args[1], node),
                                r.n_rep, r.node, r.what)
        if name in ("to", "type", "type_as", "float", "contiguous", "detach"):
            return r
        if name == "size":
            sizes = self.repeated_sizes(r)
            return sizes if not args else sizes[args[0]]
        if name == "matmul":
            raise FrontendError("repeat_kv of the query is not supported", node)
        self.no_chain(r, node)

    def repeated_sizes(self, r):
        sizes = list(r.tensor.sizes())
        heads = r.tensor.dims.index(1) if 1 in r.tensor.dims else None
        if heads is not None:
            sizes[heads] *= r.n_rep
        return tuple(sizes)

    def repeat_kv(self, x, n_rep, node):
        """HF's repeat_kv(x, n_rep) (torch.repeat_interleave(x, n, dim=1)):
        x [batch, kv_heads, tokens, head_dim] with each head repeated."""
        if isinstance(n_rep, bool) or not isinstance(n_rep, int) or n_rep < 1:
            raise FrontendError("repeat_kv: n_rep must be a positive number known at "
                                "import, got %s" % self.describe(n_rep), node)
        x = self.tensor(x, node, "the repeat_kv input")
        if len(x.type.shape) == 2 and x.dims == [None, None, 0, 1]:
            # One key/value head viewed [batch, 1, tokens, head_dim] on a
            # [tokens, head_dim] buffer (RecurrentGemma 2B's): its heads axis.
            x = self.unit_axis(x, 1, node)
        if len(x.type.shape) != 3 or x.dims != self.HEADS_FIRST:
            raise FrontendError("repeat_kv expects [batch, kv_heads, tokens, head_dim]",
                                node)
        return x if n_rep == 1 else V.RepeatedKV(x, n_rep, node)

    # -- norms written out: row statistics on the way to tx.rmsnorm/layernorm ---
    NORM_METHODS = ("pow", "square", "mean", "var")

    def norm_dim(self, t, args, kwargs, node, what):
        """Whether a reduction's (dim, keepdim) are (-1 or the last, True);
        None when it is not over the last dimension with keepdim."""
        from .table import _arg
        dim = _arg(args, kwargs, 0, ("dim", "axis"), node, None)
        keep = _arg(args, kwargs, 1, "keepdim", node, False)
        if isinstance(dim, (tuple, list)) and len(dim) == 1:
            dim = dim[0]
        n = len(t.dims) if isinstance(t, V.Tensor) else len(t.x.dims)
        if isinstance(dim, int) and not isinstance(dim, bool) and dim % n == n - 1 and \
                keep is True:
            return True
        return None

    def norm_start(self, t, name, args, kwargs, node):
        """x.pow(2), x.square(), x.mean(-1, keepdim=True), x.var(-1,
        keepdim=True, unbiased=False): a NormChain of x; None for any other
        form (an opaque call, as before)."""
        t = self.tensor(t, node)
        def chain(stage, **fields):
            c = V.NormChain(t, stage, node, **fields)
            c.mark = self.norm_mark()
            return c
        if name in ("pow", "square"):
            exponent = args[0] if args else kwargs.get("exponent", 2 if name == "square"
                                                       else None)
            if name == "square" or (exponent == 2 and not isinstance(exponent, bool)):
                return chain("sq")
            if exponent == 3 and not isinstance(exponent, bool):
                return self.cube(t, node)
            return None
        if self.norm_dim(t, args, kwargs, node, name) is None:
            return None
        self.last_is_last(t, node, "a norm over the last dimension")
        if name == "mean":
            return chain("mean")
        unbiased = kwargs.get("unbiased", True)
        correction = kwargs.get("correction", None)
        if unbiased is False or correction == 0:
            return chain("var", of="var")
        raise FrontendError("x.var(-1, keepdim=True) with Bessel's correction (unbiased): "
                            "a LayerNorm's variance is biased (unbiased=False)", node)

    def flatten(self, t, args, kwargs, node):
        """x.flatten(start_dim=0, end_dim=-1) (torch.flatten too): dimensions
        start..end merged, as reshape (a view where they merge in place, else
        a copy); the tensor itself when start == end."""
        a = bind("flatten", [("start_dim", 0), ("end_dim", -1)], args, kwargs, node)
        t = self.tensor(t, node)
        n = len(t.dims)
        start = self.dim_index(a["start_dim"], n, "flatten", node)
        end = self.dim_index(a["end_dim"], n, "flatten", node)
        if start > end:
            raise FrontendError("flatten: start_dim %d after end_dim %d" % (start, end), node)
        if start == end:
            return t
        sizes = list(t.sizes())
        merged = 1
        for s in sizes[start:end + 1]:
            merged = -1 if s is V.TOKENS or merged == -1 else merged * s
        return self.view(t, sizes[:start] + [merged] + sizes[end + 1:], node, copy=True)

    def unbind(self, t, args, kwargs, node):
        """x.unbind(dim=0) (torch.unbind too; `q, k, v = qkv.unbind(dim=2)`):
        the tuple of x[..., i, ...] for every position i of dim, each a view
        without that dimension, as PyTorch's."""
        a = bind("unbind", [("dim", 0)], args, kwargs, node)
        t = self.tensor(t, node)
        d = self.dim_index(a["dim"], len(t.dims), "unbind", node)
        size = t.sizes()[d]
        if size is V.TOKENS:
            raise FrontendError("unbind along the token dimension is not supported (its "
                                "size is dynamic)", node)
        prefix = [slice(None)] * d
        return tuple(self.tensor_index(t, tuple(prefix + [i]), node) for i in range(size))

    def unflatten(self, t, args, kwargs, node):
        """x.unflatten(dim, sizes) (torch.unflatten too): dimension dim split
        into `sizes` (one may be -1), a view as PyTorch's (Tensor.view of the
        sizes around it)."""
        a = bind("unflatten", ["dim", "sizes"], args, kwargs, node)
        t = self.tensor(t, node)
        d = self.dim_index(a["dim"], len(t.dims), "unflatten", node)
        sizes = a["sizes"]
        if not isinstance(sizes, (tuple, list)) or not sizes:
            raise FrontendError("unflatten: sizes must be a non-empty tuple or list, got %s"
                                % self.describe(sizes), node)
        have = list(t.sizes())
        if have[d] is V.TOKENS and V.TOKENS not in sizes and -1 not in sizes:
            raise FrontendError("unflatten of the token dimension into sizes known at "
                                "import (%s) is not supported (its size is dynamic)"
                                % (list(sizes),), node)
        return self.view(t, have[:d] + list(sizes) + have[d + 1:], node)

    def cube(self, t, node):
        """x ** 3 (torch.pow(x, 3), x.pow(3)) as PyTorch computes it: (x * x) * x."""
        return self.binary("mul", self.binary("mul", t, t, node), t, node)

    def norm_square(self, c, node):
        """x.square() / x.pow(2) / x ** 2 used as a tensor, not as the
        next step of a norm (NanoChat's `F.relu(x).square()`): x * x, as
        PyTorch computes it, emitted here. Only when nothing but parameter
        reads was emitted since the square (x cannot have been written in
        between); the value is kept, so every later use reads the same
        buffer."""
        done = getattr(c, "square_value", None)
        if done is not None:
            return done
        block, length = c.mark
        if block is not self.em.blocks[-1] or any(
                not getattr(i, "reads_param", False) for i in block.items[length:]):
            self.no_chain(c, node)
        c.square_value = self.binary("mul", c.x, c.x, node)
        return c.square_value

    def norm_mark(self):
        block = self.em.blocks[-1]
        return (block, len(block.items))

    def norm_chain_method(self, c, name, args, kwargs, node):
        if name in ("to", "type", "type_as", "float", "contiguous", "detach"):
            return c
        if name in ("pow", "square") and c.stage == "centered":
            exponent = args[0] if args else kwargs.get("exponent", 2 if name == "square"
                                                       else None)
            if name == "square" or (exponent == 2 and not isinstance(exponent, bool)):
                return c.but("csq")
        if name == "mean" and c.stage in ("sq", "csq") and \
                self.norm_dim(c, args, kwargs, node, name):
            return c.but("ms" if c.stage == "sq" else "var",
                         of="rms" if c.stage == "sq" else "var")
        if name in ("rsqrt", "sqrt"):
            return self.norm_root(name, c, node)
        if name in ("add", "mul", "div", "sub"):
            return self.norm_binop(name, c, args[0] if args else kwargs.get("other"), node)
        if name in ("size", "dim"):
            sizes = c.sizes()
            return len(sizes) if name == "dim" else sizes if not args else sizes[args[0]]
        self.no_chain(c, node)

    def norm_root(self, name, c, node):
        """torch.rsqrt / torch.sqrt of (mean square or variance) + eps."""
        if not isinstance(c, V.NormChain) or c.stage != "eps":
            self.no_chain(c, node)
            raise FrontendError("torch.%s of %s: only of a mean square or variance plus "
                                "epsilon (a norm)" % (name, self.describe(c)), node)
        return c.but("inv" if name == "rsqrt" else "sqrt")

    def same_tensor(self, a, b):
        return isinstance(a, V.Tensor) and isinstance(b, V.Tensor) and \
            a.value is b.value and a.dims == b.dims

    def norm_binop(self, kind, a, b, node):
        """The steps of a written-out norm that are binary ops: x - mean(x),
        ms/var + eps, x * rsqrt(...), x / sqrt(...), 1 / sqrt(...), and the
        final products (x * inv of an RMS chain: tx.rmsnorm of x; centred *
        inv of a variance chain: tx.layernorm of x)."""
        chains = [v for v in (a, b) if isinstance(v, V.NormChain)]
        number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
        if kind == "sub" and isinstance(b, V.NormChain) and b.stage == "mean" and \
                isinstance(a, V.Tensor):
            if not self.same_tensor(a, b.x):
                raise FrontendError("a tensor minus %s, the mean of another tensor: not "
                                    "supported (a LayerNorm centres the tensor it "
                                    "normalises)" % b.what(), node)
            return b.but("centered")
        if kind == "add" and len(chains) == 1 and chains[0].stage in ("ms", "var"):
            c, eps = chains[0], b if chains[0] is a else a
            if number(eps) and eps > 0:
                return c.but("eps", eps=float(eps))
            raise FrontendError("%s plus %s: only a positive epsilon known at import"
                                % (c.what(), self.describe(eps)), node)
        if kind == "div" and isinstance(b, V.NormChain) and b.stage == "sqrt" and \
                number(a) and float(a) == 1.0:
            return b.but("inv")
        if len(chains) == 2 and kind == "mul":
            (c, inv) = (a, b) if b.stage == "inv" else (b, a)
            if c.stage == "centered" and inv.stage == "inv" and inv.of == "var" and \
                    self.same_tensor(c.x, inv.x):
                return self.norm_result("layernorm", c.x, inv.eps, node, c, inv)
        if len(chains) == 2 and kind == "div" and a.stage == "centered" and \
                b.stage == "sqrt" and b.of == "var" and self.same_tensor(a.x, b.x):
            return self.norm_result("layernorm", a.x, b.eps, node, a, b)
        if len(chains) == 1:
            c = chains[0]
            other = b if c is a else a
            if kind == "mul" and c.stage == "inv" and c.of == "rms" and \
                    self.same_tensor(other, c.x):
                return self.norm_result("rmsnorm", c.x, c.eps, node, c)
            if kind == "div" and c is b and c.stage == "sqrt" and c.of == "rms" and \
                    self.same_tensor(other, c.x):
                return self.norm_result("rmsnorm", c.x, c.eps, node, c)
            if c.stage in ("inv", "sqrt") and isinstance(other, V.Tensor) and \
                    not self.same_tensor(other, c.x):
                raise FrontendError("a tensor scaled by %s of another tensor: not "
                                    "supported (a norm scales the tensor whose statistic "
                                    "it is)" % c.what(), node)
            if c.stage == "sq" and not isinstance(other, V.NormChain):
                # A square that is no norm's (x.square() * 0.5): x * x.
                sq = self.norm_square(c, node)
                return self.binary(kind, sq if c is a else a, sq if c is b else b, node)
        self.no_chain(chains[0], node)

    def norm_result(self, kind, x, eps, node, *chains):
        """The weightless tx.rmsnorm / tx.layernorm of x that the chain
        computes (what the code does with it stays tx ops in PyTorch's
        order, but an RMSNorm's weight multiplied next: fold_norm_weight).
        Nothing may have been emitted
        since the chains began but reads of parameters (`self.weight * (x *
        torch.rsqrt(...))`): the norm reads x here, PyTorch read it where
        the statistic was computed."""
        for c in chains:
            block, length = c.mark
            if block is not self.em.blocks[-1] or any(
                    not getattr(i, "reads_param", False) for i in block.items[length:]):
                raise FrontendError("%s and its use here are apart (other operations, or "
                                    "another block, in between: x may have been written "
                                    "since): not supported (write the norm in one piece)"
                                    % c.what(), node)
        x = self.tensor(x, node)
        self.last_is_last(x, node, "a norm over the last dimension")
        y = self.emit_norm(kind, x, [x.value], eps, 0, kind, node)
        if kind == "rmsnorm":
            # The weight it is multiplied by next folds in (fold_norm_weight).
            block = self.em.blocks[-1]
            y.norm_fold = (x, eps, block, block.items[-1])
        return y

    # -- parameters and functional norms -----------------------------------------
    def get_param(self, param, node):
        out = self.em.fresh(("w_" if param.norm_weight else "p_") + param.symbol,
                            MemRef(param.shape, self.dtype))
        self.em.op([out], lambda: "tx.get_param @%s : %s" % (param.symbol, out.type), node)
        self.em.blocks[-1].items[-1].reads_param = True  # writes nothing (norm_result)
        t = V.Tensor(out, list(range(len(param.shape))))
        if len(param.shape) == 1:
            # (param, offset, the value read, the ops computing it): a
            # weight a norm written out may fold in (fold_norm_weight).
            t.norm_weight = (param, 0.0, out, [self.em.blocks[-1].items[-1]])
        return t

    def rms_norm(self, x, shape, weight, eps, node):
        """F.rms_norm(x, normalized_shape, weight, eps): tx.rmsnorm over the
        last dimension; weight a [n] tensor or None."""
        x = self.tensor(x, node, "the F.rms_norm input")
        self.last_is_last(x, node, "F.rms_norm")
        if isinstance(shape, int) and not isinstance(shape, bool):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)) or len(shape) != 1 or \
                isinstance(shape[0], bool) or not isinstance(shape[0], int):
            raise FrontendError("F.rms_norm over %s: tx.rmsnorm normalises the last "
                                "dimension only (normalized_shape must be one size known "
                                "at import)" % self.describe(shape), node)
        n = shape[0]
        self.fix_last(x, n, node, "F.rms_norm input")
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps > 0:
            raise FrontendError("F.rms_norm: eps must be a positive number known at "
                                "import, got %s" % self.describe(eps), node)
        operands = [x.value]
        if weight is not None:
            w = self.tensor(weight, node, "the F.rms_norm weight")
            if w.type.shape != (n,) or w.dims != [0]:
                raise FrontendError("F.rms_norm: the weight must be a [%d] tensor, got %s"
                                    % (n, w.type), node)
            operands.append(w.value)
        return self.emit_norm("rmsnorm", x, operands, eps, 0, "rms_norm", node)

    def layer_norm(self, x, shape, weight, bias, eps, node):
        """F.layer_norm(x, normalized_shape, weight, bias, eps): tx.layernorm
        over the last dimension; weight (and bias, if given) [n] tensors, or
        neither (OLMo's F.layer_norm(x, shape, None, None, eps))."""
        x = self.tensor(x, node, "the F.layer_norm input")
        self.last_is_last(x, node, "F.layer_norm")
        if isinstance(shape, int) and not isinstance(shape, bool):
            shape = (shape,)
        if not isinstance(shape, (tuple, list)) or len(shape) != 1:
            raise FrontendError("F.layer_norm over %s: tx.layernorm normalises the last "
                                "dimension only (normalized_shape must have one size)"
                                % self.describe(shape), node)
        n = shape[0]
        if isinstance(n, bool) or not isinstance(n, int):
            raise FrontendError("F.layer_norm: normalized_shape must be known at import",
                                node)
        self.fix_last(x, n, node, "F.layer_norm input")
        if weight is None and bias is not None:
            raise FrontendError("F.layer_norm with a bias but no weight is not supported",
                                node)
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise FrontendError("F.layer_norm: eps must be a number known at import, got %s"
                                % self.describe(eps), node)
        operands = [x.value]
        for t, what in ((weight, "weight"), (bias, "bias")):
            if t is None:
                continue
            t = self.tensor(t, node, "the F.layer_norm %s" % what)
            if t.type.shape != (n,) or t.dims != [0]:
                raise FrontendError("F.layer_norm: the %s must be a [%d] tensor, got %s"
                                    % (what, n, t.type), node)
            operands.append(t.value)
        return self.emit_norm("layernorm", x, operands, eps, 0, "layer_norm", node)

    # -- guards ----------------------------------------------------------------
    def guard(self, layer, predicate, node):
        if getattr(self, "test_break", None) == "fold-guards":
            exists = isinstance(layer, V.Linear)
            return {"is_none": not exists, "is_not_none": exists, "truthy": exists,
                    "falsy": not exists, "eq_none": not exists, "ne_none": exists}[predicate]
        ref = self.em.fresh(layer.symbol + "_ref", "!tx.layer_ref")
        self.em.op([ref], lambda: "tx.layer_ref @%s" % layer.symbol, node)
        g = self.em.fresh("has_" + layer.symbol, "i1")
        self.em.op([g], lambda: "tx.guard %s %s" % (predicate, ref), node)
        return V.Guard(g)

    def guard_not(self, g, node):
        true = self.em.constant(True, "i1", node)
        out = self.em.fresh("not", "i1")
        self.em.op([out], lambda: "arith.xori %s, %s : i1" % (g.value, true), node)
        return V.Guard(out)

    def guard_logic(self, op, values, node):
        # A Python truth value among the operands decides as Python's does:
        # `g and False` is False and `g or True` True whatever the guard
        # (returned as a Python bool, so that an `if` on it is decided at
        # import: its other branch may call a layer that is None); `g and
        # True` / `g or False` are the other operands'.
        decides = op == "or"
        consts = [v for v in values if not isinstance(v, V.Guard)]
        if any(bool(v) == decides for v in consts):
            return decides
        values = [v for v in values if isinstance(v, V.Guard)] or [not decides]
        if len(values) == 1 and not isinstance(values[0], V.Guard):
            return values[0]
        acc = None
        for v in values:
            if not isinstance(v, V.Guard):
                v = V.Guard(self.em.constant(bool(v), "i1", node))
            if acc is None:
                acc = v
                continue
            out = self.em.fresh(op, "i1")
            a, b = acc.value, v.value
            self.em.op([out], lambda a=a, b=b: "arith.%si %s, %s : i1" % (op, a, b), node)
            acc = V.Guard(out)
        return acc

    def merge(self, a, b, name, node):
        """The scf.if result for `name`: tensors of one type and order."""
        for x in (a, b):
            if not isinstance(x, V.Tensor):
                raise FrontendError("'%s' is a tensor in one branch and %s in the other"
                                    % (name, self.describe(x)), node)
        for x, y in ((a, b), (b, a)):
            if x.type is None and y.type is not None:
                x.value.type, x.dims = y.type, list(y.dims)
        if a.type is None:
            raise FrontendError("the type of '%s' is not known in either branch" % name, node)
        if a.type != b.type or a.dims != b.dims:
            raise FrontendError("'%s' differs between the branches: %s vs %s"
                                % (name, a.type, b.type), node)
        return V.Tensor(self.em.fresh(self.hint or name, a.type), a.dims)

    # -- containers and opaque calls ------------------------------------------
    def index_value(self, index, node):
        if isinstance(index, bool) or not isinstance(index, int):
            raise FrontendError("a container index must be an int known at import, got %s"
                                % self.describe(index), node)
        return self.em.constant(index, "index", node)

    def container_set(self, c, index, value, node):
        items = list(value) if isinstance(value, (tuple, list)) else [value]
        items = [self.tensor(x, node, "a stored value") for x in items]
        idx = self.index_value(index, node)
        c.slot_types = [x.type for x in items]
        c.slot_dims = [list(x.dims) for x in items]
        self.em.op([], lambda: "tx.container_set %s[%s] = %s : %s" % (
            c.value, idx, ", ".join(str(x.value) for x in items),
            ", ".join(str(x.type) for x in items)), node)

    def container_get(self, read, n):
        c, node = read.container, read.node
        idx = self.index_value(read.index, node)
        known = c.slot_types is not None and len(c.slot_types) == n
        types = c.slot_types if known else [None] * n
        dims = c.slot_dims if known else [None] * n
        results = [self.em.fresh("%s_%d" % (c.name, i), t) for i, t in enumerate(types)]
        self.untyped.extend((r, node) for r in results if r.type is None)
        self.em.op(results, lambda: "tx.container_get %s[%s] : %s" % (
            c.value, idx, ", ".join(str(r.type) for r in results)), node)
        # Until a store or a branch merge gives them, type and order are unknown.
        return [V.Tensor(r, d) for r, d in zip(results, dims)]

    def none_call(self, layer, x, node):
        """self.<layer>(x) where the layer is None: Python would raise, so
        this only appears where a guard excludes it. An opaque call (unknown
        effects, not executable) typed as the layer it would have been."""
        x = self.tensor(x, node, "the input of self.%s" % layer.path)
        if layer.would_be is None:
            raise FrontendError("self.%s is None here and its size is unknown" % layer.path,
                                node)
        out = self.em.fresh(layer.symbol, MemRef(x.type.shape[:-1] +
                                                 (layer.would_be.out_features,), self.dtype))
        self.em.op([out], lambda: 'tx.opaque_call "self.%s is None"(%s) : (%s) -> %s' % (
            layer.path, x.value, x.type, out.type), node)
        return V.Tensor(out, x.dims)

    def opaque(self, name, args, kwargs, node):
        """A call the frontend does not know: tx.opaque_call, unknown effects.
        Tensor arguments are passed; its one result, if any tensor was passed,
        is assumed to have the first tensor argument's type."""
        tensors = []
        def collect(v):
            self.no_chain(v, node)
            if isinstance(v, V.Tensor) and v.type is not None:
                tensors.append(v)
            elif isinstance(v, (tuple, list)):
                for x in v:
                    collect(x)
        for v in list(args) + list(kwargs.values()):
            collect(v)
        results = []
        if tensors:
            results = [self.em.fresh(name.rsplit(".", 1)[-1], tensors[0].type.contiguous())]
        self.em.op(results, lambda: 'tx.opaque_call "%s"(%s) : (%s) -> (%s)' % (
            name, ", ".join(str(t.value) for t in tensors),
            ", ".join(str(t.type) for t in tensors),
            ", ".join(str(r.type) for r in results)), node)
        if results:
            t = V.Tensor(results[0], tensors[0].dims)
            t.opaque_of = (name, node.lineno)  # for errors naming it (describe)
            return t
        return V.Unavailable("the result of the opaque call '%s' (line %d) has no known "
                             "type" % (name, node.lineno))


def _view_strides(old_shape, old_strides, new_shape):
    """PyTorch's view strides (computeStride in ATen, as TxOps.cpp's
    computeViewStrides): None when the view needs a copy."""
    new_strides = [1] * len(new_shape)
    if not old_shape:
        return new_strides
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        if d == 0 or (old_shape[d - 1] != 1 and
                      old_strides[d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk_base = old_strides[d - 1]
                tensor_numel = view_numel = 1
    return new_strides if view_d == -1 else None

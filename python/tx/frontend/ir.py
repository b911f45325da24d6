"""The tx IR the frontend writes, as text.

Ops are recorded as closures that print at the end, so a type that is only
known later (the width of the function's input, the element types of a
container slot) can still be filled in when the op that fixes it is met:
every op reads its values' types when the module is printed."""

import math
import re


class MemRef:
    """memref<d0 x ... x dtype>; a dimension of None is dynamic (?).

    `strides`/`offset` give a strided layout (a slice of a buffer, a view of
    one); strides None is the identity layout of a fresh buffer."""

    def __init__(self, shape, dtype="f32", strides=None, offset=0):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.strides = tuple(strides) if strides is not None else None
        self.offset = offset

    def key(self):
        return (self.shape, self.dtype, self.strides, self.offset)

    def __eq__(self, other):
        return isinstance(other, MemRef) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def contiguous(self):
        """The type of a fresh buffer of this shape."""
        return MemRef(self.shape, self.dtype)

    def layout(self):
        """(strides, offset); the identity layout's strides are static when
        only the leading dimension is dynamic (tokens), as tx buffers are."""
        if self.strides is not None:
            return list(self.strides), self.offset
        strides, step = [], 1
        for d in reversed(self.shape):
            strides.append(step)
            step = None if d is None or step is None else step * d
        strides = strides[::-1]
        if any(s is None for s in strides):
            raise ValueError("a buffer with a dynamic inner dimension has no static strides")
        return strides, 0

    def __str__(self):
        layout = ""
        if self.strides is not None:
            layout = ", strided<[%s]%s>" % (", ".join(map(str, self.strides)),
                                            ", offset: %d" % self.offset if self.offset
                                            else "")
        return "memref<%s%s%s>" % (
            "".join("%sx" % ("?" if d is None else d) for d in self.shape), self.dtype,
            layout)

    __repr__ = __str__


def float_literal(x):
    x = float(x)
    if not math.isfinite(x):
        raise ValueError("not a finite float: %r" % x)
    text = repr(x)
    if "." not in text and "e" not in text:
        text += ".0"
    elif "." not in text:  # MLIR float literals need a '.': 1e-06 -> 1.0e-06
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0e" + exponent
    return text


class Value:
    """An SSA value; `type` is a MemRef or a type string ('i1', 'index', ...).
    A MemRef type may stay None until an op fixes it (`provisional`)."""

    def __init__(self, name, type):
        self.name = name
        self.type = type

    def __str__(self):
        return self.name


class _If:
    """scf.if with yielded results; `then_block`/`else_block` are Blocks."""

    def __init__(self, results, cond, then_block, else_block, loc):
        self.results, self.cond = results, cond
        self.then_block, self.else_block, self.loc = then_block, else_block, loc

    def render(self, indent):
        pad = " " * indent
        res = ", ".join(v.name for v in self.results)
        types = ", ".join(str(v.type) for v in self.results)
        head = "%s = scf.if %s -> (%s) {" % (res, self.cond, types) if self.results \
            else "scf.if %s {" % self.cond
        lines = [pad + head]
        lines += self.then_block.render(indent + 2)
        lines.append(pad + "} else {")
        lines += self.else_block.render(indent + 2)
        lines.append(pad + "} " + self.loc)
        return lines


class Block:
    def __init__(self):
        self.items = []
        self.yields = None  # values an scf.if region yields

    def render(self, indent):
        lines = []
        for item in self.items:
            if getattr(item, "dropped", False):
                continue  # Emitter.drop_if_unused: nothing uses it
            if callable(item):
                lines.append(" " * indent + item())
            else:
                lines += item.render(indent)
        if self.yields is not None and self.yields:
            lines.append(" " * indent + "scf.yield %s : %s" % (
                ", ".join(v.name for v in self.yields),
                ", ".join(str(v.type) for v in self.yields)))
        elif self.yields is not None:
            lines.append(" " * indent + "scf.yield")
        return lines


class Emitter:
    """Symbols, one function, and a stack of blocks being filled."""

    def __init__(self, path):
        self.path = path
        self.symbols = []          # lines, in declaration order
        self.symbol_names = set()
        self.args = []             # (Value, python name)
        self.results = None
        self.body = Block()
        self.blocks = [self.body]
        self.names = set()
        self.droppable = []        # ops printed only if their results are used

    # -- values --------------------------------------------------------------
    def fresh(self, hint, type):
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
        if base[0].isdigit():
            base = "v" + base
        name, i = base, 0
        while name in self.names:
            i += 1
            name = "%s_%d" % (base, i)
        self.names.add(name)
        return Value("%" + name, type)

    def loc(self, node):
        if node is None or not hasattr(node, "lineno"):
            return ""
        return 'loc("%s":%d:%d)' % (self.path.replace("\\", "\\\\").replace('"', '\\"'),
                                   node.lineno, node.col_offset + 1)

    def add(self, item):
        self.blocks[-1].items.append(item)

    def op(self, results, text, node):
        """Appends `results = text loc`; text is a callable (printed late)."""
        loc = self.loc(node)

        def line():
            head = ", ".join(v.name for v in results)
            return ("%s = " % head if results else "") + text() + (" " + loc if loc else "")
        line.results = results
        self.add(line)

    def drop_if_unused(self, item):
        """Leaves op `item` (an item of a block, from `op`) out of the
        printed IR when no other op, yield or return uses its results (the
        weightless tx.rmsnorm a weight was folded into: ops.fold_norm_weight;
        a later use of it keeps it, where it was)."""
        self.droppable.append(item)

    def _body_lines(self, tail):
        """The function body's lines, without the droppable ops nothing
        uses (`tail`, the return line, counts as a use)."""
        while True:
            lines = self.body.render(4)
            text = "\n".join(lines + [tail])
            dropped = False
            for item in self.droppable:
                if getattr(item, "dropped", False):
                    continue
                if item.results and all(
                        len(re.findall(re.escape(v.name) + r"(?![A-Za-z0-9_])", text)) <= 1
                        for v in item.results):
                    item.dropped = dropped = True
            if not dropped:
                return lines

    def constant(self, value, type, node):
        v = self.fresh("c%s" % (str(value).replace(".", "_").replace("-", "m")
                                if type == "index" else ("true" if value is True else
                                                         "false" if value is False else "f")),
                       type)
        lit = ("true" if value else "false") if type == "i1" else \
            float_literal(value) if type.startswith(("f", "bf")) else str(value)
        # An i1 constant is printed `arith.constant true` (a BoolAttr carries
        # its type: `true : i1` does not parse).
        text = "arith.constant %s" % lit if type == "i1" else \
            "arith.constant %s : %s" % (lit, type)
        self.op([v], lambda: text, node)
        return v

    def symbol(self, name, line):
        if name not in self.symbol_names:
            self.symbol_names.add(name)
            self.symbols.append(line)

    # -- printing ------------------------------------------------------------
    def render(self, header_comment, func_name="forward", tp_size=1):
        out = ["// " + l if l else "//" for l in header_comment.splitlines()]
        out.append("module attributes {tx.config = #tx.config<tp_size = %d>} {" % tp_size)
        out += ["  " + s() if callable(s) else "  " + s for s in self.symbols]
        out.append("")
        sig = ", ".join("%s: %s" % (v.name, v.type) for v, _ in self.args)
        rtypes = ", ".join(str(v.type) for v in self.results)
        ret = " -> %s" % (rtypes if len(self.results) == 1 else "(%s)" % rtypes) \
            if self.results else ""
        out.append("  func.func @%s(%s)%s {" % (func_name, sig, ret))
        tail = "    return%s" % (
            " %s : %s" % (", ".join(v.name for v in self.results), rtypes)
            if self.results else "")
        out += self._body_lines(tail) if self.droppable else self.body.render(4)
        out.append(tail)
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"

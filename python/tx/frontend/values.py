"""What an expression of a modeling file evaluates to during import.

Python-level values (ints, floats, strings, None, tuples, the config) are
plain Python objects: the frontend computes them at import, as Python
would. The rest are the classes below: tensors (an SSA buffer plus how the
PyTorch dimensions map onto it), module attributes (layers, norms,
submodules), existence guards and containers, which become IR."""


class _Sym:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


# The size of the token dimension: dynamic in the IR.
TOKENS = _Sym("tokens")


class Tensor:
    """A PyTorch tensor as a tx buffer.

    `dims` lists the PyTorch dimensions in order: an int is the axis of the
    tx buffer it is, None a size-1 dimension the buffer does not have (the
    batch dimension, an unsqueeze). Transposes only permute `dims`: the
    buffer stays token-major, as the tx ops want it, and an op that needs a
    particular order checks `dims`. `role` marks the rotary cos/sin."""

    def __init__(self, value, dims, role=None):
        self.value = value
        self.dims = list(dims) if dims is not None else None
        self.role = role

    @property
    def type(self):
        return self.value.type

    def identity(self):
        axes = [d for d in self.dims if d is not None]
        return axes == list(range(len(axes)))

    def sizes(self):
        """The PyTorch sizes: ints, TOKENS for a dynamic axis, 1 for None."""
        shape = self.type.shape
        return tuple(1 if d is None else (TOKENS if shape[d] is None else shape[d])
                     for d in self.dims)


class Guard:
    """An i1 computed in the IR (tx.guard and arith on it): never folded."""

    def __init__(self, value):
        self.value = value


class Container:
    """A Python container argument (a dict/list of tensors): !tx.container.
    `slots` remembers the types stored, for reads whose types are unknown."""

    def __init__(self, value, name):
        self.value = value
        self.name = name
        self.slot_types = None


class ContainerRead:
    """`container[i]` before it is unpacked (the arity comes from the target)."""

    def __init__(self, container, index, node):
        self.container, self.index, self.node = container, index, node


class CausalMask:
    """The attention mask argument: taken to be the causal mask."""


class AttentionChain:
    """Attention written out in forward, on its way to one tx.attention:
    `torch.matmul(q, k.transpose(-2, -1))` (the scores), scaled by numbers
    known at import (`scale`, the product), plus the forward's causal mask
    (`causal`), then (`probs`) softmax over the last dimension. Only the
    next step of that chain may use it (a dtype conversion, dropout in eval
    mode, and finally `torch.matmul(probs, v)`); any other use is an error
    at that use, naming `node`, where the chain began (tx.attention never
    computes the scores or the probabilities)."""

    def __init__(self, q, k, node, scale=1.0, causal=False, probs=False):
        self.q, self.k, self.node = q, k, node
        self.scale, self.causal, self.probs = scale, causal, probs

    def but(self, **changes):
        c = AttentionChain(self.q, self.k, self.node, self.scale, self.causal, self.probs)
        c.__dict__.update(changes)
        return c

    def what(self):
        return "the attention %s of line %d" % (
            "probabilities" if self.probs else "scores", self.node.lineno)

    def sizes(self):
        heads = self.q.type.shape[1]
        return (1, heads, TOKENS, TOKENS)


class RepeatedKV:
    """`repeat_kv(k, n)` (HF's GQA helper): k with each head repeated n
    times. tx.attention does GQA by head counts, so this only marks k or v
    for the attention matmuls; any other use is an error."""

    def __init__(self, tensor, n_rep, node):
        self.tensor, self.n_rep, self.node = tensor, n_rep, node


class Unavailable:
    """A value the frontend cannot give (used: an error at `node`)."""

    def __init__(self, why):
        self.why = why


class Config:
    """config.json as attributes; a missing key is a located error."""

    def __init__(self, data, path):
        self.data = data
        self.path = path


class Dotted:
    """A name from an import (torch.nn.functional.silu), not yet called."""

    def __init__(self, name):
        self.name = name


class FunctionRef:
    def __init__(self, node):
        self.node = node
        self.name = node.name


class ClassRef:
    def __init__(self, node):
        self.node = node
        self.name = node.name


class BoundMethod:
    def __init__(self, obj, name):
        self.obj, self.name = obj, name


# -- module attributes --------------------------------------------------------

class Spec:
    """A module attribute that declares something: `path` is its dotted
    attribute path from the imported module, `symbol` its tx symbol."""
    path = ""
    symbol = None


class Linear(Spec):
    """nn.Linear, or (`transposed`) GPT-2's Conv1D(nf, nx): the same
    x @ W^T + b with the checkpoint's weight stored [in, out]."""

    def __init__(self, path, in_features, out_features, bias, node, transposed=False):
        self.path, self.node = path, node
        self.in_features, self.out_features, self.bias = in_features, out_features, bias
        self.transposed = transposed


class Param(Spec):
    """A bare `self.x = nn.Parameter(torch.ones(n))` (or zeros): tx.param
    named by its path, read in forward as a [n] tensor."""

    def __init__(self, path, shape, node):
        self.path, self.shape, self.node = path, tuple(shape), node


class NoneLayer(Spec):
    """`self.x = nn.Linear(...) if cond else None`, with cond false."""

    def __init__(self, path, node):
        self.path, self.node = path, node
        self.would_be = None  # the Linear of the other arm, if it evaluates


class Norm(Spec):
    """A norm module: `kind` "rmsnorm" or "layernorm", over a last dimension
    of `size`; `bias` (layernorm) whether it has a bias parameter; `offset`
    (rmsnorm) what is added to the weight (1.0 for Gemma's (1 + weight))."""

    def __init__(self, path, kind, size, eps, node, bias=False, offset=0.0):
        self.path, self.kind, self.size, self.eps, self.node = path, kind, size, eps, node
        self.bias, self.offset = bias, offset


class Activation:
    def __init__(self, kind):
        self.kind = kind


class SoftmaxModule:
    """nn.Softmax(dim)."""

    def __init__(self, dim):
        self.dim = dim


class InitTensor:
    """torch.ones/zeros/empty/randn/rand(sizes) in __init__: the initial
    value of an nn.Parameter (the checkpoint gives the real one)."""

    def __init__(self, shape):
        self.shape = tuple(shape)


class Identity:
    """nn.Dropout (eval mode), nn.Identity."""


class ModuleList:
    def __init__(self, items):
        self.items = list(items)


class Instance:
    """An instance of a class of the modeling file (in eval mode)."""

    def __init__(self, cls, path):
        self.cls = cls
        self.path = path
        self.attrs = {"training": False}

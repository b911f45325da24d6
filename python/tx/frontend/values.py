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
    particular order checks `dims`. `role` marks the rotary cos/sin.

    `tlayout`: where PyTorch lays the tensor out otherwise than the buffer
    (a `.contiguous()` copy of a transposed tensor, `new_empty`, a
    projection's output: contiguous in PyTorch in the order of `dims`
    then, while the buffer stays token-major), the `dims` in whose order
    PyTorch's memory is row-major; transposes keep it, so the tensor is
    contiguous in PyTorch exactly when `dims == tlayout`. None: PyTorch's
    layout is the buffer's (contiguity follows from its strides)."""

    def __init__(self, value, dims, role=None, tlayout=None):
        self.value = value
        self.dims = list(dims) if dims is not None else None
        self.role = role
        self.tlayout = list(tlayout) if tlayout is not None else None

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

    SIZES = (1, 1, TOKENS, TOKENS)


class Positions:
    """The forward's position ids: they only select the rows of the rotary
    cos/sin, which are arguments of the imported function (a rotary
    embedding module's output for the tokens' positions), so they are no
    tensor in tx: passed on, tested against None, given to a rotary module
    or helper, used to gather the rows of a sinusoid table (SinusoidTable),
    nothing else. `columns`: GPT-J's `position_ids.unsqueeze(-1)` (1) and
    `.repeat(1, 1, n)` (n), the index of a torch.gather of n columns."""

    def __init__(self, columns=None):
        self.columns = columns

    def sizes(self):
        return (1, TOKENS) + ((self.columns,) if self.columns is not None else ())


class SinusoidTable:
    """A sinusoid position table a module built in __init__ (GPT-J's and
    CodeGen's `self.embed_positions = create_sinusoidal_positions(num_pos,
    dim)`), checked by running the file's function (sinusoid.py): `rows`
    positions of `width` columns, the sines of the angles in one half and
    their cosines in the other (`sin_first`). tx computes no table: its rows
    for the tokens' positions (`table[position_ids]`, `torch.gather`) are
    the function's rotary arguments (SinusoidRows). `batch`: after
    `.repeat(batch, 1, 1)` (GPT-J's _get_embed_positions) a leading
    dimension."""

    def __init__(self, path, rows, width, sin_first, batch=False):
        self.path, self.rows, self.width = path, rows, width
        self.sin_first, self.batch = sin_first, batch

    def sizes(self):
        return ((1,) if self.batch else ()) + (self.rows, self.width)


class SinusoidRows:
    """The rows of a SinusoidTable for the tokens' positions, [1, tokens,
    width]: only split in its two halves (`torch.split(sincos,
    sincos.shape[-1] // 2, dim=-1)`), which are the function's rotary sin
    and cos arguments, one angle per rotated pair."""

    def __init__(self, table, node):
        self.table, self.node = table, node

    def sizes(self):
        return (1, TOKENS, self.table.width)


class AttentionChain:
    """Attention written out in forward, on its way to one tx.attention:
    `torch.matmul(q, k.transpose(-2, -1))` (the scores), scaled by numbers
    known at import (`scale`, the product), plus the forward's causal mask
    (`causal`), then (`probs`) softmax over the last dimension. Only the
    next step of that chain may use it (a dtype conversion, dropout in eval
    mode, and finally `torch.matmul(probs, v)`); any other use is an error
    at that use, naming `node`, where the chain began (tx.attention never
    computes the scores or the probabilities)."""

    # Soft-capping (Gemma 2: `s / c`, `torch.tanh(s)`, `s * c`): `capped`
    # once tanh was applied; `scale` is then the factor inside the tanh and
    # `post` the product of the factors after it: the scores are
    # post * tanh(scale * q.k), i.e. tx.attention scale (scale * post),
    # softcap post.
    capped = False
    post = 1.0
    # BART's attention (BioGPT, XGLM, ...): q, k, v viewed [batch * heads,
    # tokens, head_dim] and multiplied with torch.bmm: the scores are
    # [batch * heads, tokens, tokens] (`merged`) until viewed back.
    merged = False
    # torch.where(mask, scores, very negative) with a boolean mask of
    # __init__ (GPT-Neo): (True, window or None), combined with the added
    # causal mask (both keep only keys a causal attention keeps).
    where = None
    # Where the chain began in the IR being emitted (block, length): q and k
    # are read by the tx.attention at its end, so nothing may be emitted in
    # between (an in-place write of q or k would change what PyTorch's
    # scores were computed from).
    mark = None

    def __init__(self, q, k, node, scale=1.0, causal=False, probs=False):
        self.q, self.k, self.node = q, k, node
        self.scale, self.causal, self.probs = scale, causal, probs
        # In-place operators (Falcon's `scores /= math.sqrt(d)`) change the
        # chain object itself, as PyTorch writes the one tensor every name
        # bound to it sees; any other chain of the same matmul (a dtype
        # conversion, taken before) is then stale: `origin` counts the
        # in-place changes, `version` is this value's (translate.eval_Name
        # rejects a stale one).
        self.origin, self.version = {"version": 0, "line": None}, 0

    def stale(self):
        return self.version != self.origin["version"]

    def but(self, **changes):
        c = AttentionChain(self.q, self.k, self.node, self.scale, self.causal, self.probs)
        c.capped, c.post, c.mark = self.capped, self.post, self.mark
        c.where, c.merged = self.where, self.merged
        c.origin, c.version = self.origin, self.version
        c.__dict__.update(changes)
        return c

    def what(self):
        return "the attention %s of line %d" % (
            "probabilities" if self.probs else "scores", self.node.lineno)

    def sizes(self):
        heads = self.q.type.shape[1]
        if self.merged:
            return (heads, TOKENS, TOKENS)
        return (1, heads, TOKENS, TOKENS)


class NormChain:
    """A norm written out in forward (a class not recognised by name: Cohere's
    LayerNorm, an RMSNorm under another name, `x * torch.rsqrt(x.pow(2).mean(-1,
    keepdim=True) + eps)`), on its way to one weightless tx.rmsnorm /
    tx.layernorm of the tensor `x`. `stage`:
      "sq"       x ** 2
      "mean"     mean(x) over the last dimension, keepdim
      "centered" x - mean(x)
      "csq"      (x - mean(x)) ** 2
      "ms"       mean(x ** 2)                (`of` "rms")
      "var"      mean((x - mean(x)) ** 2)    (`of` "var")
      "eps"      ms or var + eps
      "inv"      rsqrt(ms or var + eps)
      "sqrt"     sqrt(ms or var + eps)
    Only the next step of such a chain may use it (x * inv or x / sqrt of an
    "rms" chain is the RMSNorm of x; centered * inv or centered / sqrt of a
    "var" chain the LayerNorm of x); any other use is an error at that use,
    naming `node`, where the chain began (tx computes no row statistics)."""

    # `mark`: where the chain began in the IR being emitted (the block and its
    # length): the norm is emitted at its end, so nothing may be emitted in
    # between (an in-place write of x would make PyTorch's statistic differ).
    mark = None

    def __init__(self, x, stage, node, of=None, eps=None):
        self.x, self.stage, self.node, self.of, self.eps = x, stage, node, of, eps

    def but(self, stage, **changes):
        c = NormChain(self.x, stage, self.node, self.of, self.eps)
        c.mark = self.mark
        c.__dict__.update(changes)
        return c

    def what(self):
        names = {"sq": "square", "mean": "mean", "centered": "centred tensor",
                 "csq": "centred square", "ms": "mean square", "var": "variance",
                 "eps": "variance + eps", "inv": "reciprocal root",
                 "sqrt": "square root"}
        return "the norm %s of line %d" % (names[self.stage], self.node.lineno)

    def sizes(self):
        shape = self.x.sizes()
        keep = self.stage in ("sq", "centered", "csq")
        return tuple(shape) if keep else tuple(shape[:-1]) + (1,)


class RepeatedKV:
    """`repeat_kv(k, n)` (HF's GQA helper): k with each head repeated n
    times. tx.attention does GQA by head counts, so this only marks k or v
    for the attention matmuls; any other use is an error. `what` names the
    form in messages: HF's repeat_kv, or `expand` of a size-1 heads
    dimension (GPTBigCode's `key.unsqueeze(1).expand(-1, heads, -1, -1)`,
    a broadcast view of its one key/value head)."""

    def __init__(self, tensor, n_rep, node, what="repeat_kv"):
        self.tensor, self.n_rep, self.node = tensor, n_rep, node
        self.what = what


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


class Closure:
    """A function defined inside a function: its def and the scope (env) it
    was defined in, whose names it reads as they are when it runs."""

    def __init__(self, node, env):
        self.node, self.env = node, env
        self.name = node.name


class Scope(dict):
    """A closure's own names, then (reads only) its defining scope's."""

    def __init__(self, own, outer):
        super().__init__(own)
        self.outer = outer

    def __missing__(self, key):
        return self.outer[key]

    def __contains__(self, key):
        return dict.__contains__(self, key) or key in self.outer

    def get(self, key, default=None):
        return self[key] if key in self else default


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
    named by its path, read in forward as a [n] tensor. `norm_weight`: the
    `weight` of a *RMSNorm class of the file (translated), named as a
    norm's weight is: tx.param @<module>, read as %w_<module>."""

    norm_weight = False

    def __init__(self, path, shape, node):
        self.path, self.shape, self.node = path, tuple(shape), node


class NoneLayer(Spec):
    """`self.x = nn.Linear(...) if cond else None`, with cond false."""

    def __init__(self, path, node):
        self.path, self.node = path, node
        self.would_be = None  # the Linear of the other arm, if it evaluates


class Norm(Spec):
    """A norm module: `kind` "rmsnorm" or "layernorm", over a last dimension
    of `size`; `weight` whether it has a weight parameter (False:
    nn.LayerNorm(elementwise_affine=False), an RMSNorm without a scale);
    `bias` (layernorm) whether it has a bias parameter; `offset` (rmsnorm)
    what is added to the weight (1.0 for Gemma's (1 + weight))."""

    def __init__(self, path, kind, size, eps, node, bias=False, offset=0.0, weight=True):
        self.path, self.kind, self.size, self.eps, self.node = path, kind, size, eps, node
        self.bias, self.offset, self.weight = bias, offset, weight


class LinearWeight:
    """`self.weight` of a class of the file deriving from nn.Linear with a
    forward of its own (Falcon's FalconLinear: `input @ self.weight.T`):
    `layer` is the weight alone (a tx.layer without bias; the bias, if any,
    is the parameter `self.bias`), `transposed` after `.T` / `.t()`. Only
    `x @ w.T` (torch.matmul, F.linear(x, w)) uses it: tx.linear."""

    def __init__(self, layer, transposed=False):
        self.layer, self.transposed = layer, transposed

    def sizes(self):
        out, inp = self.layer.out_features, self.layer.in_features
        return (inp, out) if self.transposed else (out, inp)


class Activation:
    """nn.SiLU/ReLU/GELU and ACT2FN[...]: `inplace` writes the input."""

    def __init__(self, kind, inplace=False):
        self.kind = kind
        self.inplace = inplace


class SoftmaxModule:
    """nn.Softmax(dim)."""

    def __init__(self, dim):
        self.dim = dim


class InitTensor:
    """torch.ones/zeros/empty/randn/rand(sizes) in __init__: the initial
    value of an nn.Parameter (the checkpoint gives the real one)."""

    def __init__(self, shape, fill=None):
        self.shape = tuple(shape)
        self.fill = fill  # "ones" for torch.ones (a boolean mask's start)


class BoolMask:
    """A boolean attention mask built in __init__ from torch.ones((n, n))
    with torch.tril/triu (diagonal k) and bitwise xor/and (GPT-Neo's `bias`
    buffer: causal, and on local layers xor its tril(-window)): `keep(d)`
    says whether key s is visible to query t, d = t - s (every such mask is
    a function of t - s). `lead`: the leading size-1 dimensions (`.view(1,
    1, n, n)`); `size`: n. `torch.where(mask, scores, very negative)` on
    attention written out makes it tx.attention's causal mask, with a
    window when the mask is HF's sliding one (AttentionChain.where)."""

    def __init__(self, keep, size, lead=0):
        self.keep, self.size, self.lead = keep, size, lead

    def sizes(self):
        return (1,) * self.lead + (self.size, self.size)

    def classify(self):
        """(True, None) for the causal mask, (True, W) for the sliding
        window W (0 <= t - s < W), else None."""
        kept = [d for d in range(-self.size + 1, self.size) if self.keep(d)]
        if not kept or kept[0] != 0 or kept != list(range(kept[0], kept[-1] + 1)):
            return None
        if kept[-1] == self.size - 1:
            return (True, None)
        return (True, kept[-1] + 1)


class FInfo:
    """torch.finfo(dtype): its min, max, eps (the import's dtype)."""

    def __init__(self, dtype):
        bits = {"f32": (-3.4028234663852886e38, 1.1920928955078125e-07),
                "bf16": (-3.3895313892515355e38, 0.0078125),
                "f16": (-65504.0, 0.0009765625)}[dtype]
        self.min, self.eps = bits
        self.max = -self.min
        self.tiny = {"f32": 1.1754943508222875e-38, "bf16": 1.1754943508222875e-38,
                     "f16": 6.103515625e-05}[dtype]


class Identity:
    """nn.Dropout (eval mode), nn.Identity."""


class ModuleList:
    """nn.ModuleList, or nn.Sequential (`sequential`: calling it calls each
    item on the previous one's result); `names` the items' attribute names
    (their indices, or the keys of nn.Sequential(OrderedDict(...)))."""

    def __init__(self, items, sequential=False, names=None):
        self.items = list(items)
        self.sequential = sequential
        self.names = [str(i) for i in range(len(self.items))] if names is None \
            else list(names)
        self.path = None  # its attribute path, once assigned to one


class Instance:
    """An instance of a class of the modeling file (in eval mode)."""

    # A rotary embedding module (translate.rotary_module): calling it gives
    # the function's cos/sin; init_error says where its __init__ stopped.
    rotary = False
    init_error = None
    # A class deriving from a torch module of table.SUBCLASSES (nn.Linear,
    # nn.LayerNorm): that class's import path, and the module its
    # super().__init__(...) made (a V.Linear / V.Norm; None until then).
    table_base = None
    base_spec = None

    def __init__(self, cls, path):
        self.cls = cls
        self.path = path
        self.attrs = {"training": False}

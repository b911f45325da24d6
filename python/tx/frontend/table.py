"""Which module classes, functions and forward arguments become which tx ops.

Everything the frontend recognises by name is in the tables below, and a
user extends them without touching the frontend:

    from tx.frontend import table
    table.register_norm("MyNorm", size_arg="dim", eps_arg="eps")
    table.alias_function("my_rope", "apply_rotary_pos_emb")

(`python3 -m tx.frontend --norm MyNorm --helper my_rope=apply_rotary_pos_emb`
does the same.) Names are matched by their import path
(`torch.nn.functional.silu`, however `F` was imported), and a function or
class of the modeling file by its own name. A name in a table wins over the
definition in the file (the file's `apply_rotary_pos_emb` is not inlined:
it becomes tx.rotary); a function of the file in no table is inlined; any
other call becomes `tx.opaque_call` (unknown effects)."""

import math

from .errors import FrontendError
from . import config_classes
from . import values as V

# -- modules: called in __init__, return a module attribute ------------------
# factory(tr, node, path, args, kwargs) -> value


def _arg(args, kwargs, index, name, node, default=V.Unavailable):
    """Argument `index` or keyword `name` (a tuple: any of the names)."""
    for n in (name if isinstance(name, tuple) else (name,)):
        if n in kwargs:
            return kwargs[n]
    name = name[0] if isinstance(name, tuple) else name
    if index is not None and index < len(args):
        return args[index]
    if default is V.Unavailable:
        raise FrontendError("missing argument '%s'" % name, node)
    return default


_REQUIRED = object()


def bind(what, params, args, kwargs, node, fixed=()):
    """The call's arguments bound to PyTorch's parameters of `what`, as
    Python binds them: `params` lists them in order, each a name (required)
    or (name, default); after "*" keyword-only. Too many positional
    arguments, an unknown keyword or a missing argument is an error naming
    `what`. The parameters named in `fixed` are ones the frontend does not
    implement: given another value than their default, an error (an
    argument is never dropped: it would compute something else)."""
    names, defaults, positional = [], {}, 0
    for p in params:
        if p == "*":
            positional = -len(names) - 1  # marks where keyword-only begin
            continue
        name, default = (p, _REQUIRED) if isinstance(p, str) else p
        names.append(name)
        defaults[name] = default
    npos = len(names) if positional == 0 else -positional - 1
    if len(args) > npos:
        raise FrontendError("%s takes at most %d positional arguments, got %d"
                            % (what, npos, len(args)), node)
    bound = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in defaults:
            raise FrontendError("%s: unknown argument '%s' (it takes %s)"
                                % (what, name, ", ".join(names)), node)
        if name in bound:
            raise FrontendError("%s: argument '%s' given twice" % (what, name), node)
        bound[name] = value
    for name in names:
        if name not in bound:
            if defaults[name] is _REQUIRED:
                raise FrontendError("%s: missing argument '%s'" % (what, name), node)
            bound[name] = defaults[name]
    for name in fixed:
        value, default = bound[name], defaults[name]
        if not (value is default or (type(value) is type(default) and value == default)):
            raise FrontendError("%s: argument %s=%r is not supported (only its default %r)"
                                % (what, name, value, default), node)
    return bound


def _int(value, what, node):
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise FrontendError("%s must be a positive integer, got %r" % (what, value), node)
    return value


def linear(tr, node, path, args, kwargs):
    in_f = _int(_arg(args, kwargs, 0, "in_features", node), "in_features", node)
    out_f = _int(_arg(args, kwargs, 1, "out_features", node), "out_features", node)
    bias = _arg(args, kwargs, 2, "bias", node, True)
    if not isinstance(bias, bool):
        raise FrontendError("bias must be a Python bool, got %r" % (bias,), node)
    return V.Linear(path, in_f, out_f, bias, node)


_SIZE_NAMES = ("hidden_size", "dim", "normalized_shape", "d_model", "num_features")


def norm_factory(kind="rmsnorm", size_arg=_SIZE_NAMES, size_index=0, eps_arg="eps",
                 eps_index=1, default_eps=1e-6, bias=False, affine_arg=None):
    """A norm class: weight of `size` (its keyword `size_arg`, one name or a
    tuple, or positional `size_index`), epsilon from `eps_arg` (else
    `default_eps`), a bias parameter if `bias` (layernorm); `affine_arg`
    the keyword that turns the weight off (nn.RMSNorm's
    elementwise_affine=False)."""
    def factory(tr, node, path, args, kwargs):
        size = _int(_arg(args, kwargs, size_index, size_arg, node), "the norm size", node)
        eps = _arg(args, kwargs, eps_index, eps_arg, node, default_eps)
        if eps is None and kind == "rmsnorm":
            eps = default_eps  # nn.RMSNorm(eps=None): torch.finfo(x.dtype).eps
        if isinstance(eps, bool) or not isinstance(eps, (int, float)):
            raise FrontendError("%s must be a number, got %r" % (eps_arg, eps), node)
        weight = True
        if affine_arg is not None:
            weight = _arg(args, kwargs, None, affine_arg, node, True)
            if not isinstance(weight, bool):
                raise FrontendError("%s must be a Python bool, got %r"
                                    % (affine_arg, weight), node)
        return V.Norm(path, kind, size, float(eps), node, bias=bias, weight=weight)
    return factory


def layernorm_module(tr, node, path, args, kwargs):
    """torch.nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True,
    bias=True): over the last dimension only (an int or a 1-element
    tuple/list), with its weight (and bias), or neither
    (elementwise_affine=False)."""
    shape = _arg(args, kwargs, 0, "normalized_shape", node)
    if isinstance(shape, (tuple, list)):
        if len(shape) != 1:
            raise FrontendError("nn.LayerNorm over %d dimensions is not supported: "
                                "tx.layernorm normalises the last dimension only "
                                "(normalized_shape must be an int or a 1-element tuple)"
                                % len(shape), node)
        shape = shape[0]
    size = _int(shape, "normalized_shape", node)
    eps = _arg(args, kwargs, 1, "eps", node, 1e-5)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise FrontendError("eps must be a number, got %r" % (eps,), node)
    affine = _arg(args, kwargs, 2, "elementwise_affine", node, True)
    if not isinstance(affine, bool):
        raise FrontendError("elementwise_affine must be a Python bool, got %r"
                            % (affine,), node)
    bias = _arg(args, kwargs, 3, "bias", node, True)
    if not isinstance(bias, bool):
        raise FrontendError("bias must be a Python bool, got %r" % (bias,), node)
    # elementwise_affine=False: neither weight nor bias (whatever `bias` says,
    # as torch.nn.LayerNorm).
    return V.Norm(path, "layernorm", size, float(eps), node, bias=bias and affine,
                  weight=affine)


def conv1d(tr, node, path, args, kwargs):
    """transformers' Conv1D(nf, nx) (GPT-2): x @ W + b with W [nx, nf], i.e.
    nn.Linear(nx, nf) whose checkpoint weight is stored transposed: a
    tx.layer marked `tx.checkpoint_transposed` (the weight loader reads the
    [in, out] tensor into the [out, in] weight; no copy on disk)."""
    nf = _int(_arg(args, kwargs, 0, "nf", node), "nf", node)
    nx = _int(_arg(args, kwargs, 1, "nx", node), "nx", node)
    return V.Linear(path, nx, nf, True, node, transposed=True)


def softmax_module(tr, node, path, args, kwargs):
    return V.SoftmaxModule(_arg(args, kwargs, 0, "dim", node, None))


def activation_module(kind, name):
    """nn.SiLU(inplace=False), nn.ReLU(inplace=False): in place, a call
    writes its input."""
    def factory(tr, node, path, args, kwargs):
        a = bind(name, [("inplace", False)], args, kwargs, node)
        return V.Activation(kind, inplace=a["inplace"] is True)
    return factory


def identity_module(tr, node, path, args, kwargs):
    return V.Identity()


def gelu_module(tr, node, path, args, kwargs):
    approx = bind("nn.GELU", [("approximate", "none")], args, kwargs, node)["approximate"]
    return V.Activation(_gelu_kind(approx, node))


def _gelu_kind(approximate, node):
    if approximate not in ("none", "tanh"):
        raise FrontendError("gelu: approximate=%r (expected 'none' or 'tanh')"
                            % (approximate,), node)
    return "gelu_tanh" if approximate == "tanh" else "gelu"


def unsupported_module(why):
    """A module class tx has no op for: an error where it is created (never
    an op that computes something else)."""
    def factory(tr, node, path, args, kwargs):
        raise FrontendError(why, node)
    return factory


def get_activation(tr, node, path, args, kwargs):
    """transformers' get_activation(name) (Falcon's MLP): ACT2FN[name]."""
    name = bind("get_activation", ["activation_string"], args, kwargs, node)[
        "activation_string"]
    if name not in ACT2FN:
        raise FrontendError("unsupported activation '%s' (known: %s)"
                            % (name, ", ".join(sorted(ACT2FN))), node)
    return V.Activation(ACT2FN[name])


def module_list(tr, node, path, args, kwargs):
    items = _arg(args, kwargs, 0, "modules", node, [])
    return V.ModuleList(items)


def sequential(tr, node, path, args, kwargs):
    """nn.Sequential(*modules) or nn.Sequential(OrderedDict(name=module)):
    items named by index or key (the checkpoint's mlp.0.weight, mlp.fc1.weight)."""
    if kwargs:
        raise FrontendError("nn.Sequential takes its modules by position", node)
    if len(args) == 1 and isinstance(args[0], dict):
        names, items = list(args[0].keys()), list(args[0].values())
        if not all(isinstance(n, str) for n in names):
            raise FrontendError("nn.Sequential(OrderedDict(...)) needs names that are "
                                "strings", node)
        return V.ModuleList(items, sequential=True, names=names)
    return V.ModuleList(args, sequential=True)


MODULES = {
    "torch.nn.Linear": linear,
    "torch.nn.Sequential": sequential,
    "Conv1D": conv1d,  # transformers.pytorch_utils.Conv1D, or the file's own
    "torch.nn.Softmax": softmax_module,
    "torch.nn.ModuleList": module_list,
    "get_activation": get_activation,  # transformers.activations.get_activation
    "torch.nn.Dropout": identity_module,
    "torch.nn.Identity": identity_module,
    "torch.nn.SiLU": activation_module("silu", "nn.SiLU"),
    "torch.nn.ReLU": activation_module("relu", "nn.ReLU"),
    "torch.nn.Sigmoid": activation_module("sigmoid", "nn.Sigmoid"),
    "torch.nn.Tanh": activation_module("tanh", "nn.Tanh"),
    "torch.nn.GELU": gelu_module,
    "torch.nn.RMSNorm": norm_factory(affine_arg="elementwise_affine"),
    "torch.nn.LayerNorm": layernorm_module,
    "torch.nn.GroupNorm": unsupported_module(
        "nn.GroupNorm is not supported: tx has no group-norm op"),
    "torch.nn.Embedding": unsupported_module(
        "nn.Embedding is not supported: import the layers from inputs_embeds"),
}

# Class names matched by suffix that are not recognised by name: a file's
# own <Model>LayerNorm may subtract the mean or not (T5's is an RMSNorm), so
# the user says which (nn.LayerNorm itself is supported).
UNSUPPORTED_SUFFIXES = {
    "LayerNorm": "a norm class of the file named *LayerNorm is not recognised by name "
                 "(some are RMSNorms): declare it with --norm CLASS=layernorm or "
                 "--norm CLASS=rmsnorm (table.register_norm)",
}

# Class names matched by suffix when no exact entry exists: every HF model
# names its RMSNorm <Model>RMSNorm(hidden_size, eps=...). Only for a class
# the file does not define with a forward (imported from elsewhere, as a
# modular file's base model's): a class of the file is translated, its
# __init__ run on the call's arguments and its forward read
# (Translator.instantiate, only_by_suffix).
MODULE_SUFFIXES = {
    "RMSNorm": norm_factory(),
}


# Rotary embedding modules (HF's <Model>RotaryEmbedding and its scaled
# variants: inv_freq and a cos/sin cache), by class name or suffix. Their
# __init__ is evaluated as far as it goes (torch.arange, register_buffer:
# attributes set before that, as Phi's `self.dim`, stay readable); calling
# one in forward, `self.rotary_emb(x, position_ids)` or `(x, seq_len=n)`,
# gives the (cos, sin) of the tokens' positions, which tx takes as arguments
# of the imported function (one pair per module attribute name), as it
# takes a forward's position_embeddings: tx computes no table.
ROTARY_MODULES = set()
ROTARY_MODULE_SUFFIXES = ("RotaryEmbedding",)


def register_rotary_module(name):
    """Declares class `name` a rotary embedding module (see ROTARY_MODULES)."""
    ROTARY_MODULES.add(name)


def is_rotary_module(name):
    short = name.rsplit(".", 1)[-1]
    return name in ROTARY_MODULES or short in ROTARY_MODULES or \
        short.endswith(ROTARY_MODULE_SUFFIXES)


# Torch module classes a class of the file may derive from, with a forward
# of its own (Falcon's FalconLinear(nn.Linear), Nemotron's
# NemotronLayerNorm1P(nn.LayerNorm)): super().__init__(...) makes the module
# as the factory of MODULES does, and attrs(tr, spec, node) gives the
# attributes PyTorch's class sets, which that forward reads. A subclass
# without a forward is the torch module itself.
def _linear_attrs(tr, spec, node):
    """nn.Linear's in_features, out_features, weight (a V.LinearWeight: only
    `x @ self.weight.T` reads it, as tx.linear of the weight alone) and bias
    (a parameter `<path>.bias`, or None)."""
    layer = V.Linear(spec.path, spec.in_features, spec.out_features, False, node)
    bias = V.Param(spec.path + ".bias", (spec.out_features,), node) if spec.bias else None
    return {"in_features": spec.in_features, "out_features": spec.out_features,
            "weight": V.LinearWeight(layer), "bias": bias}


def _layernorm_attrs(tr, spec, node):
    """nn.LayerNorm's normalized_shape, eps, elementwise_affine, weight and
    bias (parameters `<path>.weight`, `<path>.bias`, or None)."""
    weight = V.Param(spec.path + ".weight", (spec.size,), node) if spec.weight else None
    bias = V.Param(spec.path + ".bias", (spec.size,), node) if spec.bias else None
    return {"normalized_shape": (spec.size,), "eps": spec.eps,
            "elementwise_affine": spec.weight, "weight": weight, "bias": bias}


SUBCLASSES = {"torch.nn.Linear": _linear_attrs, "torch.nn.LayerNorm": _layernorm_attrs}


def register_module(name, factory):
    """Maps class `name` (dotted import path or a class of the file) to
    `factory(tr, node, path, args, kwargs)`."""
    MODULES[name] = factory


NORM_KINDS = ("rmsnorm", "layernorm")


def register_norm(name, size_arg=_SIZE_NAMES, size_index=0, eps_arg="eps",
                  eps_index=1, default_eps=None, kind="rmsnorm", bias=None):
    """Declares class `name` a norm over the last dimension: an RMSNorm
    (weight * x / rms(x); a forward that scales by (1 + weight), as Gemma's,
    is recognised) or (kind="layernorm") a LayerNorm
    ((x - mean) / std * weight + bias); its parameters the module's `weight`
    (and `bias`: default True for a LayerNorm). default_eps: 1e-6 for an
    RMSNorm, 1e-5 for a LayerNorm."""
    if kind not in NORM_KINDS:
        raise ValueError("unknown norm kind '%s' (known: %s)" % (kind, ", ".join(NORM_KINDS)))
    if default_eps is None:
        default_eps = 1e-5 if kind == "layernorm" else 1e-6
    if bias is None:
        bias = kind == "layernorm"
    if bias and kind != "layernorm":
        raise ValueError("an RMSNorm has no bias")
    MODULES[name] = norm_factory(kind, size_arg, size_index, eps_arg, eps_index,
                                 default_eps, bias)


def only_by_suffix_error(name):
    """Whether class `name` is known only as an UNSUPPORTED_SUFFIXES error
    (a file's *LayerNorm): one with its own forward is translated instead."""
    short = name.rsplit(".", 1)[-1]
    return name not in MODULES and short not in MODULES and \
        not any(short.endswith(s) for s in MODULE_SUFFIXES) and \
        any(short.endswith(s) for s in UNSUPPORTED_SUFFIXES)


def only_by_suffix(name):
    """Whether class `name` is known only by a MODULE_SUFFIXES suffix (a
    file's *RMSNorm), not by an exact entry (torch's classes, --norm /
    register_norm): one of the file with a forward is translated instead,
    its __init__ run and its forward read (the suffix says what such a
    class usually is, not what this one computes)."""
    short = name.rsplit(".", 1)[-1]
    return name not in MODULES and short not in MODULES and \
        any(short.endswith(s) for s in MODULE_SUFFIXES)


# __init__: the initial value of a parameter (its shape; the checkpoint
# gives the values), and nn.Parameter of it: a tx.param named by its path.
INIT_TENSORS = ("torch.ones", "torch.zeros", "torch.empty", "torch.randn", "torch.rand")


def _init_scalar_tensor(tr, node, args, kwargs):
    """torch.tensor(n, dtype=..., device=...) in __init__ of a number known at
    import (a 0-d tensor): the number."""
    a = bind("torch.tensor", ["data", "*", ("dtype", None), ("device", None),
                              ("requires_grad", False)], args, kwargs, node)
    if isinstance(a["data"], bool) or not isinstance(a["data"], (int, float)):
        # A buffer of values (Qwen's logn_tensor): not computed; an error
        # where forward reads it.
        return V.Unavailable("torch.tensor of %s made in __init__ at line %d is not "
                             "supported (only of a number known at import)"
                             % (tr.describe(a["data"]) if not isinstance(
                                 a["data"], (list, tuple)) else "a list", node.lineno))
    return a["data"]


def _init_scalar_math(fn, name):
    def handler(tr, node, args, kwargs):
        a = bind(name, ["input"], args, kwargs, node)
        if isinstance(a["input"], bool) or not isinstance(a["input"], (int, float)):
            raise FrontendError("%s in __init__: only of a number known at import, got %s"
                                % (name, tr.describe(a["input"])), node)
        return fn(a["input"])
    return handler


def _mask_of(tr, value, node, what):
    """A boolean mask operand: torch.ones((n, n)) or a BoolMask."""
    if isinstance(value, V.BoolMask):
        return value
    if isinstance(value, V.InitTensor) and value.fill == "ones" and len(value.shape) == 2 \
            and value.shape[0] == value.shape[1]:
        return V.BoolMask(lambda d: True, value.shape[0])
    raise FrontendError("%s in __init__: only of torch.ones((n, n)) or a mask made of it "
                        "(a causal or sliding-window mask), got %s"
                        % (what, tr.describe(value)), node)


def _tri(name, lower):
    def handler(tr, node, args, kwargs):
        a = bind(name, ["input", ("diagonal", 0), "*", ("out", None)], args, kwargs, node,
                 fixed=("out",))
        m = _mask_of(tr, a["input"], node, name)
        k = a["diagonal"]
        if isinstance(k, bool) or not isinstance(k, int):
            raise FrontendError("%s: diagonal must be a number known at import" % name, node)
        keep = m.keep  # (of the last two dimensions, as torch.tril)
        if lower:  # s <= t + k: d >= -k
            return V.BoolMask(lambda d: keep(d) and d >= -k, m.size, m.lead)
        return V.BoolMask(lambda d: keep(d) and d <= -k, m.size, m.lead)
    return handler


def _mask_logic(name, op):
    def handler(tr, node, args, kwargs):
        a = bind(name, ["input", "other", "*", ("out", None)], args, kwargs, node,
                 fixed=("out",))
        x = _mask_of(tr, a["input"], node, name)
        y = _mask_of(tr, a["other"], node, name)
        if x.size != y.size or x.lead != y.lead:
            raise FrontendError("%s of masks of different shapes" % name, node)
        kx, ky = x.keep, y.keep
        return V.BoolMask(lambda d: op(kx(d), ky(d)), x.size, x.lead)
    return handler


# Boolean attention masks built in __init__ (GPT-Neo's `bias` buffer):
# handler(tr, node, args, kwargs) -> V.BoolMask.
INIT_MASKS = {
    "torch.tril": _tri("torch.tril", True), "torch.triu": _tri("torch.triu", False),
    "torch.bitwise_xor": _mask_logic("torch.bitwise_xor", lambda a, b: a != b),
    "torch.logical_xor": _mask_logic("torch.logical_xor", lambda a, b: a != b),
    "torch.bitwise_and": _mask_logic("torch.bitwise_and", lambda a, b: a and b),
    "torch.logical_and": _mask_logic("torch.logical_and", lambda a, b: a and b),
}


INIT_SCALARS = {
    "torch.tensor": _init_scalar_tensor,
    "torch.sqrt": _init_scalar_math(math.sqrt, "torch.sqrt"),
    "torch.get_default_dtype": lambda tr, node, args, kwargs: "torch.float32",
}
# Methods of such a number (a 0-d tensor): dtype conversions, .item().
NUMBER_METHODS = ("to", "float", "double", "type", "item")
# Modules without parameters a forward may make and call (CodeGen's
# nn.Softmax(dim=-1)(attn_weights)).
STATELESS_MODULES = ("torch.nn.Softmax",)


def init_tensor(tr, node, args, kwargs):
    sizes = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
        else list(args)
    if not sizes or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0
                            for n in sizes):
        raise FrontendError("a parameter's sizes must be positive numbers known at "
                            "import, got %r" % (sizes,), node)
    return V.InitTensor(sizes)


def parameter(tr, node, args, kwargs):
    data = _arg(args, kwargs, 0, "data", node)
    if not isinstance(data, V.InitTensor):
        raise FrontendError("nn.Parameter of %s: only of torch.ones/zeros/empty/randn/"
                            "rand(sizes) (the checkpoint gives its values)"
                            % tr.describe(data), node)
    return V.Param(tr.init_path, data.shape, node)


def lookup_module(name):
    if name in MODULES:
        return MODULES[name]
    short = name.rsplit(".", 1)[-1]
    if not name.startswith("torch.") and short in MODULES:
        return MODULES[short]
    for suffix, factory in MODULE_SUFFIXES.items():
        if short.endswith(suffix):
            return factory
    for suffix, why in UNSUPPORTED_SUFFIXES.items():
        if short.endswith(suffix):
            return unsupported_module("%s: %s" % (short, why))
    return None


# -- activations: ACT2FN[config.hidden_act] -----------------------------------
ACT2FN = {
    "silu": "silu", "swish": "silu", "relu": "relu", "gelu": "gelu",
    "gelu_pytorch_tanh": "gelu_tanh", "gelu_new": "gelu_tanh", "gelu_fast": "gelu_tanh",
    # HF's AccurateGELUActivation and GELUActivation(use_gelu_python=True):
    # the tanh approximation and the erf GELU, written out.
    "gelu_accurate": "gelu_tanh", "gelu_python": "gelu",
    # HF's ReLUSquaredActivation (Nemotron, Primer): relu, then its square
    # (table.COMPOSITE_ACTIVATIONS).
    "relu2": "relu2",
    # HF's QuickGELUActivation (CLIP, OWL-ViT, X-CLIP, GroupViT):
    # input * torch.sigmoid(1.702 * input).
    "quick_gelu": "quick_gelu",
    "sigmoid": "sigmoid", "tanh": "tanh",
}

# Activations tx has no one op for, composed of tx ops in PyTorch's order:
# kind -> steps on y (first the input x), each ("unary", kind), ("square",)
# (y * y, as torch.square), ("scale", c) (y * c) or ("times_input",) (x * y).
COMPOSITE_ACTIVATIONS = {
    "relu2": (("unary", "relu"), ("square",)),
    "quick_gelu": (("scale", 1.702), ("unary", "sigmoid"), ("times_input",)),
}

# -- functions: called in forward ---------------------------------------------
# handler(tr, node, args, kwargs) -> value


# The parameters of PyTorch's elementwise functions: F.silu/F.relu take
# `inplace`, torch.relu/exp/neg/... `out`.
_INPLACE = ["input", ("inplace", False)]
_OUT = ["input", "*", ("out", None)]


def unary_function(kind, name, params=_OUT):
    def handler(tr, node, args, kwargs):
        a = bind(name, params, args, kwargs, node)
        x, out = a["input"], a.get("out")
        if a.get("inplace") is True:
            out = x
        if out is not None:
            return tr.unary_into(kind, x, out, node)
        return tr.unary(kind, x, node)
    return handler


def gelu_function(tr, node, args, kwargs):
    a = bind("F.gelu", ["input", ("approximate", "none")], args, kwargs, node)
    return tr.unary(_gelu_kind(a["approximate"], node), a["input"], node)


def binary_function(kind, name):
    """torch.add/sub(input, other, *, alpha=1, out=None) (input + alpha *
    other), torch.mul(input, other, *, out=None), torch.div(input, other, *,
    rounding_mode=None, out=None) (a rounding mode is not supported)."""
    params = ["input", "other", "*", ("out", None)]
    if kind in ("add", "sub"):
        params.append(("alpha", 1))
    if kind == "div":
        params.append(("rounding_mode", None))
    def handler(tr, node, args, kwargs):
        a = bind(name, params, args, kwargs, node,
                 fixed=("rounding_mode",) if kind == "div" else ())
        other = tr.scaled(a["other"], a.get("alpha", 1), node)
        if a["out"] is not None:
            return tr.binary_into(kind, a["input"], other, a["out"], node)
        return tr.binary(kind, a["input"], other, node)
    return handler


def clamp_function(kind):
    """torch.clamp/clip(input, min=None, max=None, *, out=None),
    torch.clamp_min(input, min), torch.clamp_max(input, max)."""
    name = "torch." + kind

    def handler(tr, node, args, kwargs):
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None)
        return tr.clamp(name, args, kwargs, node, into=out)
    return handler


# Partial rotary: the config key giving the fraction of each head's features
# that are rotated (the rest pass through), as HF's rotary modules read it.
ROTARY_FRACTION_KEYS = ("partial_rotary_factor", "rotary_pct")


def rotary_dim(tr, x, node):
    """The number of rotated features: head_dim * the config's fraction."""
    data = tr.config.data
    key = next((k for k in ROTARY_FRACTION_KEYS if data.get(k) is not None), None)
    if key is None or not isinstance(x, V.Tensor) or x.type is None or \
            len(x.type.shape) != 3:
        return None
    fraction = data[key]
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or \
            not 0 < fraction <= 1:
        raise FrontendError("config %s must be a number in (0, 1], got %r"
                            % (key, fraction), node)
    width = x.type.shape[2]
    head_dim = data.get("head_dim")
    if not isinstance(head_dim, int) and isinstance(data.get("hidden_size"), int) and \
            isinstance(data.get("num_attention_heads"), int):
        head_dim = data["hidden_size"] // data["num_attention_heads"]
    if isinstance(head_dim, int) and width != head_dim and width == int(head_dim * fraction):
        # The caller sliced the rotated features already (Phi's
        # query_states[..., :rotary_ndims]): the helper rotates all it gets.
        return None
    return int(width * fraction)


def rotary_operands(handler, args, kwargs, node):
    """What rotary handler `handler` reads from its arguments: the tensors
    it rotates ([q, k] or [x]) and (cos, sin)."""
    if handler is rotary_pair:
        xs = [_arg(args, kwargs, 0, ("q", "query"), node),
              _arg(args, kwargs, 1, ("k", "key"), node)]
    else:
        xs = [_arg(args, kwargs, 0, "x", node)]
    first = 2 if handler is rotary_pair else 1
    return xs, (_arg(args, kwargs, first, "cos", node),
                _arg(args, kwargs, first + 1, "sin", node))


def rotary_pair(tr, node, args, kwargs, interleaved=False, negate_sin=False):
    """HF apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1);
    `interleaved`: the file's own helper rotates pairs (2i, 2i+1)
    (translate.rotary_layout), HF's Llama rotates the halves."""
    (q, k), (cos, sin) = rotary_operands(rotary_pair, args, kwargs, node)
    heads_dim = _arg(args, kwargs, 5, "unsqueeze_dim", node, 1)
    rot = rotary_dim(tr, q, node)
    if getattr(k, "role", None) is not None:
        raise FrontendError("the two-tensor rotary helper (q, k, cos, sin) got %s as k: "
                            "for a one-tensor helper use --helper NAME=apply_rotary_single"
                            % k.role, node)
    return (tr.rotary(q, cos, sin, heads_dim, node, rot, interleaved, negate_sin),
            tr.rotary(k, cos, sin, heads_dim, node, rot, interleaved, negate_sin))


def rotary_single(tr, node, args, kwargs, interleaved=False, negate_sin=False):
    """apply_rotary(x, cos, sin, unsqueeze_dim=1): one tensor (Gemma style;
    GPT-J's apply_rotary_pos_emb(tensor, sin, cos) by the names)."""
    (x,), (cos, sin) = rotary_operands(rotary_single, args, kwargs, node)
    heads_dim = _arg(args, kwargs, 4, "unsqueeze_dim", node, 1)
    return tr.rotary(x, cos, sin, heads_dim, node, rotary_dim(tr, x, node), interleaved,
                     negate_sin)


_EAGER_ARGS = ("module", "query", "q", "key", "k", "value", "v", "attention_mask", "mask",
               "scaling", "dropout", "sliding_window", "softcap")


def _no_other_arguments(kwargs, known, what, node):
    """An argument the handler does not read must not change the result:
    None, False or 0 (head_mask=None, output_attentions=False) are fine, and
    so are the position ids (HF passes position_ids= on to every attention
    function; only flash attention reads them, to find packed sequences)."""
    for name, value in kwargs.items():
        if name in known or value is None or value is False or (
                isinstance(value, (int, float)) and not isinstance(value, bool)
                and value == 0) or isinstance(value, (str, V.Instance, V.Positions)):
            continue
        raise FrontendError("%s: argument '%s' (%s) is not supported"
                            % (what, name, "a tensor" if isinstance(value, V.Tensor)
                               else type(value).__name__), node)


def eager_attention(tr, node, args, kwargs):
    """HF eager_attention_forward(module, q, k, v, attention_mask, scaling,
    dropout=0.0, sliding_window=None, softcap=None, **kwargs): q/k/v [batch,
    heads, tokens, head_dim]; returns (output [batch, tokens, heads,
    head_dim], None): the weights are not computed (as with SDPA)."""
    q = _arg(args, kwargs, 1, ("query", "q"), node)
    k = _arg(args, kwargs, 2, ("key", "k"), node)
    v = _arg(args, kwargs, 3, ("value", "v"), node)
    mask = _arg(args, kwargs, 4, ("attention_mask", "mask"), node, None)
    scaling = _arg(args, kwargs, 5, "scaling", node, None)
    dropout = _arg(args, kwargs, 6, "dropout", node, 0.0)
    _no_other_arguments(kwargs, _EAGER_ARGS, "eager attention", node)
    if dropout not in (0, 0.0):
        raise FrontendError("attention dropout must be 0 (inference), got %r" % (dropout,), node)
    # HF's layers pass sliding_window= (None on full-attention layers) and
    # the model gives a sliding layer the sliding-window causal mask
    # (masking_utils: key s visible to query t when t - s < sliding_window);
    # Gemma 2's softcap= caps the scaled scores before the mask.
    out = tr.attention(q, k, v, mask, scaling, node, heads_first=True,
                       window=kwargs.get("sliding_window"), softcap=kwargs.get("softcap"),
                       window_given="sliding_window" in kwargs)
    return (tr.transposed(out, 1, 2), None)


# HF's attention registry (ALL_ATTENTION_FUNCTIONS[config._attn_implementation]):
# what each implementation does where the layer's mask is None. "eager" adds
# no mask; "sdpa" is causal when the module is (`is_causal = query.shape[2] >
# 1 and attention_mask is None and getattr(module, "is_causal", True)`, unless
# the call passes is_causal=; one query token is the same either way), and so
# are the flash implementations (`module.is_causal`). Others: an error.
ATTENTION_IMPLEMENTATIONS = {
    "eager": "eager_attention_forward",
    "sdpa": "sdpa_attention_forward",
    "flash_attention_2": "sdpa_attention_forward",
    "flash_attention_3": "sdpa_attention_forward",
}


def sdpa_attention(tr, node, args, kwargs):
    """transformers' sdpa_attention_forward(module, q, k, v, attention_mask,
    dropout=0.0, scaling=None, is_causal=None, **kwargs) (and the flash
    implementations): as eager_attention_forward where a mask is given;
    without one, causal where is_causal= says so, else where the module's
    is_causal attribute does (True when it has none, as HF's default)."""
    kwargs = dict(kwargs)
    is_causal = kwargs.pop("is_causal", None)
    mask = _arg(args, kwargs, 4, ("attention_mask", "mask"), node, None)
    if is_causal is not None and not isinstance(is_causal, bool):
        raise FrontendError("attention: is_causal must be True, False or None known at "
                            "import, got %s" % tr.describe(is_causal), node)
    if mask is None:
        if is_causal is None:
            module = _arg(args, kwargs, 0, "module", node)
            if not isinstance(module, V.Instance):
                raise FrontendError("attention: the module argument is %s, not a module "
                                    "(its is_causal decides the mask)" % tr.describe(module),
                                    node)
            is_causal = tr.instance_attribute(module, "is_causal", node, True)
            if not isinstance(is_causal, bool):
                raise FrontendError("attention: the module's is_causal is %s, not a bool "
                                    "known at import" % tr.describe(is_causal), node)
        if is_causal:
            args = list(args)
            if len(args) > 4:
                args[4] = V.CausalMask()
            else:
                kwargs["attention_mask"] = V.CausalMask()
    elif is_causal:
        raise FrontendError("attention: is_causal=True with an attention mask (SDPA refuses "
                            "both)", node)
    return eager_attention(tr, node, args, kwargs)


sdpa_attention.file_body_first = True  # a file's own function of that name: its body


# The handler reads these parameters: a file's own eager_attention_forward
# without them (GPT-2's computes its scale from module attributes) is
# translated from its body instead (attention written out, below).
eager_attention.needs_params = ("scaling",)


def matmul(tr, node, args, kwargs):
    """torch.matmul(a, b): attention written out (q @ k^T ... probs @ v) or
    an opaque call."""
    a = bind("torch.matmul", ["input", "other", "*", ("out", None)], args, kwargs, node,
             fixed=("out",))
    return tr.matmul(a["input"], a["other"], node)


def bmm(tr, node, args, kwargs):
    """torch.bmm(input, mat2): BART's attention (BioGPT, XGLM, ...) on
    [batch * heads, tokens, head_dim] views (batch 1), as torch.matmul's."""
    a = bind("torch.bmm", ["input", "mat2", "*", ("out", None)], args, kwargs, node,
             fixed=("out",))
    return tr.matmul(a["input"], a["mat2"], node)


def linear_function(tr, node, args, kwargs):
    """F.linear(input, weight, bias=None) of an nn.Linear subclass's own
    weight (V.LinearWeight): tx.linear, then + bias; of other tensors an
    opaque call."""
    a = bind("F.linear", ["input", "weight", ("bias", None)], args, kwargs, node)
    if not isinstance(a["weight"], V.LinearWeight):
        return tr.opaque("torch.nn.functional.linear", args, kwargs, node)
    out = tr.weight_matmul(a["input"], V.LinearWeight(a["weight"].layer,
                                                      not a["weight"].transposed), node)
    return out if a["bias"] is None else tr.binary("add", out, a["bias"], node)


def softmax_function(name):
    """F.softmax(x, dim, dtype=...), torch.softmax: of attention scores the
    probabilities (a step of the chain); of another tensor an opaque call."""
    def handler(tr, node, args, kwargs):
        x = _arg(args, kwargs, 0, "input", node)
        if isinstance(x, V.AttentionChain):
            return tr.chain_softmax(x, _arg(args, kwargs, 1, "dim", node, None), node)
        return tr.opaque(name, args, kwargs, node)
    return handler


def dropout_function(tr, node, args, kwargs):
    """F.dropout(x, p=0.5, training=True): the identity when training is
    False or p is 0 (inference), else an error."""
    x = _arg(args, kwargs, 0, "input", node)
    p = _arg(args, kwargs, 1, "p", node, 0.5)
    training = _arg(args, kwargs, 2, "training", node, True)
    if training is not False and p not in (0, 0.0):
        raise FrontendError("dropout with p=%r in training mode: only inference (p=0 or "
                            "training=False) is supported" % (p,), node)
    if kwargs.get("inplace") is True and not isinstance(x, V.Tensor):
        tr.tensor(x, node)
    return x


def repeat_kv(tr, node, args, kwargs):
    """HF's repeat_kv(hidden_states, n_rep) (the file's own definition is not
    inlined: tx.attention does GQA by head counts)."""
    return tr.repeat_kv(_arg(args, kwargs, 0, "hidden_states", node),
                        _arg(args, kwargs, 1, "n_rep", node), node)


def repeat_interleave(tr, node, args, kwargs):
    """torch.repeat_interleave(x, repeats, dim=1) of [batch, heads, tokens,
    head_dim]: as repeat_kv; any other form is an opaque call."""
    x = _arg(args, kwargs, 0, "input", node)
    n = _arg(args, kwargs, 1, "repeats", node, None)
    dim = _arg(args, kwargs, 2, "dim", node, None)
    if dim == 1 and isinstance(n, int) and not isinstance(n, bool) and \
            isinstance(x, V.Tensor) and x.dims == tr.HEADS_FIRST:
        return tr.repeat_kv(x, n, node)
    return tr.opaque("torch.repeat_interleave", args, kwargs, node)


def full(tr, node, args, kwargs):
    """torch.full([], c, ...): a 0-d tensor of a number (GPT-2 divides its
    attention scores by one) is that number; another size an opaque call."""
    size = _arg(args, kwargs, 0, "size", node)
    fill = _arg(args, kwargs, 1, "fill_value", node)
    if size in ((), []) and isinstance(fill, (int, float)) and not isinstance(fill, bool):
        return fill
    return tr.opaque("torch.full", args, kwargs, node)


def tanh_function(name):
    """torch.tanh(x): of attention scores Gemma 2's soft-capping (a step of
    the chain); of another tensor tx.unary tanh."""
    plain = unary_function("tanh", name)
    def handler(tr, node, args, kwargs):
        x = _arg(args, kwargs, 0, "input", node)
        if isinstance(x, V.AttentionChain):
            return tr.chain_tanh(x, node)
        return plain(tr, node, args, kwargs)
    return handler


def norm_function(name):
    """torch.pow(x, 2), torch.square, torch.mean(x, -1, keepdim=True),
    torch.var(x, -1, keepdim=True, unbiased=False), torch.rsqrt/sqrt: the
    steps of a norm written out in forward (ops.norm_*); any other form an
    opaque call."""
    method = name.rsplit(".", 1)[-1]
    def handler(tr, node, args, kwargs):
        x = _arg(args, kwargs, 0, "input", node)
        rest, kw = list(args[1:]), {k: v for k, v in kwargs.items() if k != "input"}
        if isinstance(x, V.NormChain):
            if method in ("rsqrt", "sqrt"):
                return tr.norm_root(method, x, node)
            return tr.norm_chain_method(x, method, rest, kw, node)
        if isinstance(x, V.Tensor) and method in tr.NORM_METHODS:
            chain = tr.norm_start(x, method, rest, kw, node)
            if chain is not None:
                return chain
        return tr.opaque(name, args, kwargs, node)
    return handler


def layer_norm(tr, node, args, kwargs):
    """F.layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5)."""
    return tr.layer_norm(_arg(args, kwargs, 0, "input", node),
                         _arg(args, kwargs, 1, "normalized_shape", node),
                         _arg(args, kwargs, 2, "weight", node, None),
                         _arg(args, kwargs, 3, "bias", node, None),
                         _arg(args, kwargs, 4, "eps", node, 1e-5), node)


def rms_norm(tr, node, args, kwargs):
    """F.rms_norm(input, normalized_shape, weight=None, eps=None) (torch >=
    2.4): tx.rmsnorm over the last dimension, weightless without a weight;
    eps None is torch.finfo(input.dtype).eps (of the import's dtype)."""
    x = _arg(args, kwargs, 0, "input", node)
    shape = _arg(args, kwargs, 1, "normalized_shape", node)
    weight = _arg(args, kwargs, 2, "weight", node, None)
    eps = _arg(args, kwargs, 3, "eps", node, None)
    if eps is None:
        eps = {"f32": 2.0**-23, "bf16": 2.0**-7, "f16": 2.0**-10}[tr.dtype]
    return tr.rms_norm(x, shape, weight, eps, node)


def cat(tr, node, args, kwargs):
    """torch.cat(tensors, dim=0, *, out=None) (torch.concat, torch.concatenate;
    `axis` for dim): with out, the result is copied into it."""
    kwargs = dict(kwargs)
    if "axis" in kwargs:
        kwargs["dim"] = kwargs.pop("axis")
    a = bind("torch.cat", ["tensors", ("dim", 0), "*", ("out", None)], args, kwargs, node)
    out = a["out"]
    if out is not None and isinstance(out, V.Tensor) and isinstance(a["tensors"], (list, tuple)) \
            and any(isinstance(x, V.Tensor) and tr.root(x) is tr.root(out)
                    for x in a["tensors"]):
        # PyTorch then reads pieces it has already overwritten (1.13), or
        # refuses (later versions).
        raise FrontendError("torch.cat: out is (a view of) the buffer of a concatenated "
                            "tensor: not supported", node)
    result = tr.cat(a["tensors"], a["dim"], node)
    if out is not None:
        return tr.copy_into(result, out, node)
    return result


def _tensor_and_rest(args, kwargs, node, names):
    """torch.f(input, ...) as the method input.f(...): the tensor (positional
    or by one of `names`), the other arguments and keywords."""
    kwargs = dict(kwargs)
    named = [n for n in names if n in kwargs]
    t = kwargs.pop(named[0]) if named else _arg(args, kwargs, 0, "input", node)
    rest = list(args) if named else list(args[1:])
    return t, rest, kwargs


def split_function(name):
    """torch.chunk/split/narrow(input, ...): the tensor methods."""
    def handler(tr, node, args, kwargs):
        t, rest, kwargs = _tensor_and_rest(args, kwargs, node, ("input", "tensor"))
        return tr.split_method(name, t, rest, kwargs, node)
    return handler


def tensor_method_function(name):
    """torch.<name>(input, ...) (flatten, unflatten, unbind, select): the
    tensor method of that name."""
    def handler(tr, node, args, kwargs):
        t, rest, kwargs = _tensor_and_rest(args, kwargs, node, ("input",))
        return tr.method(tr.tensor(t, node), name, rest, kwargs, node)
    return handler


def apply_chunking_to_forward(tr, node, args, kwargs):
    """transformers' apply_chunking_to_forward(forward_fn, chunk_size,
    chunk_dim, *input_tensors) (BERT's, ViT's, DistilBERT's feed-forward):
    with chunk_size 0 (the config's default chunk_size_feed_forward) the call
    forward_fn(*input_tensors), as HF's; chunks along the tokens are an
    error (their count depends on the token count)."""
    if kwargs or len(args) < 4:
        raise FrontendError("apply_chunking_to_forward(forward_fn, chunk_size, chunk_dim, "
                            "*input_tensors) expected, by position", node)
    fn, size = args[0], args[1]
    if isinstance(size, bool) or not isinstance(size, int):
        raise FrontendError("apply_chunking_to_forward: chunk_size must be a number known "
                            "at import, got %s" % tr.describe(size), node)
    if size != 0:
        raise FrontendError("apply_chunking_to_forward with chunk_size %d: chunks of the "
                            "token dimension are not supported (chunk_size_feed_forward 0 "
                            "is)" % size, node)
    return tr.call(fn, list(args[3:]), {}, node, None)


def sdpa(tr, node, args, kwargs):
    """F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
    is_causal=False, scale=None): [batch, heads, tokens, head_dim]."""
    q = _arg(args, kwargs, 0, "query", node)
    k = _arg(args, kwargs, 1, "key", node)
    v = _arg(args, kwargs, 2, "value", node)
    mask = _arg(args, kwargs, 3, "attn_mask", node, None)
    dropout = _arg(args, kwargs, 4, "dropout_p", node, 0.0)
    causal = _arg(args, kwargs, 5, "is_causal", node, False)
    scale = _arg(args, kwargs, 6, "scale", node, None)
    if dropout not in (0, 0.0):
        raise FrontendError("attention dropout must be 0 (inference)", node)
    if mask is not None and not isinstance(mask, V.CausalMask):
        raise FrontendError("attn_mask must be the causal attention_mask or None", node)
    _no_other_arguments(kwargs, ("query", "key", "value", "attn_mask", "dropout_p",
                                 "is_causal", "scale", "enable_gqa"), "sdpa", node)
    if causal is True:
        mask = V.CausalMask()
    # The mask decides the window (none is passed here): with a config
    # sliding window an error in tr.attention unless is_causal=True (a
    # causal mask made by SDPA itself, never windowed).
    return tr.attention(q, k, v, mask, scale, node, heads_first=True,
                        window_given=causal is True)


def where(tr, node, args, kwargs):
    """torch.where(condition, input, other): on attention written out,
    `torch.where(mask, scores, v)` with a boolean mask of __init__ (GPT-Neo's
    causal or sliding-window `bias`) and v a very negative number
    (torch.finfo(dtype).min, -1e9, ...): the chain keeps what a causal
    attention with that window keeps; anything else an error."""
    a = bind("torch.where", ["condition", "input", "other"], args, kwargs, node)
    cond, x, other = a["condition"], a["input"], a["other"]
    if isinstance(x, V.AttentionChain) or isinstance(cond, V.BoolMask):
        return tr.chain_where(cond, x, other, node)
    raise FrontendError("torch.where is supported only as the boolean attention mask of "
                        "attention written out (torch.where(mask, scores, min))", node)


def maximum(name):
    """torch.max(input, other) / torch.maximum of attention scores and
    torch.finfo(dtype).min (XGLM's clamp after adding the mask: it changes
    only the -inf the mask put there, which softmax sends to 0 either way):
    the scores; torch.max of anything else an opaque call."""
    def handler(tr, node, args, kwargs):
        if args and isinstance(args[0], V.AttentionChain):
            a = bind(name, ["input", "other"], args, kwargs, node)
            other = a["other"]
            if isinstance(other, bool) or not isinstance(other, (int, float)) or \
                    other > V.FInfo(tr.dtype).min:
                raise FrontendError("%s of %s and %s: only a clamp at torch.finfo(dtype).min "
                                    "is supported" % (name, tr.describe(args[0]),
                                                      tr.describe(other)), node)
            return tr.chain_method(args[0], "to", [], {}, node)
        return tr.opaque(name, args, kwargs, node)
    return handler


def finfo(tr, node, args, kwargs):
    """torch.finfo(dtype): min/max/eps of the import's dtype (the tensors'
    dtype in the IR)."""
    bind("torch.finfo", [("type", None)], args, kwargs, node)
    return V.FInfo(tr.dtype)


def scalar_tensor(tr, node, args, kwargs):
    """torch.tensor(n, dtype=..., device=...) of a number known at import
    (GPT-Neo's mask value): the number."""
    a = bind("torch.tensor", ["data", "*", ("dtype", None), ("device", None),
                              ("requires_grad", False)], args, kwargs, node)
    if isinstance(a["data"], bool) or not isinstance(a["data"], (int, float)):
        return tr.opaque("torch.tensor", args, kwargs, node)
    return a["data"]


def gather(tr, node, args, kwargs):
    """torch.gather(input, dim, index, *, sparse_grad=False): GPT-J's rows of
    its sinusoid table, `torch.gather(table, 1, position_ids.unsqueeze(-1)
    .repeat(1, 1, width))`; of anything else an opaque call."""
    a = bind("torch.gather", ["input", "dim", "index", "*", ("sparse_grad", False)],
             args, kwargs, node)
    t, index = a["input"], a["index"]
    if isinstance(t, V.SinusoidTable) or isinstance(index, V.Positions):
        if not (isinstance(t, V.SinusoidTable) and t.batch and a["dim"] in (1, -2) and
                isinstance(index, V.Positions) and index.columns == t.width):
            raise FrontendError("torch.gather with the position ids: only the rows of a "
                                "sinusoid table, torch.gather(table.repeat(1, 1, 1), 1, "
                                "position_ids.unsqueeze(-1).repeat(1, 1, width))", node)
        return tr.sinusoid_rows(t, index, node)
    return tr.opaque("torch.gather", args, kwargs, node)


FUNCTIONS = {
    "torch.gather": gather,
    "torch.where": where,
    "torch.finfo": finfo,
    "torch.max": maximum("torch.max"), "torch.maximum": maximum("torch.maximum"),
    "torch.tensor": scalar_tensor,
    "torch.nn.functional.silu": unary_function("silu", "F.silu", _INPLACE),
    "torch.nn.functional.relu": unary_function("relu", "F.relu", _INPLACE),
    "torch.relu": unary_function("relu", "torch.relu"),
    "torch.nn.functional.gelu": gelu_function,
    "torch.exp": unary_function("exp", "torch.exp"),
    "torch.sigmoid": unary_function("sigmoid", "torch.sigmoid"),
    "torch.nn.functional.sigmoid": unary_function("sigmoid", "F.sigmoid"),
    "torch.neg": unary_function("neg", "torch.neg"),
    "torch.add": binary_function("add", "torch.add"),
    "torch.sub": binary_function("sub", "torch.sub"),
    "torch.mul": binary_function("mul", "torch.mul"),
    "torch.div": binary_function("div", "torch.div"),
    "torch.clamp": clamp_function("clamp"), "torch.clip": clamp_function("clip"),
    "torch.clamp_min": clamp_function("clamp_min"),
    "torch.clamp_max": clamp_function("clamp_max"),
    "torch.nn.functional.scaled_dot_product_attention": sdpa,
    "torch.cat": cat, "torch.concat": cat, "torch.concatenate": cat,
    "torch.chunk": split_function("chunk"), "torch.split": split_function("split"),
    "torch.narrow": split_function("narrow"),
    "torch.flatten": tensor_method_function("flatten"),
    "torch.unflatten": tensor_method_function("unflatten"),
    "torch.unbind": tensor_method_function("unbind"),
    "torch.select": tensor_method_function("select"),
    "apply_rotary_pos_emb": rotary_pair,
    "apply_chunking_to_forward": apply_chunking_to_forward,
    "eager_attention_forward": eager_attention,
    "sdpa_attention_forward": sdpa_attention,
    "torch.matmul": matmul,
    "torch.bmm": bmm,
    "torch.nn.functional.linear": linear_function,
    "torch.nn.functional.softmax": softmax_function("torch.nn.functional.softmax"),
    "torch.softmax": softmax_function("torch.softmax"),
    "torch.nn.functional.dropout": dropout_function,
    "torch.full": full,
    "torch.repeat_interleave": repeat_interleave,
    "torch.nn.functional.layer_norm": layer_norm,
    "torch.nn.functional.rms_norm": rms_norm,
    "torch.tanh": tanh_function("torch.tanh"),
    "torch.pow": norm_function("torch.pow"), "torch.square": norm_function("torch.square"),
    "torch.mean": norm_function("torch.mean"), "torch.var": norm_function("torch.var"),
    "torch.rsqrt": norm_function("torch.rsqrt"), "torch.sqrt": norm_function("torch.sqrt"),
    "torch.nn.functional.tanh": tanh_function("torch.nn.functional.tanh"),
    "repeat_kv": repeat_kv,
}


# -- context managers: `with NAME(...):`, the body then runs as it is ---------
# handler(tr, node, args, kwargs) checks the arguments (an error when the
# body would compute something else under it).


def _no_grad(name):
    def handler(tr, node, args, kwargs):
        bind(name, [("mode", True)] if name.endswith("inference_mode") else [],
             args, kwargs, node)
    return handler


def _autocast(name, params):
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)
    and its per-device forms: only enabled=False (the body then computes in
    the dtypes it names, as the import does); an enabled autocast would
    compute the body in another dtype."""
    def handler(tr, node, args, kwargs):
        a = bind(name, params, args, kwargs, node)
        if a["enabled"] is not False:
            raise FrontendError("%s with enabled=%r: an autocast region computes in "
                                "another dtype; only enabled=False is supported"
                                % (name, a["enabled"]), node)
    return handler


_AUTOCAST = ["device_type", ("dtype", None), ("enabled", True), ("cache_enabled", None)]
_DEVICE_AUTOCAST = [("enabled", True), ("dtype", None), ("cache_enabled", True)]
CONTEXT_MANAGERS = {
    "torch.no_grad": _no_grad("torch.no_grad"),
    "torch.inference_mode": _no_grad("torch.inference_mode"),
    "torch.autocast": _autocast("torch.autocast", _AUTOCAST),
    "torch.amp.autocast": _autocast("torch.amp.autocast", _AUTOCAST),
    "torch.cuda.amp.autocast": _autocast("torch.cuda.amp.autocast", _DEVICE_AUTOCAST),
    "torch.cpu.amp.autocast": _autocast("torch.cpu.amp.autocast", _DEVICE_AUTOCAST),
}


def _autocast_enabled(tr, node, args, kwargs):
    """torch.is_autocast_enabled(): False (the import is of the model run
    without autocast, in the dtype it names)."""
    bind("torch.is_autocast_enabled", [("device_type", None)], args, kwargs, node)
    return False


FUNCTIONS["torch.is_autocast_enabled"] = _autocast_enabled


def _not_tracing(name):
    """torch.jit.is_tracing() and its kin, and transformers'
    is_torch_fx_proxy(x) / is_torchdynamo_compiling(): False (the import is
    of the model run eagerly; GPT-J's `if is_torch_fx_proxy(position_ids)
    or torch.jit.is_tracing():`). A function of the file of one of these
    names is not taken by its name: its body is translated."""
    def handler(tr, node, args, kwargs):
        if len(args) + len(kwargs) > 1:
            raise FrontendError("%s takes at most one argument" % name, node)
        return False
    handler.file_body_first = True
    return handler


# Questions about tracing and compilation, all False at import.
TRACING_QUERIES = ("torch.jit.is_tracing", "torch.jit.is_scripting",
                   "torch.compiler.is_compiling", "torch._dynamo.is_compiling",
                   "is_torch_fx_proxy", "is_torchdynamo_compiling")
for _name in TRACING_QUERIES:
    FUNCTIONS[_name] = _not_tracing(_name)


# Imported names whose truth value the import knows (tested as `if NAME:`):
# transformers' torch-version flags are true (the model as a recent
# PyTorch runs it). Matched on the name's last component, as a prefix;
# any other imported name tested for truth is an error (its value is not
# known at import).
TRUE_FLAG_PREFIXES = ("is_torch_greater_or_equal_than_", "is_torch_greater_than_")


# The PyTorch version the import takes the model to run on (a recent one,
# as the flags above say): transformers' get_torch_version().
TORCH_VERSION = "2.6.0"


def _version_parse(tr, node, args, kwargs):
    """packaging.version.parse(s) / Version(s) of a string known at import:
    its release numbers as a tuple (2.2.0 -> (2, 2, 0)), which compare as
    versions do (pre-releases, 2.2.0a0, as their release)."""
    s = _arg(args, kwargs, 0, "version", node)
    if not isinstance(s, str):
        raise FrontendError("version.parse of %s: only of a string known at import"
                            % tr.describe(s), node)
    parts = []
    for piece in s.strip().lstrip("v").split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    if not parts:
        raise FrontendError("version.parse(%r): not a version" % s, node)
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()  # 2.2.0 == 2.2
    return tuple(parts)


def _torch_version(tr, node, args, kwargs):
    if args or kwargs:
        raise FrontendError("get_torch_version() takes no arguments", node)
    return TORCH_VERSION


# Functions of Python values, run at import in __init__ and forward, by
# dotted name or (outside torch) by the name's last component.
IMPORT_TIME_FUNCTIONS = {
    "get_torch_version": _torch_version,
    "packaging.version.parse": _version_parse, "packaging.version.Version": _version_parse,
}


def imported_flag(dotted):
    """True/False for an imported flag the table knows, else None."""
    last = dotted.rsplit(".", 1)[-1]
    if any(last.startswith(p) for p in TRUE_FLAG_PREFIXES):
        return True
    return None


def register_function(name, handler):
    """Maps function `name` to `handler(tr, node, args, kwargs)`."""
    FUNCTIONS[name] = handler


def alias_function(name, existing):
    """`name` behaves as the function `existing` of the table."""
    if existing not in FUNCTIONS:
        raise KeyError("no function '%s' in the table (known: %s)"
                       % (existing, ", ".join(sorted(FUNCTIONS))))
    FUNCTIONS[name] = FUNCTIONS[existing]


FUNCTIONS["apply_rotary_single"] = rotary_single


def _lookup(mapping, name):
    """mapping's entry for a dotted name, or (outside torch) for its last
    component."""
    if name in mapping:
        return mapping[name]
    short = name.rsplit(".", 1)[-1]
    if not name.startswith("torch.") and short in mapping:
        return mapping[short]
    return None


def lookup_function(name):
    return _lookup(FUNCTIONS, name)


def lookup_import_time_function(name):
    return _lookup(IMPORT_TIME_FUNCTIONS, name)


# -- forward arguments of the imported module, by parameter name --------------
# kind: "activation" ([tokens, hidden] input), "rope" (a (cos, sin) pair,
# each [tokens, head_dim / 2]), "cos"/"sin" (one of them), "mask" (the
# causal mask), "positions" (the position ids: they select the rows of the
# rotary cos/sin, see ROTARY_MODULE_SUFFIXES), "container" (!tx.container).
# Parameters named in no table take their default value (None for the KV
# cache, ...).
FORWARD_ARGS = {
    "hidden_states": "activation", "x": "activation", "hidden": "activation",
    "h": "activation", "inputs_embeds": "activation", "hidden_state": "activation",
    "input": "activation", "input_tensor": "activation",
    "position_embeddings": "rope", "cos": "cos", "sin": "sin",
    "attention_mask": "mask", "mask": "mask", "causal_mask": "mask", "attn_mask": "mask",
    "causal_attention_mask": "mask",
    "position_ids": "positions",
    "shared_kv_states": "container",
    "alibi": "alibi",
}

# "alibi": the ALiBi bias Falcon's and Bloom's models pass their layers:
# None when the config says `alibi: false` (Falcon 7B/40B, rotary
# instead), else an error (tx.attention has no ALiBi bias; Bloom's config
# has no such key: its model always passes the bias).
FORWARD_ARG_KINDS = ("activation", "rope", "cos", "sin", "mask", "positions", "container",
                     "alibi")



# Forward parameters given a fixed value whatever their default: the
# import is of the layer without a KV cache and without the attention
# weights (tx computes neither), so `use_cache` is False (BioGPT's and
# BART's layers default it to True and would return their present key and
# value) and `output_attentions` False.
FORWARD_ARG_VALUES = {"use_cache": False, "output_attentions": False,
                      # Head masks (BART's, Whisper's, BERT's layer_head_mask):
                      # None, as HF's model passes them without head_mask.
                      "head_mask": None, "layer_head_mask": None,
                      "cross_attn_layer_head_mask": None}

# A forward with a mask parameter of CAUSAL_MASK_ARGS (CLIP's
# `causal_attention_mask`) gets the causal mask there; its
# PADDING_MASK_ARGS parameter is the padding mask, None (no padding).
CAUSAL_MASK_ARGS = ("causal_attention_mask", "causal_mask")
PADDING_MASK_ARGS = ("attention_mask",)

# A forward parameter of no known kind takes its default (None: the KV
# cache, ...). One whose name says it carries rotary tables in another form
# (Qwen v1's `rotary_pos_emb_list`, ChatGLM's `rotary_pos_emb`, Meta's
# `freqs_cis`) is an error instead: its default None would skip the
# rotation (`if rotary_pos_emb is not None: ...`) and compute something
# else. Matched as substrings of the name; register_forward_arg makes a name
# known.
ROTARY_LIKE_ARGS = ("rotary", "rope", "pos_emb", "freqs", "sincos", "sinusoid")


def rotary_like(name):
    lowered = name.lower()
    return name not in FORWARD_ARGS and any(p in lowered for p in ROTARY_LIKE_ARGS)


# Likewise a parameter whose name says it carries a position bias added to
# the attention scores (JAIS's and MPT's `position_bias`, T5's, relative
# position biases): HF's model passes the bias, and its default None would
# import the layer without it. tx.attention has no score bias: an error.
POSITION_BIAS_ARGS = ("alibi", "position_bias", "pos_bias", "rel_pos", "relative_position",
                      "attn_bias", "attention_bias", "score_bias")


def position_bias_like(name):
    lowered = name.lower()
    return name not in FORWARD_ARGS and any(p in lowered for p in POSITION_BIAS_ARGS)


# Config keys that switch ALiBi on (Falcon's `alibi`, JAIS's and Bloom-like
# `position_embedding_type: "alibi"`, MPT's attn_config.alibi).
def config_has_alibi(data):
    if config_value(data, "alibi", False) is True:
        return True
    if data.get("position_embedding_type") == "alibi":
        return True
    attn = data.get("attn_config")
    return isinstance(attn, dict) and attn.get("alibi") is True


def register_forward_arg(name, kind):
    if kind not in FORWARD_ARG_KINDS:
        raise ValueError("unknown forward argument kind '%s'" % kind)
    FORWARD_ARGS[name] = kind


# A parameter named <prefix><suffix> is of that kind too, its arguments
# named after the suffix: Gemma 3's decoder layer takes two rotary tables,
# position_embeddings_global and position_embeddings_local, which become
# the argument pairs cos_global/sin_global and cos_local/sin_local.
FORWARD_ARG_PREFIXES = {"position_embeddings_": "rope"}


def forward_arg(name):
    """(kind, suffix) of forward parameter `name`: (kind, None) for a name
    of FORWARD_ARGS, (kind, suffix) for one of FORWARD_ARG_PREFIXES (a
    non-empty identifier suffix), (None, None) for any other."""
    if name in FORWARD_ARGS:
        return FORWARD_ARGS[name], None
    for prefix, kind in FORWARD_ARG_PREFIXES.items():
        suffix = name[len(prefix):]
        if name.startswith(prefix) and suffix and suffix.isidentifier():
            return kind, suffix
    return None, None


# Config keys read when the config lacks them: HF sets _attn_implementation
# at run time, and config.json leaves out PretrainedConfig's attributes that
# have their default (save_pretrained writes the difference).
CONFIG_DEFAULTS = {
    "_attn_implementation": "eager",
    "pad_token_id": None, "bos_token_id": None, "eos_token_id": None,
    "sep_token_id": None, "decoder_start_token_id": None,
    "output_attentions": False, "output_hidden_states": False, "return_dict": True,
    "use_return_dict": True, "torchscript": False, "torch_dtype": None,
    "tie_word_embeddings": True, "is_decoder": False, "is_encoder_decoder": False,
    "add_cross_attention": False, "chunk_size_feed_forward": 0, "pruned_heads": {},
    "problem_type": None, "architectures": None,
}

# Config keys read under another name when the config lacks them (HF's
# attribute_map: GPT-2's config.json has n_embd, its modeling file reads
# config.hidden_size; GPT-Neo's has num_heads and num_layers, XGLM's d_model,
# attention_heads and num_layers). A tuple: the first of them the config has.
CONFIG_ALIASES = {"hidden_size": ("n_embd", "d_model"),
                  "num_attention_heads": ("n_head", "num_heads", "attention_heads",
                                          "encoder_attention_heads"),
                  "num_hidden_layers": ("n_layer", "num_layers"),
                  "max_position_embeddings": "n_positions"}


# Config keys whose value HF's config classes derive from others (the
# modeling file reads the attribute, config.json may hold another value or
# none): config_value(data, name) gives what the config object would.
def _sliding_window(data):
    """Qwen2's (Qwen2-MoE, Qwen3, ...) config keeps sliding_window only with
    use_sliding_window: `sliding_window if use_sliding_window else None`."""
    if data.get("use_sliding_window") is False:
        return None
    return data.get("sliding_window")


def _layer_types(data):
    """layer_types when config.json lacks it, as the config classes fill it:
    Gemma 2 alternates sliding and full layers from layer 0 (sliding); Gemma 3
    has one full layer in every sliding_window_pattern (default 6; Cohere 2
    and EXAONE 4 the same, default 4); Qwen2-like
    configs slide from max_window_layers on when use_sliding_window. Other
    models: no default (reading it is an error)."""
    n = data.get("num_hidden_layers")
    model = data.get("model_type")
    if not isinstance(n, int):
        return _NO_VALUE
    if model == "gemma2":
        return ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n)]
    if model in ("gemma3", "gemma3_text", "cohere2", "exaone4"):
        # Cohere 2's and EXAONE 4's configs fill it the same way, one full
        # layer in every 4.
        pattern = data.get("sliding_window_pattern", 6 if model.startswith("gemma") else 4)
        return ["sliding_attention" if (i + 1) % pattern else "full_attention"
                for i in range(n)]
    if "use_sliding_window" in data and "max_window_layers" in data:
        window = _sliding_window(data)
        return ["sliding_attention" if window is not None and i >= data["max_window_layers"]
                else "full_attention" for i in range(n)]
    return _NO_VALUE


_NO_VALUE = object()
CONFIG_DERIVED = {"sliding_window": _sliding_window, "layer_types": _layer_types}


def config_value(data, name, default=_NO_VALUE):
    """What `config.<name>` reads: the derived value (CONFIG_DERIVED) where
    HF's config class derives it, else what the model type's config class
    fills or defaults (config_classes.py), else config.json's key (or its
    alias, CONFIG_ALIASES, or CONFIG_DEFAULTS), else `default` (_NO_VALUE:
    none)."""
    if name in CONFIG_DERIVED and (name in data or name == "layer_types"):
        value = data.get(name) if name == "layer_types" and data.get(name) is not None \
            else CONFIG_DERIVED[name](data)
        if value is not _NO_VALUE:
            return value
    found, value = config_classes.class_value(data, name)
    if found:
        return value
    if name in data:
        return data[name]
    aliases = CONFIG_ALIASES.get(name, ())
    for alias in (aliases,) if isinstance(aliases, str) else aliases:
        if alias in data:
            return data[alias]
    if name in CONFIG_DEFAULTS:
        return CONFIG_DEFAULTS[name]
    return default

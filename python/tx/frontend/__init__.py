"""tx.frontend: imports the PyTorch source of an HF-style modeling file as tx IR.

    from tx.frontend import import_file
    text = import_file("modeling_llama.py", "config.json", entry="LlamaDecoderLayer")

or `python3 -m tx.frontend modeling.py --config config.json -o model.mlir`.
It reads the source with `ast` (it does not import torch or run the file):
`__init__` is evaluated on the config, `forward` is translated, keeping the
existence guards and branches on module attributes. What it recognises by
name is in `tx.frontend.table`; docs/guides/frontend.md lists the forms."""

import ast
import json

from .errors import FrontendError
from .ir import Emitter, MemRef
from .source import Source
from .translate import Translator
from . import table
from . import values as V

__all__ = ["FrontendError", "import_file", "import_source", "load_config", "table"]

_WIDTH_KEYS = ("hidden_size", "dim", "d_model", "n_embd")


def load_config(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as err:
        raise FrontendError("cannot read config: %s" % err.strerror, path=path) from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise FrontendError("invalid JSON: %s" % err.msg, path=path, line=err.lineno,
                            col=err.colno) from None
    if not isinstance(data, dict):
        raise FrontendError("config must be a JSON object", path=path, line=1, col=1)
    return V.Config(data, path)


def import_file(path, config, **options):
    """IR text of the entry class of the modeling file at `path`; `config`
    is a path to config.json or a dict. See import_source for options."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as err:
        raise FrontendError("cannot read: %s" % err.strerror, path=path) from None
    return import_source(text, path, config, **options)


def _entry_class(src, entry):
    if entry is not None:
        if entry not in src.classes and entry in src.unknown:
            src.global_value(entry, None)  # an error naming the statement
        if entry not in src.classes:
            raise FrontendError("no class '%s' in the file (classes: %s)"
                                % (entry, ", ".join(src.classes) or "none"), path=src.path)
        return src.classes[entry]
    # A class another class calls, or names (a base class, a class chosen
    # from a module-level dict: ATTENTION_CLASSES[config._attn_implementation]),
    # is not the entry.
    used = {}
    def uses(tree, owner):
        for node in ast.walk(tree):
            name = src.dotted(node.func) if isinstance(node, ast.Call) else \
                node.id if isinstance(node, ast.Name) else None
            if name:
                used.setdefault(name.rsplit(".", 1)[-1], set()).add(owner)
    for cls in src.classes.values():
        uses(cls, cls.name)
    for stmt in src.tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            uses(stmt.value, None)
    candidates = [c for c in src.module_classes()
                  if not used.get(c.name, set()) - {c.name} and
                  table.lookup_module(c.name) is None and
                  not table.is_rotary_module(c.name)]
    if len(candidates) > 1:
        # Of those, the ones whose forward can be called with the arguments
        # the frontend gives (table.FORWARD_ARGS, or defaults): a rotary
        # embedding's forward(x, position_ids) cannot.
        callable_ = [c for c in candidates if _importable_forward(src, c)]
        if len(callable_) == 1:
            candidates = callable_
    if len(candidates) != 1:
        raise FrontendError("cannot tell which class to import (%s): use --entry"
                            % (", ".join(c.name for c in candidates) or "no nn.Module "
                               "class with a forward"), path=src.path)
    return candidates[0]


def _importable_forward(src, cls):
    a = src.method(cls, "forward", cls).args
    params = a.args[1:]
    required = params[:len(params) - len(a.defaults)] + [
        p for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    return all(table.forward_arg(p.arg)[0] is not None for p in required)


def _default_prefix(cls, inst, layer_idx):
    if any(isinstance(v, V.ModuleList) and not v.sequential for v in inst.attrs.values()):
        return "model."
    if "DecoderLayer" in cls.name or cls.name.endswith("Block"):
        return "model.layers.%d." % layer_idx
    return ""


def import_source(text, path, config, entry=None, layer_idx=0, prefix=None, flags=(),
                  norms=(), helpers=None, dtype="f32", mask="causal", test_break=None):
    """Translates the source `text` (named `path` in diagnostics).

    entry: the class to import (default: the one class no other class uses);
    layer_idx: passed to its constructor's `layer_idx`; prefix: prepended to
    every checkpoint name (default `model.layers.<layer_idx>.` for a decoder
    layer, `model.` for a model with a layer list, else none; `{layer_idx}`
    is substituted); flags: bool module attributes (`is_kv_shared_layer`)
    imported as i1 function arguments rather than folded constants; norms:
    norm classes of the file, "CLASS" or "CLASS=rmsnorm" (an RMSNorm) or
    "CLASS=layernorm" (a LayerNorm with weight and bias); mask: what the forward's attention_mask is,
    "causal" (the causal mask) or "none" (None: attention over every
    token); helpers: {name: known function of the table}
    (norms and helpers hold for this import only, see table.register_*).
    test_break (testing only): "fold-guards" folds existence guards at
    import, as vLLM's AST fuser does; "swap-rope" passes sin for cos;
    "split-order" gives the pieces of an equal split or chunk in reverse."""
    saved = dict(table.MODULES), dict(table.FUNCTIONS)
    try:
        for spec in norms:
            name, _, kind = spec.partition("=")
            if (kind or "rmsnorm") not in table.NORM_KINDS:
                raise FrontendError("norm %s: kind must be one of %s"
                                    % (spec, ", ".join(table.NORM_KINDS)),
                                    path="<arguments>")
            table.register_norm(name, kind=kind or "rmsnorm")
        for name, known in (helpers or {}).items():
            try:
                table.alias_function(name, known)
            except KeyError as err:
                raise FrontendError("helper %s=%s: %s" % (name, known, err.args[0]),
                                    path="<arguments>") from None
        if mask not in ("causal", "none"):
            raise FrontendError("mask must be 'causal' or 'none', got %r" % (mask,),
                                path="<arguments>")
        src = Source(text, path)
        return _translate(src, config, entry, layer_idx, prefix, flags, dtype, test_break,
                          mask)
    except FrontendError as err:
        raise err.located(path)
    except (ArithmeticError, AttributeError, IndexError, KeyError, TypeError,
            ValueError) as err:
        # A form the checks above missed: still an error at the statement.
        raise FrontendError("unsupported here (%s: %s)" % (type(err).__name__, err),
                            node=Translator.current, path=path) from None
    except RecursionError:
        raise FrontendError("expression nested too deeply", path=path) from None
    finally:
        table.MODULES.clear()
        table.MODULES.update(saved[0])
        table.FUNCTIONS.clear()
        table.FUNCTIONS.update(saved[1])


def _translate(src, config, entry, layer_idx, prefix, flags, dtype, test_break=None,
               mask="causal"):
    if not isinstance(config, V.Config):
        config = load_config(config) if isinstance(config, str) else V.Config(dict(config),
                                                                              "config")
    cls = _entry_class(src, entry)
    em = Emitter(src.path)
    tr = Translator(src, config, em, layer_idx=layer_idx, flags=flags)
    tr.dtype = dtype
    tr.test_break = test_break

    # __init__ on the config.
    init = src.method(cls, "__init__", cls, required=False)
    kwargs = {}
    if init is not None:
        for p in init.args.args[1:]:
            if p.arg in ("config", "args", "cfg", "params", "model_args"):
                kwargs[p.arg] = config
            elif p.arg in ("layer_idx", "layer_id", "layer_index"):
                kwargs[p.arg] = layer_idx
    inst = tr.instantiate(cls.name, [], kwargs, cls, "")
    if prefix is None:
        prefix = _default_prefix(cls, inst, layer_idx)
    prefix = prefix.replace("{layer_idx}", str(layer_idx))
    _declare_symbols(tr, em, prefix, dtype)

    # forward's arguments, by name (table.FORWARD_ARGS); or those of the
    # class's own __call__, which is what PyTorch's model(...) runs when a
    # class of the file overrides it (as for a submodule's call).
    forward = src.method(cls, "__call__", cls, required=False)
    if forward is not None and (forward.args.vararg or forward.args.kwarg):
        raise FrontendError("the entry class's __call__ takes *%s: which inputs it passes "
                            "on is not known here; not supported (an entry that does not "
                            "override __call__ is imported from its forward)"
                            % ("args" if forward.args.vararg else "*kwargs"), forward)
    if forward is None:
        forward = src.method(cls, "forward", cls)
    width = next((config.data[k] for k in _WIDTH_KEYS if isinstance(config.data.get(k), int)),
                 None)
    a = forward.args
    params = a.args[1:]
    defaults = [None] * (len(params) - len(a.defaults)) + list(a.defaults)

    def value_for(p, d):
        kind, suffix = table.forward_arg(p.arg)
        if kind == "rope" and suffix is not None:
            # position_embeddings_<suffix>: a pair of its own (Gemma 3's
            # global and local tables), cos_<suffix> and sin_<suffix>.
            pair = tr.rope_pair(("cos_" + suffix, "sin_" + suffix))
            tr.rope_tables[p.arg] = pair
            return pair
        if kind == "activation":
            v = tr.new_arg(p.arg, MemRef((None, width), dtype))
            v.pending = width is None
            return V.Tensor(v, [None, 0, 1])
        if kind == "rope":
            tr.rope_tables[None] = tr.rope_pair(("cos", "sin"))
            return tr.rope_tables[None]
        if kind in ("cos", "sin"):
            return tr.rope_arg(kind, kind)
        if kind == "mask":
            if p.arg in table.PADDING_MASK_ARGS and any(
                    q.arg in table.CAUSAL_MASK_ARGS for q in list(a.args) + list(a.kwonlyargs)):
                # CLIP's (hidden_states, attention_mask, causal_attention_mask):
                # the causal mask is the other one; this one is padding, which
                # HF's model passes as None without padding tokens.
                return None
            return V.CausalMask() if mask == "causal" else None
        if kind == "positions":
            return V.Positions()
        if kind == "alibi":
            if table.config_has_alibi(config.data):
                raise FrontendError("forward argument '%s': the config has alibi set; an "
                                    "ALiBi bias is not supported (tx.attention has none)"
                                    % p.arg, p)
            if table.config_value(config.data, "alibi", None) is not False:
                raise FrontendError("forward argument '%s': the config does not say "
                                    "`alibi: false`, so the model may pass an ALiBi bias "
                                    "(Bloom's always does): not supported (tx.attention "
                                    "has none)" % p.arg, p)
            return None  # what HF's model passes without ALiBi
        if kind == "container":
            return V.Container(tr.new_arg(p.arg, "!tx.container"), p.arg)
        if p.arg in table.FORWARD_ARG_VALUES:
            return table.FORWARD_ARG_VALUES[p.arg]
        if table.position_bias_like(p.arg):
            raise FrontendError("forward argument '%s' looks like a position bias (by its "
                                "name), which the model passes and its default would leave "
                                "out; tx.attention adds no bias to its scores: not supported "
                                "(table.register_forward_arg names a known kind)" % p.arg, p)
        if table.rotary_like(p.arg):
            raise FrontendError("forward argument '%s' looks like rotary tables (by its "
                                "name), which the frontend gives only as "
                                "position_embeddings (cos, sin), cos/sin or a rotary "
                                "module's output: not supported (its default would skip "
                                "the rotation; table.register_forward_arg names a known "
                                "kind)" % p.arg, p)
        if d is not None:
            return tr.default_value(forward, p, d, p)
        raise FrontendError("forward argument '%s' is of no known kind and has no "
                            "default (known: %s; see table.FORWARD_ARGS)"
                            % (p.arg, ", ".join(sorted(table.FORWARD_ARGS))), p)
    positional = [value_for(p, d) for p, d in zip(params, defaults)]
    kwargs = {p.arg: value_for(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults)}
    tr.last_return = None
    result = tr.inline(forward, inst, positional, kwargs, forward)
    returned_at = tr.last_return or forward
    for value, name in em.args:
        if getattr(value, "pending", False) and getattr(value, "rope", False):
            # A rotary table forward takes but does not use (a Gemma 3 full
            # layer's position_embeddings_local): [tokens, rotary_dim / 2]
            # as the config's rotary module gives it, when the config says.
            half = _config_rotary_half(config.data)
            if half is not None:
                value.type = MemRef((None, half), dtype)
                value.pending = False
    for value, name in em.args:
        if isinstance(value.type, MemRef) and getattr(value, "pending", False):
            raise FrontendError("cannot tell the size of forward argument '%s' (no op of "
                                "forward fixes it)" % name, forward)
    for value, node in tr.untyped:
        if value.type is None:
            raise FrontendError("the type of the values read from the container here is "
                                "never known (nothing stored before, no branch gives it)",
                                node)
    em.results = _results(result, returned_at)
    header = ("Imported by tx.frontend from %s: class %s, layer_idx %d.\n"
              "Arguments: %s." % (src.path, cls.name, layer_idx,
                                  ", ".join(n for _, n in em.args)))
    return em.render(header)


def _config_rotary_half(data):
    """rotary_dim / 2 of the config (head_dim times the partial-rotary
    fraction, or config.rotary_dim), or None when it does not say."""
    head_dim = data.get("head_dim")
    if not isinstance(head_dim, int):
        width = next((data[k] for k in _WIDTH_KEYS if isinstance(data.get(k), int)), None)
        heads = data.get("num_attention_heads")
        if not isinstance(width, int) or not isinstance(heads, int) or heads <= 0:
            return None
        head_dim = width // heads
    rot = data.get("rotary_dim")
    if not isinstance(rot, int) or isinstance(rot, bool):
        key = next((k for k in table.ROTARY_FRACTION_KEYS if data.get(k) is not None), None)
        fraction = data[key] if key else 1.0
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            return None
        rot = int(head_dim * fraction)
    return rot // 2 if rot >= 2 and rot % 2 == 0 else None


def _declare_symbols(tr, em, prefix, dtype):
    # A *RMSNorm's weight (V.Param.norm_weight) is named by its module's
    # path, as a norm's weight is.
    named = lambda spec: spec.path[:-len(".weight")] \
        if getattr(spec, "norm_weight", False) and spec.path.endswith(".weight") \
        else spec.path
    leaves = {}
    for spec in tr.specs:
        leaf = named(spec).rsplit(".", 1)[-1]
        leaves[leaf] = leaves.get(leaf, 0) + 1
    for spec in tr.specs:
        leaf = named(spec).rsplit(".", 1)[-1]
        # A ModuleList item (norms.2) is named by its path: a symbol does not
        # begin with a digit.
        spec.symbol = leaf if leaves[leaf] == 1 and not leaf[0].isdigit() else \
            named(spec).replace(".", "_")
        ckpt = prefix + spec.path
        if isinstance(spec, V.Linear):
            # A Conv1D's checkpoint weight is [in, out]: the loader reads it
            # transposed (tx.checkpoint_transposed).
            em.symbol(spec.symbol, 'tx.layer @%s : %d -> %d, %s%s {checkpoint = "%s"%s}' % (
                spec.symbol, spec.in_features, spec.out_features, dtype,
                " bias" if spec.bias else "", ckpt,
                ", tx.checkpoint_transposed" if spec.transposed else ""))
        elif isinstance(spec, V.Param):
            em.symbol(spec.symbol, 'tx.param @%s : memref<%s%s> {checkpoint = "%s"}' % (
                spec.symbol, "".join("%dx" % n for n in spec.shape), dtype, ckpt))
        elif isinstance(spec, V.NoneLayer):
            em.symbol(spec.symbol, "tx.none_layer @%s" % spec.symbol)
        elif isinstance(spec, V.Norm):
            if spec.weight:
                em.symbol(spec.symbol,
                          'tx.param @%s : memref<%dx%s> {checkpoint = "%s.weight"}'
                          % (spec.symbol, spec.size, dtype, ckpt))
            if spec.bias:
                em.symbol(spec.symbol + "_bias",
                          'tx.param @%s_bias : memref<%dx%s> {checkpoint = "%s.bias"}'
                          % (spec.symbol, spec.size, dtype, ckpt))


def _results(result, node):
    out = []
    def add(v):
        if isinstance(v, (tuple, list)):
            for x in v:
                add(x)
        elif isinstance(v, V.Tensor):
            if v.type is None or not v.identity():
                raise FrontendError("forward returns a tensor that is transposed or of "
                                    "unknown type", node)
            out.append(v.value)
        elif v is None or isinstance(v, V.Container):
            pass
        elif isinstance(v, V.NormChain):
            raise FrontendError("forward returns %s: not supported (tx.rmsnorm / "
                                "tx.layernorm do not compute it)" % v.what(), node)
        elif isinstance(v, (V.AttentionChain, V.RepeatedKV)):
            raise FrontendError("forward returns %s: not supported (tx.attention does not "
                                "compute the attention weights)" % (
                                    v.what() if isinstance(v, V.AttentionChain)
                                    else "the result of repeat_kv"), node)
        elif isinstance(v, V.Unavailable):
            raise FrontendError("forward returns " + v.why, node)
        else:
            raise FrontendError("forward returns a value that is not a tensor", node)
    add(result)
    if not out:
        raise FrontendError("forward returns no tensor", node)
    return out

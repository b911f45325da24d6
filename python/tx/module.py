"""Context and Module: parse, run pipelines, print, export stacking maps."""

import ctypes
import json

from . import _capi
from .errors import TxError, parse_diagnostics


def _check(status):
    if status != 0:
        raise TxError(
            _capi.txStatusGetName(status).decode(),
            _capi.txGetLastError().decode("utf-8", "replace"))


def _encode(text, what):
    if text is None:
        return None
    if isinstance(text, bytes):
        return text
    if not isinstance(text, str):
        raise TypeError("%s must be str, not %s" % (what, type(text).__name__))
    return text.encode("utf-8")


def _option_value(value):
    """Pass-option text: bools as true/false, sequences comma-separated."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_option_value(v) for v in value)
    return str(value)


class Context:
    """An MLIR context with tx and every upstream dialect, pass, pipeline."""

    def __init__(self):
        handle = _capi.ContextPtr()
        _check(_capi.txContextCreate(ctypes.byref(handle)))
        self._handle = handle

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _capi.txContextDestroy(handle)
            self._handle = None

    @property
    def diagnostics(self):
        """The diagnostics (remarks included) of the last call, parsed."""
        return parse_diagnostics(self.diagnostics_text)

    @property
    def diagnostics_text(self):
        return _capi.txContextGetDiagnostics(self._handle).decode(
            "utf-8", "replace")


_default_context = None


def default_context():
    global _default_context
    if _default_context is None:
        _default_context = Context()
    return _default_context


class Module:
    """A tx module (builtin.module) owned by Python."""

    def __init__(self, handle, context):
        self._handle = handle
        self.context = context

    @staticmethod
    def parse(text, source_name="<string>", context=None):
        """Parses and verifies `text`; raises TxError with located
        diagnostics when it is malformed or invalid."""
        context = context or default_context()
        handle = _capi.ModulePtr()
        _check(
            _capi.txModuleParse(context._handle, _encode(text, "text"),
                                _encode(source_name, "source_name"),
                                ctypes.byref(handle)))
        return Module(handle, context)

    @staticmethod
    def parse_file(path, context=None):
        with open(path, encoding="utf-8") as f:
            return Module.parse(f.read(), source_name=path, context=context)

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _capi.txModuleDestroy(handle)
            self._handle = None

    def __str__(self):
        return self.print()

    def print(self, generic=False):
        out = ctypes.c_void_p()
        _check(_capi.txModulePrint(self._handle, int(bool(generic)),
                                   ctypes.byref(out)))
        return _capi.take_string(out)

    def verify(self):
        _check(_capi.txModuleVerify(self._handle))
        return self

    def run_pipeline(self, name, **options):
        """Runs one registered pass or pipeline with its options:
        `run_pipeline("tx-fusion", fusers=["qkv"])`. Option names may use
        `_` for `-`. Returns self; raises TxError on an unknown name or
        option or when a pass fails."""
        keys = [k.replace("_", "-").encode() for k in options]
        values = [_option_value(v).encode() for v in options.values()]
        n = len(keys)
        key_array = (ctypes.c_char_p * n)(*keys)
        value_array = (ctypes.c_char_p * n)(*values)
        _check(
            _capi.txModuleRunNamedPipeline(self._handle,
                                           _encode(name, "name"), key_array,
                                           value_array, n))
        return self

    def run_pass_pipeline(self, pipeline):
        """Runs a textual pipeline ("tx-fusion,canonicalize"). Returns self."""
        _check(
            _capi.txModuleRunPipeline(self._handle,
                                      _encode(pipeline, "pipeline")))
        return self

    @property
    def diagnostics(self):
        """Diagnostics (e.g. fusion remarks) of the last call on this
        module's context."""
        return self.context.diagnostics

    def stacking_maps(self, tp_size=1):
        """How checkpoint tensors fill the merged layers, as a dict (see
        TxDialect/Transforms/StackingMaps.h)."""
        if not isinstance(tp_size, int) or isinstance(tp_size, bool):
            raise TypeError("tp_size must be int")
        out = ctypes.c_void_p()
        _check(
            _capi.txModuleExportStackingMaps(self._handle, tp_size,
                                             ctypes.byref(out)))
        return json.loads(_capi.take_string(out))

"""tx: a transformer dialect and compiler pipeline on MLIR, from Python.

    import tx
    m = tx.Module.parse(text)
    m.run_pipeline("tx-fusion")
    print(m)
    maps = m.stacking_maps(tp_size=2)
    y, = m.compile_cpu().invoke("forward", x, cos, sin)   # numpy in and out

Runs on libTxCompiler.so through its C API (ctypes), loaded on first use;
see docs/guides/python.md. tx.frontend and tx.safetensors need no library.
"""

import importlib

from .errors import Diagnostic, TxError

# The classes that need libTxCompiler.so load it when first used, so that
# the parts that do not (tx.frontend, tx.safetensors) work without it.
_LAZY = {
    "Context": ".module", "Module": ".module", "default_context": ".module",
    "ModuleBuilder": ".builder", "MemRefType": ".builder", "memref": ".builder",
    "Executable": ".execution",
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError("module 'tx' has no attribute %r" % name)
    # All at once: .execution adds the compile methods to Module.
    for module in sorted(set(_LAZY.values())):
        loaded = importlib.import_module(module, __name__)
        for attr, where in _LAZY.items():
            if where == module:
                globals()[attr] = getattr(loaded, attr)
    return globals()[name]


__all__ = [
    "Context", "Diagnostic", "Executable", "MemRefType", "Module", "ModuleBuilder",
    "TxError", "default_context", "memref"
]

"""tx: a transformer dialect and compiler pipeline on MLIR, from Python.

    import tx
    m = tx.Module.parse(text)
    m.run_pipeline("tx-fusion")
    print(m)
    maps = m.stacking_maps(tp_size=2)
    y, = m.compile_cpu().invoke("forward", x, cos, sin)   # numpy in and out

Runs on libTxCompiler.so through its C API (ctypes); see docs/guides/python.md.
"""

from .errors import Diagnostic, TxError
from .module import Context, Module, default_context
from .builder import ModuleBuilder, MemRefType, memref
from .execution import Executable

__all__ = [
    "Context", "Diagnostic", "Executable", "MemRefType", "Module", "ModuleBuilder",
    "TxError", "default_context", "memref"
]

"""ctypes declarations of the tx engine C API (TxDialect-c/Engine.h).

The library is libTxCompiler.so: $TX_LIBRARY when set, else ../../lib next
to this package (the build tree's python_packages/tx and an install's
<prefix>/python_packages/tx both sit there).
"""

import ctypes
import os

_here = os.path.dirname(os.path.abspath(__file__))
_candidates = [
    os.environ.get("TX_LIBRARY"),
    os.path.join(_here, "..", "..", "lib", "libTxCompiler.so"),
]


def _load():
    tried = []
    for path in _candidates:
        if not path:
            continue
        if os.path.exists(path):
            return ctypes.CDLL(os.path.realpath(path))
        tried.append(path)
    raise ImportError(
        "tx: cannot find libTxCompiler.so (tried %s); set TX_LIBRARY to its path"
        % ", ".join(tried))


lib = _load()

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_int = ctypes.c_int
c_int64 = ctypes.c_int64
c_size_t = ctypes.c_size_t
POINTER = ctypes.POINTER


class TxContext(ctypes.Structure):
    pass


class TxModule(ctypes.Structure):
    pass


ContextPtr = POINTER(TxContext)
ModulePtr = POINTER(TxModule)


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


txStatusGetName = _declare("txStatusGetName", c_char_p, c_int)
txGetLastError = _declare("txGetLastError", c_char_p)
# Strings returned through char** are read as c_void_p so they can be freed.
txStringDestroy = _declare("txStringDestroy", None, c_void_p)
txContextCreate = _declare("txContextCreate", c_int, POINTER(ContextPtr))
txContextDestroy = _declare("txContextDestroy", None, ContextPtr)
txContextGetDiagnostics = _declare("txContextGetDiagnostics", c_char_p,
                                   ContextPtr)
txModuleParse = _declare("txModuleParse", c_int, ContextPtr, c_char_p,
                         c_char_p, POINTER(ModulePtr))
txModuleDestroy = _declare("txModuleDestroy", None, ModulePtr)
txModulePrint = _declare("txModulePrint", c_int, ModulePtr, c_int,
                         POINTER(c_void_p))
txModuleVerify = _declare("txModuleVerify", c_int, ModulePtr)
txModuleRunPipeline = _declare("txModuleRunPipeline", c_int, ModulePtr,
                               c_char_p)
txModuleRunNamedPipeline = _declare("txModuleRunNamedPipeline", c_int,
                                    ModulePtr, c_char_p, POINTER(c_char_p),
                                    POINTER(c_char_p), c_size_t)
txModuleExportStackingMaps = _declare("txModuleExportStackingMaps", c_int,
                                      ModulePtr, c_int64, POINTER(c_void_p))


def take_string(ptr):
    """Copies and frees a string returned through char**."""
    if not ptr.value:
        return ""
    try:
        return ctypes.string_at(ptr.value).decode("utf-8")
    finally:
        txStringDestroy(ptr.value)


class TxExecutable(ctypes.Structure):
    pass


ExecutablePtr = POINTER(TxExecutable)


class TxBuffer(ctypes.Structure):
    _fields_ = [("data", POINTER(ctypes.c_float)),
                ("shape", POINTER(c_int64)), ("rank", c_int64)]


txModuleCompileCpu = _declare("txModuleCompileCpu", c_int, ModulePtr,
                              c_char_p, ctypes.c_uint64, c_char_p,
                              POINTER(ExecutablePtr))
txModuleCompileForDevice = _declare("txModuleCompileForDevice", c_int,
                                    ModulePtr, c_char_p, c_char_p,
                                    ctypes.c_uint64, c_char_p,
                                    POINTER(ExecutablePtr))
txExecutableDestroy = _declare("txExecutableDestroy", None, ExecutablePtr)
txExecutableInvoke = _declare("txExecutableInvoke", c_int, ExecutablePtr,
                              c_char_p, POINTER(TxBuffer), c_size_t,
                              POINTER(TxBuffer), c_size_t)
txExecutableGetNumResults = _declare("txExecutableGetNumResults", c_int,
                                     ExecutablePtr, POINTER(c_size_t))
txExecutableGetResult = _declare("txExecutableGetResult", c_int,
                                 ExecutablePtr, c_size_t, POINTER(TxBuffer))

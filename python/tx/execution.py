"""CPU execution: Module.compile_cpu() and Executable.invoke() on numpy."""

import ctypes
import os

from . import _capi
from .module import Module, _check, _encode

try:
    import numpy as np
except ImportError:  # Everything but execution works without numpy.
    np = None


def _buffer(array, what):
    """A TxBuffer over a C-contiguous float32 ndarray (kept alive by the
    caller)."""
    shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
    data = array.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    return _capi.TxBuffer(data, shape, array.ndim), shape


class Executable:
    """A module lowered and JIT-compiled for this CPU."""

    def __init__(self, handle, module):
        self._handle = handle
        self._module = module  # Keeps the context alive.

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle:
            _capi.txExecutableDestroy(handle)
            self._handle = None

    def invoke(self, function, *inputs, out=None):
        """Calls public `function` with numpy arrays (converted to float32,
        C order), one per argument but containers: an integer argument
        (an i1 flag such as `is_kv_shared_layer`) takes a 0-d array or a
        Python bool/int; a `!tx.container` argument takes nothing, the
        executable passes its own, kept across calls (what one call stores,
        a later one reads). Returns the results as new float32 arrays; with
        `out=[arrays]` the results are written into those arrays (which must
        be float32, C-contiguous and of the results' shapes) and returned."""
        if np is None:
            raise ImportError("tx execution needs numpy")
        # (np.ascontiguousarray would make a 0-d array, a scalar argument,
        # 1-d.)
        arrays = [np.asarray(a, dtype=np.float32) for a in inputs]
        arrays = [a if a.flags.c_contiguous else np.ascontiguousarray(a)
                  for a in arrays]
        keep = []
        ins = (_capi.TxBuffer * max(len(arrays), 1))()
        for i, a in enumerate(arrays):
            ins[i], shape = _buffer(a, "input %d" % i)
            keep.append(shape)
        outs_ptr, n_out = None, 0
        if out is not None:
            out = list(out)
            for i, a in enumerate(out):
                if (not isinstance(a, np.ndarray) or a.dtype != np.float32
                        or not a.flags.c_contiguous or not a.flags.writeable):
                    raise TypeError(
                        "out[%d] must be a writeable C-contiguous float32 "
                        "ndarray" % i)
            n_out = len(out)
            outs_ptr = (_capi.TxBuffer * max(n_out, 1))()
            for i, a in enumerate(out):
                outs_ptr[i], shape = _buffer(a, "output %d" % i)
                keep.append(shape)
        _check(
            _capi.txExecutableInvoke(self._handle, _encode(function, "function"),
                                     ins, len(arrays), outs_ptr, n_out))
        if out is not None:
            return out
        count = ctypes.c_size_t()
        _check(_capi.txExecutableGetNumResults(self._handle,
                                               ctypes.byref(count)))
        results = []
        for i in range(count.value):
            view = _capi.TxBuffer()
            _check(_capi.txExecutableGetResult(self._handle, i,
                                               ctypes.byref(view)))
            shape = tuple(view.shape[d] for d in range(view.rank))
            size = int(np.prod(shape)) if shape else 1
            if size == 0:
                # An empty result (no tokens) has no data pointer.
                results.append(np.empty(shape, np.float32))
                continue
            flat = np.ctypeslib.as_array(view.data, shape=(size,))
            results.append(flat.reshape(shape).copy())
        return results


def compile_cpu(self, pipeline=None, seed=0, weights=None, weights_dir=None):
    """Lowers a copy of the module (default pipeline "tx-to-cpu") and
    JIT-compiles it. Weights: `weights` is a directory of `<tensor>.npy`
    files, a `.safetensors` file, a sharded checkpoint's
    `model.safetensors.index.json` or a directory holding
    `model.safetensors[.index.json]` (`weights_dir`: its older name); None:
    pseudo-random from `seed`."""
    return compile_for_device(self, "cpu", pipeline, seed, weights,
                              weights_dir)


def compile_for_device(self, device, pipeline=None, seed=0, weights=None,
                       weights_dir=None):
    """The same on `device`: "cpu", "emulator" (the emulated CUDA device:
    the GPU kernels run on the CPU; a kernel error such as an out-of-bounds
    access raises when the function is called) or "cuda"."""
    if weights is not None and weights_dir is not None:
        raise TypeError("give weights= or weights_dir=, not both")
    if weights is None:
        weights = weights_dir
    if weights is not None:
        weights = os.fspath(weights)
    handle = _capi.ExecutablePtr()
    _check(
        _capi.txModuleCompileForDevice(
            self._handle, _encode(device, "device"),
            _encode(pipeline, "pipeline"), int(seed),
            _encode(weights, "weights"), ctypes.byref(handle)))
    return Executable(handle, self)


Module.compile_cpu = compile_cpu
Module.compile_for_device = compile_for_device

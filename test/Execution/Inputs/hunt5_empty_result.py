"""A call with zero tokens through the Python package: the result is a
0x64 array. Executable.invoke without out= raises ValueError ("NULL pointer
access": np.ctypeslib.as_array of the C API's result pointer, which is NULL
for an empty std::vector) although the call succeeded (with out= it works)."""
import sys
import numpy as np
import tx

m = tx.Module.parse(open(sys.argv[1]).read())
exe = m.compile_cpu(seed=0)
x, c, s = (np.zeros((0, n), np.float32) for n in (64, 8, 8))
out = [np.empty((0, 64), np.float32)]
print("out=", exe.invoke("forward", x, c, s, out=out)[0].shape)
y, = exe.invoke("forward", x, c, s)
print("returned", y.shape, y.dtype)
# And a non-empty call after it still works.
y, = exe.invoke("forward", np.ones((2, 64), np.float32), np.ones((2, 8), np.float32), np.zeros((2, 8), np.float32))
print("after", y.shape)

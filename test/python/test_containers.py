"""Container and i1 arguments from Python: a container argument takes no
array (the executable passes its own, kept across invoke calls); an i1
argument takes a 0-d array (or a bool)."""

import os

import numpy as np
import pytest

import tx

INPUTS = os.path.join(os.path.dirname(__file__), "..", "Execution", "Inputs")


@pytest.fixture
def step():
    # step(x, c, read): read = 0 stores x in c[0], read = 1 stores c[0] + x.
    with open(os.path.join(INPUTS, "containers.mlir")) as f:
        return tx.Module.parse(f.read()).compile_cpu()


def test_container_kept_across_calls(step):
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    y, = step.invoke("step", x, np.array(False))
    np.testing.assert_array_equal(y, x)
    y, = step.invoke("step", 2 * x, np.array(True))
    np.testing.assert_array_equal(y, 3 * x)
    y, = step.invoke("step", x, True)
    np.testing.assert_array_equal(y, 4 * x)


def test_container_read_before_write(step):
    x = np.ones((2, 8), dtype=np.float32)
    with pytest.raises(tx.TxError, match="index 0 was never set"):
        step.invoke("step", x, np.array(1))


def test_i1_must_be_0_or_1(step):
    x = np.ones((2, 8), dtype=np.float32)
    with pytest.raises(tx.TxError, match="2 is not 0 or 1"):
        step.invoke("step", x, np.array(2))

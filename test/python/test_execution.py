"""CPU execution with numpy arrays in and out."""

import numpy as np
import pytest

import tx

T = 3


def inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((T, 64)).astype(np.float32)
    angles = rng.standard_normal((T, 8)).astype(np.float32)
    return x, np.cos(angles), np.sin(angles)


def test_fused_matches_unfused(llama_text):
    exe = tx.Module.parse(llama_text).compile_cpu(seed=7)
    y, = exe.invoke("forward", *inputs())
    assert y.shape == (T, 64) and y.dtype == np.float32
    assert np.isfinite(y).all() and np.abs(y).max() > 0
    # The fused module computes the same numbers (stacking maps honoured).
    fused = tx.Module.parse(llama_text).run_pipeline("tx-fusion")
    y_fused, = fused.compile_cpu(seed=7).invoke("forward", *inputs())
    np.testing.assert_allclose(y_fused, y, rtol=1e-4, atol=1e-5)
    # Another seed, other weights, other numbers.
    y_other, = tx.Module.parse(llama_text).compile_cpu(seed=8).invoke(
        "forward", *inputs())
    assert not np.allclose(y_other, y)


def test_out_arrays(llama_text):
    exe = tx.Module.parse(llama_text).compile_cpu()
    expected, = exe.invoke("forward", *inputs())
    out = np.zeros((T, 64), dtype=np.float32)
    assert exe.invoke("forward", *inputs(), out=[out])[0] is out
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(tx.TxError, match="result 0 is 3x64xf32, output "
                       "buffer is 3x63xf32"):
        exe.invoke("forward", *inputs(), out=[np.zeros((T, 63), np.float32)])
    with pytest.raises(TypeError):
        exe.invoke("forward", *inputs(), out=[np.zeros((T, 64))])  # float64


def test_bad_inputs(llama_text):
    exe = tx.Module.parse(llama_text).compile_cpu()
    x, cos, sin = inputs()
    with pytest.raises(tx.TxError) as info:
        exe.invoke("forward", x[:, :63], cos, sin)
    assert info.value.status == "TX_ERROR_INVALID_ARGUMENT"
    assert "input #0 of 'forward'" in str(info.value)
    with pytest.raises(tx.TxError, match="takes 3 inputs"):
        exe.invoke("forward", x, cos)
    with pytest.raises(tx.TxError, match="backward"):
        exe.invoke("backward", x, cos, sin)


def test_mismatched_dynamic_sizes(llama_text):
    # x has 3 tokens, cos only 2: checked when the function runs (before
    # anything reads past cos), an exception naming both arguments' sizes.
    exe = tx.Module.parse(llama_text, "llama.mlir").compile_cpu()
    x, cos, sin = inputs()
    with pytest.raises(tx.TxError) as info:
        exe.invoke("forward", x, cos[:2], sin)
    assert info.value.status == "TX_ERROR_INVALID_ARGUMENT"
    message = str(info.value)
    assert "runtime check failed: 'tx.rotary' at llama.mlir:" in message
    assert "dim 0 = 3 but cos (argument 1 'cos') dim 0 = 2" in message
    # The executable is still usable after a failed check.
    y, = exe.invoke("forward", x, cos, sin)
    assert np.isfinite(y).all()


def test_bad_pipeline(llama_text):
    with pytest.raises(tx.TxError) as info:
        tx.Module.parse(llama_text).compile_cpu(pipeline="tx-bogus")
    assert info.value.status == "TX_ERROR_EXECUTION"


def test_emulated_gpu(llama_text):
    # The GPU kernels of tx-to-nvvm, run on the emulated CUDA device, give
    # the CPU lowering's numbers.
    module = tx.Module.parse(llama_text)
    y_cpu, = module.compile_cpu(seed=7).invoke("forward", *inputs())
    y_emu, = module.compile_for_device("emulator", seed=7).invoke(
        "forward", *inputs())
    np.testing.assert_allclose(y_emu, y_cpu, rtol=1e-4, atol=1e-5)
    with pytest.raises(tx.TxError) as info:
        module.compile_for_device("tpu")
    assert info.value.status == "TX_ERROR_INVALID_ARGUMENT"
    assert "must be cpu, cuda or emulator, not 'tpu'" in str(info.value)

"""tx.ModuleBuilder: a transformer block written in Python becomes tx IR."""

import numpy as np
import pytest

import tx


def build_block():
    b = tx.ModuleBuilder()
    q = b.layer("q_proj", 64, 64, checkpoint="l0.q_proj")
    k = b.layer("k_proj", 64, 32, checkpoint="l0.k_proj")
    v = b.layer("v_proj", 64, 32, checkpoint="l0.v_proj")
    o = b.layer("o_proj", 64, 64)
    norm = b.param("norm", (64,), checkpoint="l0.norm.weight")
    with b.function("forward", x=tx.memref(None, 64), cos=tx.memref(None, 8),
                    sin=tx.memref(None, 8)) as f:
        x, cos, sin = f.args
        h = f.rmsnorm(x, norm, eps=1e-6)
        q3 = f.rotary(f.view(f.linear(q, h), None, 4, 16), cos, sin)
        k3 = f.rotary(f.view(f.linear(k, h), None, 2, 16), cos, sin)
        has_v = f.guard("is_not_none", f.layer_ref(v))
        with f.if_(has_v) as br:
            with br.then_():
                br.yield_(f.view(f.linear(v, h), None, 2, 16))
            with br.else_():
                br.yield_(k3)
        a = f.attention(q3, k3, br.results[0], scale=0.25, causal=True)
        out = f.add(f.linear(o, f.view(a, None, 64)), x)
        f.ret(out)
    return b


def test_builder_text_is_valid_tx():
    text = build_block().text()
    assert "tx.guard is_not_none %v_proj_ref" in text
    assert "scf.if %guard -> (memref<?x2x16xf32>)" in text
    assert "tx.rmsnorm %x, %norm eps 1.0e-06" in text
    m = tx.Module.parse(text)
    assert "func.func @forward" in str(m)


def test_builder_block_fuses_and_runs():
    m = build_block().build()
    reference = m.compile_cpu(seed=3)
    m.run_pipeline("tx-fusion")
    assert "tx.layer @qkv_proj" in str(m)
    # The guard on v_proj folded away with the fusion.
    assert "tx.guard" not in str(m)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    cos, sin = np.ones((2, 8), np.float32), np.zeros((2, 8), np.float32)
    want, = reference.invoke("forward", x, cos, sin)
    got, = m.compile_cpu(seed=3).invoke("forward", x, cos, sin)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_builder_errors():
    b = tx.ModuleBuilder()
    b.layer("q_proj", 64, 64)
    with pytest.raises(ValueError, match="declared twice"):
        b.layer("q_proj", 64, 64)
    with pytest.raises(ValueError, match="no ret"):
        with b.function("f", x=tx.memref(None, 64)):
            pass
        b.text()


def test_builder_invalid_ir_is_a_located_tx_error():
    b = tx.ModuleBuilder()
    q = b.layer("q_proj", 64, 64)
    with b.function("f", x=tx.memref(None, 32)) as f:  # 32 != in_features
        f.ret(f.linear(q, f.arg("x")))
    with pytest.raises(tx.TxError) as info:
        b.build()
    d = info.value.diagnostics[0]
    assert d.file == "<tx.ModuleBuilder>" and d.line == 4
    assert "tx.linear" in d.message


def test_builder_window_softcap_weightless_norm():
    """attention(window=, softcap=) and rmsnorm(weight=None) parse, verify
    and run: with window 1 each query sees only its own key (the output is
    v); the weightless norm of x is x / rms(x)."""
    b = tx.ModuleBuilder()
    with b.function("forward", q=tx.memref(None, 2, 8), k=tx.memref(None, 1, 8),
                    v=tx.memref(None, 1, 8)) as f:
        q, k, v = f.args
        a = f.attention(q, k, v, scale=0.5, causal=True, window=1, softcap=30.0)
        n = f.rmsnorm(f.view(a, None, 16), None, eps=1e-6)
        f.ret(n)
    text = b.text()
    assert "scale 0.5 causal window 1 softcap 30.0 :" in text
    assert "tx.rmsnorm %view eps 1.0e-06 : memref<?x16xf32> -> memref<?x16xf32>" in text
    m = b.build()
    rng = np.random.default_rng(2)
    qv, kv, vv = (rng.standard_normal((5, h, 8)).astype(np.float32) for h in (2, 1, 1))
    got, = m.compile_cpu().invoke("forward", qv, kv, vv)
    rows = np.repeat(vv, 2, axis=1).reshape(5, 16).astype(np.float64)
    want = rows / np.sqrt((rows * rows).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_builder_attention_value_head_dim():
    """attention() with v's head_dim differing from q's and k's (MLA): the
    result has v's; with window 1 each query sees only its own key, so the
    output is v repeated over the query heads."""
    b = tx.ModuleBuilder()
    with b.function("forward", q=tx.memref(None, 2, 8), k=tx.memref(None, 1, 8),
                    v=tx.memref(None, 1, 6)) as f:
        q, k, v = f.args
        a = f.attention(q, k, v, scale=0.5, causal=True, window=1)
        assert str(a.type) == "memref<?x2x6xf32>"
        f.ret(a)
    rng = np.random.default_rng(4)
    qv, kv = (rng.standard_normal((5, h, 8)).astype(np.float32) for h in (2, 1))
    vv = rng.standard_normal((5, 1, 6)).astype(np.float32)
    got, = b.build().compile_cpu().invoke("forward", qv, kv, vv)
    np.testing.assert_array_equal(got, np.repeat(vv, 2, axis=1))


def test_builder_rotary_interleaved():
    """rotary(interleaved=True) rotates the pairs (2i, 2i+1) by angle i (GPT-J,
    Cohere); without it the halves."""
    b = tx.ModuleBuilder()
    with b.function("forward", x=tx.memref(None, 2, 8), cos=tx.memref(None, 4),
                    sin=tx.memref(None, 4)) as f:
        x, cos, sin = f.args
        f.ret(f.rotary(x, cos, sin, interleaved=True), f.rotary(x, cos, sin))
    text = b.text()
    assert "interleaved : memref<?x2x8xf32>, memref<?x4xf32>" in text
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((5, 2, 8)).astype(np.float32)
    ang = rng.standard_normal((5, 4)).astype(np.float32)
    got_pairs, got_halves = b.build().compile_cpu().invoke(
        "forward", xv, np.cos(ang), np.sin(ang))
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    even, odd = xv[..., ::2], xv[..., 1::2]
    pairs = np.stack([even * c - odd * s, odd * c + even * s], -1).reshape(5, 2, 8)
    lo, hi = xv[..., :4], xv[..., 4:]
    halves = np.concatenate([lo * c - hi * s, hi * c + lo * s], -1)
    np.testing.assert_allclose(got_pairs, pairs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_halves, halves, rtol=1e-5, atol=1e-6)

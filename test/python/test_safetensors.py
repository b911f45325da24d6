"""tx.safetensors (save_file/load_file in numpy) and safetensors checkpoints
as `weights=` of compile_cpu."""

import json
import os
import struct

import numpy as np
import pytest

import tx
from tx.safetensors import BF16, bf16, load_file, save_file, save_sharded

T = 3
PREFIX = "model.layers.0."
# The checkpoint tensors of examples/llama_decoder_layer.mlir.
SHAPES = {
    "input_layernorm.weight": (64,),
    "post_attention_layernorm.weight": (64,),
    "self_attn.q_proj.weight": (64, 64),
    "self_attn.k_proj.weight": (32, 64),
    "self_attn.v_proj.weight": (32, 64),
    "self_attn.o_proj.weight": (64, 64),
    "mlp.gate_proj.weight": (128, 64),
    "mlp.up_proj.weight": (128, 64),
    "mlp.down_proj.weight": (64, 128),
}


def checkpoint(seed=0):
    rng = np.random.default_rng(seed)
    return {PREFIX + k: (rng.standard_normal(s) / np.sqrt(s[-1])).astype(
        np.float32) for k, s in SHAPES.items()}


def inputs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((T, 64)).astype(np.float32)
    angles = rng.standard_normal((T, 8)).astype(np.float32)
    return x, np.cos(angles), np.sin(angles)


def test_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    path = str(tmp_path / "t.safetensors")
    save_file({"a": a, "h": a.astype(np.float16), "b": bf16(a),
               "i": np.arange(5, dtype=np.int64), "s": np.float32(2.5)},
              path, metadata={"format": "pt"})
    t = load_file(path)
    np.testing.assert_array_equal(t["a"], a)
    assert t["h"].dtype == np.float16 and t["i"].dtype == np.int64
    assert isinstance(t["b"], BF16) and t["b"].shape == (3, 4)
    assert t["s"].shape == () and t["s"] == 2.5
    # The layout: u64 header length, JSON padded to 8, data from 8 + n.
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    assert n % 8 == 0 and header["__metadata__"] == {"format": "pt"}
    assert header["a"] == {"dtype": "F32", "shape": [3, 4],
                           "data_offsets": header["a"]["data_offsets"]}
    begin, end = header["a"]["data_offsets"]
    assert blob[8 + n + begin:8 + n + end] == a.tobytes()


def test_bf16_rounds_to_nearest_even():
    one = np.float32(1.0)
    ulp = np.float32(2.0 ** -7)  # bf16's ulp at 1
    values = np.array([one, one + ulp / 2, one + ulp * 1.5, one + ulp * 0.51,
                       np.nan, np.inf, -0.0], dtype=np.float32)
    got = np.asarray(bf16(values))
    np.testing.assert_array_equal(
        got[[0, 1, 2, 3, 5, 6]],
        np.array([one, one, one + 2 * ulp, one + ulp, np.inf, -0.0],
                 dtype=np.float32))
    assert np.isnan(got[4])


def test_weights_safetensors_equal_npy(llama_text, tmp_path):
    ckpt = checkpoint()
    npy = tmp_path / "npy"
    npy.mkdir()
    for k, v in ckpt.items():
        np.save(npy / (k + ".npy"), v)
    save_file(ckpt, str(tmp_path / "model.safetensors"))
    save_sharded(ckpt, str(tmp_path / "sharded"), shards=2)
    want, = tx.Module.parse(llama_text).compile_cpu(
        weights=str(npy)).invoke("forward", *inputs())
    for weights in [tmp_path / "model.safetensors", tmp_path / "sharded",
                    str(tmp_path / "sharded" /
                        "model.safetensors.index.json")]:
        got, = tx.Module.parse(llama_text).compile_cpu(
            weights=weights).invoke("forward", *inputs())
        np.testing.assert_array_equal(got, want)
    # The fused module loads the same, unfused checkpoint.
    fused = tx.Module.parse(llama_text).run_pipeline("tx-fusion")
    got, = fused.compile_cpu(weights=str(tmp_path / "model.safetensors")) \
        .invoke("forward", *inputs())
    np.testing.assert_array_equal(got, want)
    # Other weights, another output (the comparison can fail).
    save_file(checkpoint(seed=1), str(tmp_path / "other.safetensors"))
    other, = tx.Module.parse(llama_text).compile_cpu(
        weights=str(tmp_path / "other.safetensors")).invoke(
            "forward", *inputs())
    assert not np.allclose(other, want)


def test_weights_errors(llama_text, tmp_path):
    ckpt = checkpoint()
    missing = dict(ckpt)
    del missing[PREFIX + "mlp.up_proj.weight"]
    save_file(missing, str(tmp_path / "missing.safetensors"))
    with pytest.raises(tx.TxError) as info:
        tx.Module.parse(llama_text).compile_cpu(
            weights=str(tmp_path / "missing.safetensors"))
    assert info.value.status == "TX_ERROR_EXECUTION"
    assert "missing.safetensors': no checkpoint tensor " \
        "'model.layers.0.mlp.up_proj.weight'" in str(info.value)
    with open(tmp_path / "bad.safetensors", "wb") as f:
        f.write(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(tx.TxError) as info:
        tx.Module.parse(llama_text).compile_cpu(
            weights=str(tmp_path / "bad.safetensors"))
    assert info.value.status == "TX_ERROR_INVALID_ARGUMENT"
    assert "header length 1000 runs past the end of the file" in \
        str(info.value)
    with pytest.raises(TypeError):
        tx.Module.parse(llama_text).compile_cpu(weights="a", weights_dir="b")
    with pytest.raises(ValueError, match="runs past the end"):
        load_file(str(tmp_path / "bad.safetensors"))

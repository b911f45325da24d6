"""tx.Module: parse, pipelines, printing, stacking maps, errors."""

import pytest

import tx


def test_parse_print_roundtrip(llama_text):
    m = tx.Module.parse(llama_text, source_name="llama.mlir")
    text = str(m)
    assert "tx.layer @q_proj : 64 -> 64, f32" in text
    # What we print parses back to the same text.
    assert str(tx.Module.parse(text)) == text
    assert "tx.layer" in m.print(generic=True)


def test_fusion_pipeline_and_stacking_maps(llama_text):
    m = tx.Module.parse(llama_text)
    assert m.run_pipeline("tx-fusion") is m
    text = str(m)
    assert "@q_proj(" not in text and "@gate_proj(" not in text
    assert text.count("tx.linear @") == 4  # qkv_proj, o_proj, gate_up_proj, down_proj
    maps = m.stacking_maps(tp_size=2)
    layers = {layer["name"]: layer for layer in maps["layers"]}
    assert len(layers) == 2
    sources = sorted(t["source"].rsplit(".", 1)[1]
                     for l in layers.values() for t in l["tensors"])
    assert sources == sorted(
        ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj"])
    for layer in layers.values():
        assert [r["rank"] for r in layer["ranks"]] == [0, 1]


def test_pipeline_options(llama_text):
    m = tx.Module.parse(llama_text)
    # Only the gate/up group: q/k/v stay separate.
    m.run_pipeline("tx-fusion", fusers=["glu"])
    text = str(m)
    assert "@q_proj(" in text and "@gate_proj(" not in text


def test_textual_pipeline(llama_text):
    m = tx.Module.parse(llama_text)
    m.run_pass_pipeline("tx-fusion,canonicalize,func.func(cse)")
    assert "@q_proj(" not in str(m)


def test_parse_errors_are_located():
    with pytest.raises(tx.TxError) as info:
        tx.Module.parse("module {\n  tx.no_such_op\n}\n", source_name="bad.mlir")
    err = info.value
    assert err.status == "TX_ERROR_PARSE"
    assert err.diagnostics, err.message
    d = err.diagnostics[0]
    assert (d.file, d.line, d.column, d.severity) == ("bad.mlir", 2, 3, "error")
    assert "tx.no_such_op" in d.message


def test_verifier_errors_are_located():
    text = """module {
  func.func @f() {
    %p = tx.get_param @missing : memref<4xf32>
    return
  }
}
"""
    with pytest.raises(tx.TxError) as info:
        tx.Module.parse(text, source_name="v.mlir")
    d = info.value.diagnostics[0]
    assert (d.line, d.column) == (3, 10)
    assert "missing" in d.message


@pytest.mark.parametrize("bad", [None, 42, b"\xff\xfe"])
def test_bad_text(bad):
    with pytest.raises((tx.TxError, TypeError)):
        tx.Module.parse(bad)


def test_unknown_pipeline_and_option(llama_text):
    m = tx.Module.parse(llama_text)
    with pytest.raises(tx.TxError) as info:
        m.run_pipeline("tx-no-such-pipeline")
    assert info.value.status == "TX_ERROR_PIPELINE"
    assert "tx-no-such-pipeline" in str(info.value)
    with pytest.raises(tx.TxError) as info:
        m.run_pipeline("tx-fusion", no_such_option=1)
    assert info.value.status == "TX_ERROR_PIPELINE"
    assert "no-such-option" in str(info.value)
    with pytest.raises(tx.TxError):
        m.run_pass_pipeline("canonicalize,,(")
    # The module is untouched by the failed calls.
    assert "@q_proj(" in str(m)


def test_stacking_maps_bad_tp(llama_text):
    m = tx.Module.parse(llama_text)
    with pytest.raises(tx.TxError) as info:
        m.stacking_maps(tp_size=0)
    assert info.value.status == "TX_ERROR_INVALID_ARGUMENT"
    with pytest.raises(TypeError):
        m.stacking_maps(tp_size="2")


def test_module_outlives_context(llama_text):
    ctx = tx.Context()
    m = tx.Module.parse(llama_text, context=ctx)
    del ctx  # The module keeps its context alive.
    assert "tx.layer" in str(m)

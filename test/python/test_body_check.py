"""tx.frontend's check of a file's own eager_attention_forward and repeat_kv
(tx/frontend/body_check.py): each is replaced by what tx computes
(tx.attention, its grouped key/value heads) only when its body, run on
pseudo-random numbers with the call's own arguments, computes the same;
anything else is a located error, never another attention."""

import random

import pytest

from tx.frontend import FrontendError, import_source
from tx.frontend import body_check as bc

CONFIG = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
          "head_dim": 16}

BLOCK = '''
import math
import torch
from torch import nn

def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)

%s

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.head_dim = 16
        self.num_key_value_groups = 2
        self.scaling = 16 ** -0.5
        self.attention_dropout = 0.0
        self.q_proj = nn.Linear(64, 64, bias=False)
        self.k_proj = nn.Linear(64, 32, bias=False)
        self.v_proj = nn.Linear(64, 32, bias=False)

    def forward(self, hidden_states, attention_mask):
        q = self.q_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        k = self.k_proj(hidden_states).view(1, -1, 2, 16).transpose(1, 2)
        v = self.v_proj(hidden_states).view(1, -1, 2, 16).transpose(1, 2)
        out, _ = eager_attention_forward(self, q, k, v, %s)
        return out.reshape(1, -1, 64)
'''

HF = '''
def eager_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, softcap=None, **kwargs):
    if scaling is None:
        scaling = module.head_dim**-0.5
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if softcap is not None:
        attn_weights = attn_weights / softcap
        attn_weights = torch.tanh(attn_weights)
        attn_weights = attn_weights * softcap
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights
'''

# torch.bmm on [batch * heads, tokens, head_dim] views, scaled by
# 1 / math.sqrt(head_dim) (what `scaling` is at these calls).
BMM = '''
def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    bsz, heads, q_len, head_dim = query.size()
    kv_len = key_states.shape[-2]
    q = query.reshape(bsz * heads, q_len, head_dim)
    k = key_states.reshape(bsz * heads, kv_len, head_dim)
    v = value_states.reshape(bsz * heads, kv_len, -1)
    attn_weights = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(head_dim)
    if attention_mask is not None:
        mask = attention_mask[:, :, :, :kv_len].expand(bsz, heads, q_len, kv_len)
        attn_weights = attn_weights + mask.reshape(bsz * heads, q_len, kv_len)
    attn_weights = attn_weights.softmax(-1)
    attn_output = torch.bmm(attn_weights, v).view(bsz, heads, q_len, -1)
    return attn_output.transpose(1, 2), attn_weights
'''

# softmax written out (the row maximum subtracted), the mask made of
# torch.finfo's minimum, the heads grouped by repeat_interleave.
MANUAL = '''
def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    key_states = torch.repeat_interleave(key, module.num_key_value_groups, dim=1)
    value_states = value.repeat_interleave(module.num_key_value_groups, 1)
    scores = query @ key_states.transpose(-1, -2) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask
    scores = scores - scores.amax(dim=-1, keepdim=True)
    probs = scores.exp()
    probs = probs / probs.sum(-1, keepdim=True)
    return (probs @ value_states).permute(0, 2, 1, 3), probs
'''


def imported(helper, call="attention_mask, scaling=self.scaling", mask="causal"):
    return import_source(BLOCK % (helper, call), "block.py", CONFIG, entry="Block", mask=mask)


@pytest.mark.parametrize("helper, call, attrs", [
    (HF, "attention_mask, scaling=self.scaling", "scale 0.25 causal :"),
    (HF, "attention_mask", "scale 0.25 causal :"),
    (HF, "attention_mask, scaling=0.5, softcap=30.0", "scale 0.5 causal softcap 30.0 :"),
    (HF, "attention_mask, scaling=self.scaling, sliding_window=3",
     "scale 0.25 causal window 3 :"),
    (HF, "None, scaling=self.scaling", "scale 0.25 :"),
    (BMM, "attention_mask, scaling=self.scaling", "scale 0.25 causal :"),
    (BMM, "attention_mask, 0.25", "scale 0.25 causal :"),
    (MANUAL, "attention_mask, scaling=self.scaling", "scale 0.25 causal :"),
])
def test_bodies_that_compute_hf_attention(helper, call, attrs):
    assert "tx.attention %q, %k, %v " + attrs in imported(helper, call)


def test_no_mask_given_and_a_body_that_ignores_it():
    text = imported(HF.replace("attn_weights = attn_weights + causal_mask", "pass"),
                    mask="none")
    assert "tx.attention %q, %k, %v scale 0.25 :" in text


@pytest.mark.parametrize("helper, call, what", [
    (HF.replace("matmul(attn_weights, value_states)", "matmul(attn_weights, key_states)"),
     None, "does not compute HF's eager attention (softmax(q k^T * scaling + mask) v): "
     "the keys used as the values"),
    (HF.replace(".transpose(1, 2).contiguous()", ".contiguous()"), None,
     "its attn_output has shape [1, 4, 3, 16], not [batch, tokens, heads, head_dim] = "
     "[1, 3, 4, 16] (the heads before the tokens: not transposed back)"),
    (HF.replace("* scaling\n", "* scaling * 2.0\n"), None,
     "the scores are scaled by 0.5, not 0.25"),
    (HF.replace("attn_weights = attn_weights + causal_mask", "pass"), None,
     "the mask is not applied"),
    (HF.replace("dim=-1, dtype", "dim=-2, dtype"), None,
     "softmax is over the queries (dim=-2), not the keys"),
    (HF.replace("matmul(attn_weights, value_states)", "matmul(attn_weights * 2.0, value_states)"),
     None, "its attn_output is 2 times tx.attention's"),
    # 1 / sqrt(head_dim) where the call passes another scaling.
    (BMM, "attention_mask, scaling=0.5", "the scores are scaled by 0.25, not 0.5"),
    # The cap applied whether or not the call passes one.
    (HF.replace("if softcap is not None:", "if True:").replace("/ softcap", "/ 50.0")
       .replace("* softcap", "* 50.0"),
     None, "its attn_output differs from tx.attention's"),
    (HF, "attention_mask, scaling=self.scaling, softcap=None, sliding_window=None, "
         "dropout=0.0", None),
    # The heads tiled instead of grouped, by the body itself.
    (MANUAL.replace("torch.repeat_interleave(key, module.num_key_value_groups, dim=1)",
                    "key.repeat(1, module.num_key_value_groups, 1, 1)")
           .replace("value.repeat_interleave(module.num_key_value_groups, 1)",
                    "value.repeat(1, 2, 1, 1)"),
     None, "query head h reads key/value head h % 2 (tiled), not h // 2"),
])
def test_other_attentions_are_errors(helper, call, what):
    if what is None:
        assert "tx.attention" in imported(helper, call)
        return
    with pytest.raises(FrontendError) as e:
        imported(helper, call) if call else imported(helper)
    lines = (BLOCK % (helper, "")).splitlines()
    at = next(i for i, l in enumerate(lines, 1) if "= eager_attention_forward(" in l)
    assert str(e.value).startswith("block.py:%d:18: error: eager_attention_forward "
                                   "(block.py:" % at), str(e.value)
    assert what in str(e.value), str(e.value)


@pytest.mark.parametrize("change, what", [
    (("attn_weights = torch.tanh(attn_weights)",
      "attn_weights = torch.special.erf(attn_weights)"),
     "could not be checked: torch.special.erf() (line 22)"),
    (("if softcap is not None:", "if module.sinks is not None:"),
     "could not be checked: module.sinks, which is not set in __init__ (line 20)"),
    (("if softcap is not None:", "if attn_weights.sum() > 0:"),
     "could not be checked: a comparison of a tensor (line 20)"),
    # Branches on the token count: the check runs at two counts, the import
    # holds for all (found by the fourth blind test: `if query.shape[2] > 5`
    # imported silently wrong beyond 5 tokens).
    (("if softcap is not None:", "if query.shape[2] > 5:"),
     "could not be checked: a comparison of the token count"),
    (("if softcap is not None:", "if (query.shape[-2] + 1) % 2 == 0:"),
     "could not be checked: a comparison of the token count"),
    (("if softcap is not None:", "if min(key.shape[2], 4) == 4:"),
     "could not be checked: min() of the token count"),
])
def test_what_the_check_cannot_run_is_an_error(change, what):
    with pytest.raises(FrontendError) as e:
        imported(HF.replace(*change), "attention_mask, scaling=self.scaling, softcap=2.0")
    assert "is replaced by tx.attention only when it computes HF's eager attention" \
        in str(e.value)
    assert what in str(e.value), str(e.value)


def test_a_window_too_large_to_run_read_by_the_body():
    helper = HF.replace("    if softcap is not None:\n",
                        "    if kwargs.get(\"sliding_window\") is None:\n        pass\n"
                        "    if softcap is not None:\n")
    # HF's body leaves the window to the mask: any window imports.
    assert "window 4096" in imported(HF, "attention_mask, sliding_window=4096")
    with pytest.raises(FrontendError) as e:
        imported(helper, "attention_mask, sliding_window=4096")
    assert "reads the sliding window (line 20), 4096 tokens: more than the check" \
        in str(e.value), str(e.value)


TILED = '''
def repeat_kv(hidden_states, n_rep):
    return hidden_states.repeat(1, n_rep, 1, 1)
'''

WRITTEN_OUT = '''
import torch
from torch import nn
%s

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(64, 64, bias=False)
        self.k_proj = nn.Linear(64, 32, bias=False)
        self.v_proj = nn.Linear(64, 32, bias=False)

    def forward(self, hidden_states, attention_mask):
        q = self.q_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        k = self.k_proj(hidden_states).view(1, -1, 2, 16).transpose(1, 2)
        v = self.v_proj(hidden_states).view(1, -1, 2, 16).transpose(1, 2)
        k = repeat_kv(k, 2)
        v = repeat_kv(v, 2)
        s = torch.matmul(q, k.transpose(2, 3)) * 0.25 + attention_mask
        p = nn.functional.softmax(s, dim=-1)
        return torch.matmul(p, v).transpose(1, 2).reshape(1, -1, 64)
'''


@pytest.mark.parametrize("helper, what", [
    (TILED, "the heads are tiled (head j of its result is head j % 2 of the input, "
            "not j // 2)"),
    ('''
def repeat_kv(hidden_states, n_rep):
    return hidden_states
''', "its result has shape [1, 2, 3, 16], not [1, 4, 3, 16]"),
    ('''
def repeat_kv(hidden_states, n_rep):
    return hidden_states.repeat_interleave(n_rep, dim=2)
''', "its result has shape [1, 2, 6, 16], not [1, 4, 3, 16]"),
])
def test_repeat_kv_called_in_forward(helper, what):
    with pytest.raises(FrontendError) as e:
        import_source(WRITTEN_OUT % helper, "block.py", CONFIG, entry="Block")
    assert str(e.value).startswith("block.py:20:13: error: repeat_kv (block.py:")
    assert "does not compute HF's repeat_kv" in str(e.value)
    assert what in str(e.value), str(e.value)


@pytest.mark.parametrize("helper", [
    '''
def repeat_kv(hidden_states, n_rep):
    return torch.repeat_interleave(hidden_states, repeats=n_rep, dim=1)
''', '''
def repeat_kv(x, n_rep):
    b, h, s, d = x.shape
    return x.unsqueeze(2).expand(-1, -1, n_rep, -1, -1).flatten(1, 2)
'''])
def test_repeat_kv_that_repeats_in_place(helper):
    text = import_source(WRITTEN_OUT % helper, "block.py", CONFIG, entry="Block")
    assert "tx.attention %q, %k, %v scale 0.25 causal" in text


def test_repeat_kv_inside_attention_named():
    with pytest.raises(FrontendError) as e:
        imported(HF.replace("def eager_attention_forward", TILED + "\ndef eager_attention_forward"))
    assert "repeat_kv (block.py:" in str(e.value)
    assert "which eager_attention_forward calls, does not compute HF's repeat_kv" \
        in str(e.value)


def test_own_tracing_query_is_translated():
    src = '''
import torch
from torch import nn

def is_torchdynamo_compiling():
    return True

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()

    def forward(self, hidden_states):
        if is_torchdynamo_compiling():
            return hidden_states * 2.0
        return hidden_states
'''
    # Taken by its name it would be False (the import of the model run
    # eagerly); the file's own says True.
    assert "tx.binary mul %hidden_states" in import_source(src, "block.py", CONFIG,
                                                          entry="Block")


# -- the interpreter's tensors against PyTorch's ------------------------------------
def _t(rng, shape):
    return bc.T([rng.uniform(-1, 1) for _ in range(bc._numel(shape))], shape)


def test_views_match_torch():
    torch = pytest.importorskip("torch")
    rng = random.Random(0)
    x = _t(rng, [1, 2, 3, 4])
    tx = torch.tensor(x.values(), dtype=torch.float64).reshape(1, 2, 3, 4)

    def same(a, b):
        assert a.shape == tuple(b.shape)
        assert a.values() == pytest.approx(b.flatten().tolist())

    same(bc.transpose(x, 1, 2, None), tx.transpose(1, 2))
    same(bc.reshape(bc.transpose(x, 1, 2, None), [[1, 3, 8]], None), tx.transpose(1, 2).reshape(1, 3, 8))
    with pytest.raises(bc.Stop):
        bc.reshape(bc.transpose(x, 1, 2, None), [[1, 3, 8]], None, view=True)
    same(bc.reshape(x, [[2, 12]], None, view=True), tx.view(2, 12))
    same(bc.index(x, (slice(None), slice(None), None, slice(None), slice(1, 3)), None),
         tx[:, :, None, :, 1:3])
    same(bc.index(x, (Ellipsis, slice(None, -1)), None), tx[..., :-1])
    same(bc.repeat(x, [1, 2, 1, 1], None), tx.repeat(1, 2, 1, 1))
    same(bc.repeat_interleave(x, 2, 1, None), tx.repeat_interleave(2, dim=1))
    e = bc.expand(bc.unsqueeze(x, 2, None), [1, 2, 3, 3, 4], None)
    same(e, tx[:, :, None].expand(1, 2, 3, 3, 4))
    same(bc.reshape(e, [[1, 6, 3, 4]], None), tx[:, :, None].expand(1, 2, 3, 3, 4).reshape(1, 6, 3, 4))
    y = _t(rng, [1, 2, 4, 5])
    ty = torch.tensor(y.values(), dtype=torch.float64).reshape(1, 2, 4, 5)
    same(bc.matmul(x, y, None), tx @ ty)
    same(bc.rows_apply(x, 2, bc._softmax_row, None), tx.softmax(2))
    same(bc.cat([x, x], -1, None), torch.cat([tx, tx], -1))
    same(bc.cat([x, x], 1, None, stack=True), torch.stack([tx, tx], 1))
    same(bc.permute(x, [0, 2, 1, 3]), tx.permute(0, 2, 1, 3))


def test_reference_matches_torch_attention():
    torch = pytest.importorskip("torch")
    rng = random.Random(1)
    q, k, v = _t(rng, [1, 4, 5, 3]), _t(rng, [1, 2, 5, 3]), _t(rng, [1, 2, 5, 2])
    tq, tk, tv = (torch.tensor(a.values(), dtype=torch.float64).reshape(a.shape)
                  for a in (q, k, v))
    for window, softcap in ((None, None), (2, None), (None, 0.7)):
        s = tq @ tk.repeat_interleave(2, 1).transpose(2, 3) * 0.6
        if softcap:
            s = softcap * torch.tanh(s / softcap)
        i = torch.arange(5)
        keep = (i[None, :] <= i[:, None])
        if window:
            keep &= (i[:, None] - i[None, :]) < window
        s = s.masked_fill(~keep, float("-inf"))
        want = (s.softmax(-1) @ tv.repeat_interleave(2, 1)).transpose(1, 2)
        got = bc.attention_reference(q, k, v, 0.6, True, window, softcap)
        assert got.shape == tuple(want.shape)
        assert got.values() == pytest.approx(want.flatten().tolist(), rel=1e-12, abs=1e-12)


CONV1D = '''
import torch
from torch import nn

class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = Conv1D(48, config.hidden_size)

    def forward(self, hidden_states):
        return self.c_fc(hidden_states)
'''


def test_own_conv1d():
    text = import_source(CONV1D, "block.py", CONFIG, entry="Block")
    assert "tx.checkpoint_transposed" in text or "64 -> 48" in text


@pytest.mark.parametrize("change, what", [
    (("torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)",
      "torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight * 2)"),
     "does not compute x @ weight + bias with weight [nx, nf] and bias [nf]: its result "
     "differs from x @ weight + bias by"),
    (("torch.empty(nx, nf)", "torch.empty(nf, nx)"),
     "its parameters are bias [48], weight [48, 64], not weight [64, 48] and bias [48]"),
    (("x = torch.addmm(", "x = torch.baddbmm("), "could not be checked: torch.baddbmm() "
     "(line 15)"),
])
def test_own_conv1d_otherwise_is_an_error(change, what):
    with pytest.raises(FrontendError) as e:
        import_source(CONV1D.replace(*change), "block.py", CONFIG, entry="Block")
    assert str(e.value).startswith("block.py:22:21: error: Conv1D (block.py:5) ")
    assert what in str(e.value), str(e.value)


def test_repeat_kv_branching_on_the_token_count():
    helper = """
def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if slen > 5:
        return hidden_states.repeat(1, n_rep, 1, 1)
    return torch.repeat_interleave(hidden_states, repeats=n_rep, dim=1)
"""
    with pytest.raises(FrontendError) as e:
        import_source(WRITTEN_OUT % helper, "block.py", CONFIG, entry="Block")
    assert "could not be checked: a comparison of the token count" in str(e.value), \
        str(e.value)

"""tx.frontend's check of a file's own rotary helper (tx/frontend/rotary_check.py):
the helper is run on symbolic values and replaced by tx.rotary (NeoX) or
tx.rotary ... interleaved only when it computes that rotation; anything else
is a located error, never another rotation."""

import pytest

from tx.frontend import FrontendError, import_source

CONFIG = {"hidden_size": 64, "num_attention_heads": 4}

BLOCK = '''
import torch
from torch import nn

%s

class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(64, 64, bias=False)
        self.k_proj = nn.Linear(64, 64, bias=False)

    def forward(self, hidden_states, position_embeddings):
        q = self.q_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        k = self.k_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        return (q + k).transpose(1, 2).reshape(1, -1, 64)
'''

APPLY = '''
def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)
'''

LLAMA = '''
def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)
''' + APPLY

COHERE = '''
def rotate_half(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).flatten(-2)
''' + APPLY

# GLM-style: the helper itself splits off the rotated features (rot =
# cos.shape[-1]) and concatenates the rest back.
PARTIAL = '''
def rotate_half(x):
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(start_dim=-2)

def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    rot = cos.shape[-1]
    q_rot, q_pass = q[..., :rot], q[..., rot:]
    k_rot, k_pass = k[..., :rot], k[..., rot:]
    q_embed = torch.cat([q_rot * cos + rotate_half(q_rot) * sin, q_pass], dim=-1)
    k_embed = torch.cat([k_rot * cos + rotate_half(k_rot) * sin, k_pass], dim=-1)
    return q_embed, k_embed
'''


def imported(helper, config=CONFIG):
    return import_source(BLOCK % helper, "block.py", config, entry="Block")


def test_llama_halves():
    text = imported(LLAMA)
    assert "tx.rotary %q, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>" in text
    assert "interleaved" not in text


def test_cohere_interleaved():
    assert "tx.rotary %q, %cos, %sin interleaved : memref<?x4x16xf32>, memref<?x8xf32>" \
        in imported(COHERE)


def test_partial_interleaved_in_the_helper():
    text = imported(PARTIAL, dict(CONFIG, partial_rotary_factor=0.5))
    assert "tx.slice %q dim 2 offset 0 size 8" in text
    assert "interleaved : memref<?x4x8xf32, strided<[64, 16, 1]>>, memref<?x4xf32>" in text


def test_minus_the_angle():
    # rotate_half returning cat((x2, -x1)) (NanoChat's): a rotation by minus
    # the angle, tx.rotary of -sin (tried after every plain layout failed).
    text = imported(LLAMA.replace("(-x2, x1)", "(x2, -x1)"))
    assert "tx.unary neg %sin" in text
    assert "interleaved" not in text


@pytest.mark.parametrize("helper, what", [
    # The halves rotated the other way round: a rotation by minus the angle.
    # The halves rotated by minus the angle, and scaled (no layout fits,
    # with sin or with -sin).
    (LLAMA.replace("(-x2, x1)", "(x2, -x1)").replace("rotate_half(q) * sin", "rotate_half(q) * sin * 2"),
     "feature 0 of its result for 'q' is q[0]*cos[0] + 2*q[8]*sin[0], "
     "not q[0]*cos[0] - q[8]*sin[0]"),
    # cos and sin swapped in the helper's body.
    (COHERE.replace("(q * cos) + (rotate_half(q) * sin)", "(q * sin) + (rotate_half(q) * cos)"),
     "feature 0 of its result for 'q' is -q[1]*cos[0] + q[0]*sin[0], "
     "not q[0]*cos[0] - q[1]*sin[0]"),
    # Pairs of neighbours with cos/sin of the halves' layout (a scale of 2).
    (COHERE.replace("(rotate_half(q) * sin)", "(rotate_half(q) * sin * 2)"),
     "feature 0 of its result for 'q' is q[0]*cos[0] - 2*q[1]*sin[0], "
     "not q[0]*cos[0] - q[1]*sin[0]"),
    # Meta's complex form.
    ('''
def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    q_ = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
    return q_, k
''', "*arguments at line 7"),
])
def test_other_rotations_are_errors(helper, what):
    with pytest.raises(FrontendError) as e:
        imported(helper)
    lines = (BLOCK % helper).splitlines()
    call = next(i for i, l in enumerate(lines, 1) if "= apply_rotary_pos_emb(" in l)
    assert str(e.value).startswith("block.py:%d:16: error: apply_rotary_pos_emb" % call)
    assert what in str(e.value)

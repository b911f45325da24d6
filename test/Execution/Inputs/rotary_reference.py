#!/usr/bin/env python3
"""numpy references for rotary-variants.test (Inputs/rotary-variants.mlir):
tx.rotary, NeoX (pairs (i, i + D/2)) and interleaved (pairs (2i, 2i+1), as
GPT-J's rotate_every_two and Cohere's rotate_half: x[..., ::2],
x[..., 1::2], torch.stack([-x2, x1], -1).flatten(-2)), written out as HF's
helpers compute them in f64: x * cos + rotate(x) * sin, with cos/sin of one
angle per pair expanded as HF's rotary modules give them (NeoX: the halves
repeated, cat(c, c); interleaved: each angle twice, repeat_interleave).

usage: rotary_reference.py FUNCTION DIR
DIR holds what `tx-run --output-dir DIR --dump-inputs` wrote. f32 functions
must match to 1e-5 of the output's largest magnitude, *_bf16 ones (inputs
rounded as the runner rounds them) to one bf16 ulp of it."""
import sys

import numpy as np

from rounding import check_relative, dumped, format_of

fn, d = sys.argv[1], sys.argv[2]
rounding, ulp = format_of(fn)


def rotate_halves(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return np.stack([-x2, x1], axis=-1).reshape(x.shape)


def rotary(x, cos, sin, interleaved):
    """x [T, heads, D]; cos, sin [T, D/2] (one angle per pair)."""
    if interleaved:
        c, s = np.repeat(cos, 2, axis=-1), np.repeat(sin, 2, axis=-1)
        rotate = rotate_every_two
    else:
        c, s = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
        rotate = rotate_halves
    return x * c[:, None, :] + rotate(x) * s[:, None, :]


def reference(ins):
    x, cos, sin = ins
    if fn in ("interleaved", "interleaved_static", "interleaved_bf16"):
        return [rotary(x, cos, sin, True)]
    if fn == "neox":
        return [rotary(x, cos, sin, False)]
    if fn == "interleaved_wide":
        return [rotary(x[:, 132:264].reshape(-1, 1, 132), cos, sin, True)]
    if fn == "interleaved_partial":
        r = cos.shape[-1] * 2
        return [np.concatenate([rotary(x[..., :r], cos, sin, True), x[..., r:]], axis=-1)]
    sys.exit(f"rotary_reference.py: no reference for '{fn}'")


ins = [rounding(a) for a in dumped(d, fn + ".input%d.npy")]
got = dumped(d, fn + ".%d.npy")
check_relative(fn, reference(ins), got, ulp if ulp is not None else 1e-5)

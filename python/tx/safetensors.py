"""safetensors files in plain Python and numpy (no `safetensors` package).

    from tx.safetensors import save_file, load_file, bf16
    save_file({"model.layers.0.mlp.up_proj.weight": w}, "model.safetensors")
    save_file({"w": bf16(w)}, "bf16.safetensors")     # a bf16 checkpoint
    tensors = load_file("model.safetensors")          # name -> array

The format (https://github.com/huggingface/safetensors): an 8-byte
little-endian header length N, N bytes of JSON
`{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__":
{str: str}}` (padded with spaces to a multiple of 8), then the tensor data,
C order, little-endian, offsets counted from the end of the header.

numpy has no bfloat16: a bf16 tensor is a `BF16` (the raw uint16 bit
patterns in `.bits`; `np.asarray(t)` or `t.to_float32()` gives the exact
f32 values). `bf16(array)` rounds f32 values to bf16 (to nearest even, as
tx and PyTorch do); `load_file` returns BF16 for BF16 tensors and a numpy
array for every other dtype.
"""

import json
import os
import struct

import numpy as np

__all__ = ["BF16", "bf16", "load_file", "save_file", "save_sharded"]

# safetensors dtype name <-> little-endian numpy dtype.
_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?",
}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


class BF16:
    """A bf16 tensor: `bits` holds the uint16 bit patterns."""

    def __init__(self, bits):
        bits = np.asarray(bits)
        if bits.dtype != np.uint16:
            raise TypeError("BF16 bits must be uint16, not %s" % bits.dtype)
        self.bits = bits

    @property
    def shape(self):
        return self.bits.shape

    def to_float32(self):
        """The exact f32 values (bf16 is the top half of an f32)."""
        return (self.bits.astype(np.uint32) << 16).view(np.float32)

    def __array__(self, dtype=None):
        a = self.to_float32()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return "BF16(%r)" % (self.to_float32(),)


def bf16(values):
    """`values` (any float array) rounded to bf16, to nearest even; NaN
    stays a (quiet) NaN."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    bits = rounded.astype(np.uint16)
    nan = np.isnan(f)
    bits[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return BF16(bits)


def _as_entry(name, value):
    """(dtype name, shape, little-endian C-order bytes) of a tensor."""
    if isinstance(value, BF16):
        return "BF16", value.shape, value.bits.astype("<u2").tobytes()
    if hasattr(value, "detach"):  # a torch.Tensor: via numpy
        value = value.detach().cpu().contiguous()
        if str(value.dtype) == "torch.bfloat16":
            import torch  # only reached with a torch tensor in hand
            bits = value.view(torch.int16).numpy().view(np.uint16)
            return "BF16", tuple(value.shape), bits.astype("<u2").tobytes()
        value = value.numpy()
    a = np.asarray(value)
    key = np.dtype(a.dtype).newbyteorder("<") if a.dtype.byteorder == ">" \
        else np.dtype(a.dtype)
    dtype = _NAMES.get(key)
    if dtype is None:
        raise TypeError("tensor '%s' has dtype %s, which safetensors files "
                        "here do not hold (use float32/float16/bf16(...))"
                        % (name, a.dtype))
    return dtype, a.shape, np.ascontiguousarray(a, dtype=_DTYPES[dtype]).tobytes()


def save_file(tensors, path, metadata=None):
    """Writes `tensors` ({name: numpy array or BF16}) to `path`, in name
    order. `metadata`: an optional {str: str} dict (`__metadata__`)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError("bad tensor name %r" % (name,))
        dtype, shape, data = _as_entry(name, tensors[name])
        header[name] = {"dtype": dtype, "shape": [int(d) for d in shape],
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str)
                   for k, v in metadata.items()):
            raise ValueError("metadata must map str to str")
        header = {"__metadata__": dict(metadata), **header}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def save_sharded(tensors, directory, shards=2, metadata=None):
    """Writes `tensors` as `shards` files `model-0000k-of-0000n.safetensors`
    in `directory` plus the `model.safetensors.index.json` that maps each
    tensor to its file (as Hugging Face's sharded checkpoints do). Returns
    the index's path."""
    os.makedirs(directory, exist_ok=True)
    names = sorted(tensors)
    shards = max(1, min(shards, len(names)))
    weight_map, total = {}, 0
    for k in range(shards):
        part = names[k::shards]
        file = "model-%05d-of-%05d.safetensors" % (k + 1, shards)
        save_file({n: tensors[n] for n in part}, os.path.join(directory, file))
        for n in part:
            weight_map[n] = file
            total += len(_as_entry(n, tensors[n])[2])
    index = {"metadata": dict(metadata or {}, total_size=total),
             "weight_map": weight_map}
    path = os.path.join(directory, "model.safetensors.index.json")
    with open(path, "w") as f:
        json.dump(index, f, indent=2)
    return path


def load_file(path):
    """The tensors of the safetensors file `path`: {name: numpy array}, BF16
    tensors as `BF16`. A malformed file raises ValueError naming it."""
    with open(path, "rb") as f:
        blob = f.read()

    def bad(why):
        return ValueError("'%s': %s" % (path, why))

    if len(blob) < 8:
        raise bad("too short for a safetensors header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise bad("header length %d runs past the end of the file (%d bytes)"
                  % (n, len(blob)))
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise bad("header is not JSON: %s" % e)
    if not isinstance(header, dict):
        raise bad("header is not a JSON object")
    data = memoryview(blob)[8 + n:]
    out = {}
    spans = []

    def count_of(v):
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise bad("tensor '%s': header entry is not a JSON object" % name)
        dtype, shape = info.get("dtype"), info.get("shape")
        offsets = info.get("data_offsets")
        if not isinstance(shape, list) or not all(count_of(d) for d in shape):
            raise bad("tensor '%s': \"shape\" is not a list of sizes >= 0" % name)
        if not isinstance(offsets, list) or len(offsets) != 2 or \
                not all(count_of(o) for o in offsets):
            raise bad("tensor '%s': \"data_offsets\" is not a pair [begin, end] of "
                      "offsets" % name)
        begin, end = offsets
        if dtype != "BF16" and dtype not in _DTYPES:
            raise bad("tensor '%s' has unsupported dtype %s" % (name, dtype))
        if begin < end:
            spans.append((begin, end, name))
        if not (0 <= begin <= end <= len(data)):
            raise bad("tensor '%s' data_offsets [%s, %s] outside the %d data "
                      "bytes" % (name, begin, end, len(data)))
        np_dtype = np.dtype("<u2" if dtype == "BF16" else _DTYPES[dtype])
        count = int(np.prod(shape)) if shape else 1
        if count * np_dtype.itemsize != end - begin:
            raise bad("tensor '%s' of shape %s and dtype %s needs %d bytes, "
                      "data_offsets span %d" % (name, shape, dtype,
                                                count * np_dtype.itemsize,
                                                end - begin))
        a = np.frombuffer(data[begin:end], dtype=np_dtype).reshape(shape)
        a = a.astype(np_dtype.newbyteorder("="))
        out[name] = BF16(a) if dtype == "BF16" else a
    # Together the tensors cover the data exactly, without overlaps, as the
    # format requires (a header length off by a few bytes would otherwise
    # shift every tensor).
    covered = 0
    for begin, end, name in sorted(spans):
        if begin < covered:
            raise bad("tensor '%s' [%d, %d] overlaps the tensor before it"
                      % (name, begin, end))
        if begin != covered:
            raise bad("bytes [%d, %d) of the data belong to no tensor (before '%s'): "
                      "a wrong header length or offsets" % (covered, begin, name))
        covered = end
    if covered != len(data):
        raise bad("the data after the header holds %d bytes, the tensors end at "
                  "byte %d: a wrong header length or offsets, or bytes appended"
                  % (len(data), covered))
    return out

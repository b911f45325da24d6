"""Builds the safetensors checkpoints of the safetensors*.test tests, good and
bad, from a directory of .npy weights (as tx-run --dump-weights writes it),
with python/tx/safetensors.py.

  save NPYDIR OUT [--dtype f32|f16|bf16] [--shards N]
      OUT: a .safetensors file, or with --shards a directory holding the
      shards and model.safetensors.index.json.
  round NPYDIR OUTDIR --dtype f16|bf16 [--truncate]
      The values a 16-bit checkpoint holds, as f32 .npy files (bf16 rounded
      to nearest even, or with --truncate cut: a wrong conversion).
  edit IN OUT OP ARGS...
      swap A B | bump NAME | rename A B | transpose NAME: one changed tensor.
  corrupt IN OUT KIND
      not-json | not-object | past-end | truncated | inverted | overlap |
      shifted | appended | gap | short | dtype NAME: a malformed file
      (dtype: NAME's becomes I32; shifted: the header length one short of a
      space-padded header; appended: bytes after the last tensor; gap: bytes
      before the first).
"""

import importlib.util
import json
import os
import struct
import sys

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "tx_safetensors",
    os.path.join(_here, "..", "..", "..", "python", "tx", "safetensors.py"))
st = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(st)


def read_npy_dir(directory):
    return {f[:-4]: np.load(os.path.join(directory, f))
            for f in sorted(os.listdir(directory)) if f.endswith(".npy")}


def convert(tensors, dtype):
    if dtype == "f32":
        return tensors
    if dtype == "f16":
        return {k: v.astype(np.float16) for k, v in tensors.items()}
    return {k: st.bf16(v) for k, v in tensors.items()}


def raw(path):
    """(header dict, data bytes) of a safetensors file."""
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    return json.loads(blob[8:8 + n]), blob[8 + n:]


def write_raw(path, header, data, header_bytes=None, length=None):
    text = header_bytes if header_bytes is not None else \
        json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text) if length is None else length))
        f.write(text)
        f.write(data)


def main(argv):
    cmd = argv[0]
    if cmd == "save":
        src, out = argv[1], argv[2]
        dtype = argv[argv.index("--dtype") + 1] if "--dtype" in argv else "f32"
        tensors = convert(read_npy_dir(src), dtype)
        if "--shards" in argv:
            st.save_sharded(tensors, out,
                            shards=int(argv[argv.index("--shards") + 1]))
        else:
            st.save_file(tensors, out, metadata={"format": "pt"})
    elif cmd == "round":
        src, out, dtype = argv[1], argv[2], argv[argv.index("--dtype") + 1]
        os.makedirs(out, exist_ok=True)
        for k, v in read_npy_dir(src).items():
            if dtype == "f16":
                r = v.astype(np.float16).astype(np.float32)
            elif "--truncate" in argv:
                r = (v.view(np.uint32) & 0xFFFF0000).view(np.float32)
            else:
                r = np.asarray(st.bf16(v))
            np.save(os.path.join(out, k + ".npy"), r)
    elif cmd == "edit":
        src, out, op = argv[1], argv[2], argv[3]
        t = {k: np.asarray(v, dtype=np.float32)
             for k, v in st.load_file(src).items()}
        if op == "swap":
            t[argv[4]], t[argv[5]] = t[argv[5]], t[argv[4]]
        elif op == "bump":
            t[argv[4]] = t[argv[4]].copy()
            t[argv[4]].flat[0] += 0.5
        elif op == "rename":
            t[argv[5]] = t.pop(argv[4])
        elif op == "transpose":
            t[argv[4]] = np.ascontiguousarray(t[argv[4]].T)
        st.save_file(t, out)
    elif cmd == "corrupt":
        src, out, kind = argv[1], argv[2], argv[3]
        header, data = raw(src)
        names = sorted(k for k in header if k != "__metadata__")
        first, second = header[names[0]], header[names[1]]
        if kind == "not-json":
            write_raw(out, header, data, header_bytes=b'{"a": [1, 2')
        elif kind == "not-object":
            write_raw(out, header, data, header_bytes=b'[1, 2, 3]')
        elif kind == "past-end":
            text = json.dumps(header).encode()
            write_raw(out, header, data, length=len(text) + len(data) + 1)
        elif kind == "truncated":
            write_raw(out, header, data[:-16])
        elif kind == "inverted":
            first["data_offsets"].reverse()
            write_raw(out, header, data)
        elif kind == "overlap":
            b, e = first["data_offsets"]
            b2, e2 = second["data_offsets"]
            second["data_offsets"] = [b + 4, b + 4 + (e2 - b2)]
            write_raw(out, header, data)
        elif kind == "shifted":
            # The header padded with a space and its length one short: still
            # JSON, and every tensor's bytes one later than the offsets say.
            text = json.dumps(header).encode()
            write_raw(out, header, data, header_bytes=text + b" ", length=len(text))
        elif kind == "appended":
            write_raw(out, header, data + b"\0" * 4)
        elif kind == "gap":
            for name in names:
                header[name]["data_offsets"] = [o + 4 for o in header[name]["data_offsets"]]
            write_raw(out, header, b"\0" * 4 + data)
        elif kind == "dtype":
            header[argv[4]]["dtype"] = "I32"  # same size as F32
            write_raw(out, header, data)
        elif kind == "short":
            with open(out, "wb") as f:
                f.write(b"\x10\x00\x00")
        else:
            raise SystemExit("unknown corruption " + kind)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])

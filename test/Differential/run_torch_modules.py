#!/usr/bin/env python3
"""Runs generated PyTorch modules (gen_torch_modules.py) in PyTorch and in
tx, and compares every returned tensor.

For each DIR/mod_*.py (with its .json config and its `# tx-gen: tokens=T
entry=C` header):
1. PyTorch: the class on the config with random weights (seeded), forward on
   random hidden_states [1, T, hidden] (and, when the forward takes them,
   position_embeddings (cos, sin) as HF's rotary module gives them and the
   additive causal mask); every result is saved, as are the inputs (taken
   before forward: a module may write hidden_states in place) and the
   weights as <prefix><name>.npy (tx-run --weights DIR).
2. tx.frontend imports the file (python -m tx.frontend). A clean rejection
   (exit status 1, a `file:line:col: error:` line, no traceback) is counted,
   not a failure; anything else is an error.
3. tx-run runs the IR unfused (--unfused-pipeline, default tx-to-cpu) and
   fused (--pipeline, default tx-fusion,tx-to-cpu) on the same inputs and
   weights; every result must match PyTorch's:
   max|tx - torch| <= rtol * max|torch| per result (rtol 1e-5).

--extra-pipeline P (repeatable) adds a run that must match too (other
tx-to-cpu options: threads=2, row-loops=false, math=libm, ...).

Prints a line per rejection, mismatch or error (with the commands that
reproduce a mismatch or error) and the summary
  torch-modules: N modules, I imported, R rejected (clean errors),
  M matched unfused, F matched fused, X mismatched, E errors
(M, F: modules whose every result matched; X: runs, unfused or fused, with a
result that did not; E: PyTorch failing on a module (a generator bug), a
frontend crash or hang, tx-run failing or hanging on an imported module).
Exits 1 if X or E is not 0.

The frontend runs as `<this python> -m tx.frontend` with PYTHONPATH as set
(default: the repository's python/ directory); tx-run from --tx-run or PATH.
"""
import argparse
import glob
import importlib.util
import inspect
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import types

import numpy as np

PREFIX = "model.layers.0."
CLEAN_ERROR = re.compile(r"^\S+:\d+:\d+: error: ")
INPUT_FILES = {"hidden_states": "x.npy", "cos": "cos.npy", "sin": "sin.npy"}


def header(path):
    with open(path) as f:
        first = f.readline()
    m = re.match(r"# tx-gen: tokens=(\d+) entry=(\w+)", first)
    return (int(m.group(1)), m.group(2)) if m else (7, "GenBlock")


def torch_reference(py, config, tokens, entry, seed, d):
    """Runs the module in PyTorch; writes d/x.npy, cos.npy, sin.npy,
    weights/*.npy and expected.<i>.npy; returns the number of results."""
    import torch
    torch.manual_seed(seed)
    with open(config) as f:
        cfg = types.SimpleNamespace(**json.load(f))
    name = "txgen_" + re.sub(r"\W", "_", os.path.basename(py)[:-3])
    spec = importlib.util.spec_from_file_location(name, py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = getattr(mod, entry)(cfg).eval()
    with torch.no_grad():
        for n, p in model.named_parameters():
            norm = "norm" in n or n.startswith("ln")
            if norm and n.endswith("weight") or "scale" in n:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif n.endswith("bias"):
                p.copy_(0.5 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    T, hd = tokens, cfg.head_dim
    x = torch.randn(1, T, cfg.hidden_size)
    inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
    ang = torch.arange(T).float()[:, None] * inv[None, :]
    cos_h, sin_h = ang.cos(), ang.sin()
    mask = torch.full((T, T), float("-inf")).triu(1)[None, None]
    call = {}
    for arg in inspect.signature(model.forward).parameters:
        if arg == "hidden_states":
            call[arg] = x.clone()   # forward may write it in place
        elif arg == "position_embeddings":
            call[arg] = (torch.cat([cos_h, cos_h], -1)[None], torch.cat([sin_h, sin_h], -1)[None])
        elif arg == "attention_mask":
            call[arg] = mask
    with torch.no_grad():
        out = model(**call)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    os.makedirs(os.path.join(d, "weights"), exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x[0].numpy())
    np.save(os.path.join(d, "cos.npy"), cos_h.numpy())
    np.save(os.path.join(d, "sin.npy"), sin_h.numpy())
    for n, v in model.state_dict().items():
        np.save(os.path.join(d, "weights", PREFIX + n + ".npy"), v.float().numpy())
    for i, o in enumerate(outs):
        if o.dim() < 2 or o.shape[0] != 1:
            raise RuntimeError("result %d is not [1, tokens, ...]: %s" % (i, tuple(o.shape)))
        a = o[0].float().contiguous().numpy()
        if not np.isfinite(a).all():
            raise RuntimeError("result %d is not finite" % i)
        np.save(os.path.join(d, "expected.%d.npy" % i), a)
    return len(outs)


def compare(d, outdir, n, rtol):
    """None if every result matches, else what differs."""
    got = [f for f in os.listdir(outdir) if re.match(r"forward\.\d+\.npy$", f)]
    if len(got) != n:
        return "%d results, torch gives %d" % (len(got), n)
    for i in range(n):
        ref = np.load(os.path.join(d, "expected.%d.npy" % i)).astype(np.float64)
        out = np.load(os.path.join(outdir, "forward.%d.npy" % i)).astype(np.float64)
        if ref.shape != out.shape:
            return "result %d: shape %s, torch gives %s" % (i, out.shape, ref.shape)
        scale = np.abs(ref).max()
        err = np.abs(out - ref).max() / (scale if scale > 0 else 1.0)
        if not err <= rtol:
            at = np.unravel_index(np.nanargmax(np.abs(out - ref)), ref.shape)
            return ("result %d: max error %.3g of max |torch| %.3g (at %s: tx %.6g, torch "
                    "%.6g)" % (i, err, scale, tuple(int(v) for v in at), out[at], ref[at]))
    return None


def run(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=timeout, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    except OSError as e:
        return None, "", "cannot run %s: %s" % (cmd[0], e)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="directories of mod_*.py, or .py files")
    p.add_argument("--tx-run", default=shutil.which("tx-run") or "tx-run")
    p.add_argument("--pipeline", default="tx-fusion,tx-to-cpu",
                   help="the fused run's pipeline (e.g. 'tx-fuse-stacked-linears"
                        "{test-disable-checks=input-stability},tx-to-cpu')")
    p.add_argument("--unfused-pipeline", default="tx-to-cpu")
    p.add_argument("--no-unfused", action="store_true", help="only the fused run")
    p.add_argument("--extra-pipeline", action="append", default=[],
                   help="one more run that must match (e.g. 'tx-fusion,tx-to-cpu{threads=2 "
                        "row-loops=false}'); repeatable; counted only in X and E")
    p.add_argument("--work", help="keep each module's files in WORK/<module>/ "
                   "(default: a temporary directory, removed unless something failed)")
    p.add_argument("--repeat", type=int, default=1,
                   help="call the function N times in one tx-run (results of the last call); "
                        "with N > 1 the inputs after the calls must still be the ones given "
                        "(tx-run --dump-inputs): a call may write its input buffer, never the "
                        "caller's data")
    p.add_argument("--tx-run-arg", action="append", default=[],
                   help="one more tx-run option for every run (repeatable)")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=0, help="seed of weights and inputs")
    p.add_argument("--timeout", type=int, default=300, help="seconds per tool run")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()

    files = []
    for i in a.inputs:
        files += sorted(glob.glob(os.path.join(i, "mod_*.py"))) if os.path.isdir(i) else [i]
    env = dict(os.environ)
    if "PYTHONPATH" not in env:
        here = os.path.dirname(os.path.abspath(__file__))
        env["PYTHONPATH"] = os.path.join(here, "..", "..", "python")
    import tempfile
    work = a.work or tempfile.mkdtemp(prefix="torch-modules-")
    counts = dict(imported=0, rejected=0, unfused=0, fused=0, mismatched=0, errors=0)

    def finding(kind, py, what, cmds=()):
        print("%s %s: %s" % (kind, py, what))
        for c in cmds:
            print("  " + " ".join(shlex.quote(x) for x in c))
        counts["mismatched" if kind == "MISMATCH" else "errors"] += 1
        sys.stdout.flush()

    for py in files:
        config = py[:-3] + ".json"
        tokens, entry = header(py)
        d = os.path.join(work, os.path.basename(py)[:-3])
        os.makedirs(d, exist_ok=True)
        try:
            n = torch_reference(py, config, tokens, entry, a.seed, d)
        except Exception as e:  # a module PyTorch cannot run: a generator bug
            finding("ERROR", py, "torch: %s: %s" % (type(e).__name__, e))
            continue
        mlir = os.path.join(d, "m.mlir")
        fe = [sys.executable, "-m", "tx.frontend", py, "--config", config, "--entry", entry,
              "--prefix", PREFIX, "-o", mlir]
        rc, _, err = run(fe, a.timeout, env)
        if rc != 0:
            lines = err.strip().splitlines()
            if rc == 1 and lines and CLEAN_ERROR.match(lines[-1]) and "Traceback" not in err:
                counts["rejected"] += 1
                print("rejected %s: %s" % (py, lines[-1]))
                continue
            finding("ERROR", py, "frontend (exit %s): %s" % (rc, err.strip()[-2000:]), [fe])
            continue
        counts["imported"] += 1
        with open(mlir) as f:
            m = re.search(r"^// Arguments: (.*)\.$", f.read(), re.M)
        names = [s.strip() for s in m.group(1).split(",")] if m else []
        if any(s not in INPUT_FILES for s in names):
            finding("ERROR", py, "unexpected arguments %s" % names)
            continue
        inputs = ",".join(os.path.join(d, INPUT_FILES[s]) for s in names)
        runs = [("fused", a.pipeline)]
        if not a.no_unfused:
            runs.insert(0, ("unfused", a.unfused_pipeline))
        runs += [("extra%d" % i, p) for i, p in enumerate(a.extra_pipeline)]
        for label, pipeline in runs:
            outdir = os.path.join(d, label)
            shutil.rmtree(outdir, ignore_errors=True)
            cmd = [a.tx_run, mlir, "-e", "forward", "--pipeline=" + pipeline,
                   "--weights", os.path.join(d, "weights"), "--inputs", inputs,
                   "--output-dir", outdir]
            if a.repeat > 1:
                cmd += ["--repeat", str(a.repeat), "--dump-inputs"]
            cmd += a.tx_run_arg
            rc, _, err = run(cmd, a.timeout)
            if rc != 0:
                finding("ERROR", py, "tx-run %s (exit %s): %s" % (label, rc, err.strip()[-2000:]),
                        [fe, cmd])
                continue
            diff = compare(d, outdir, n, a.rtol)
            if not diff and a.repeat > 1:
                for i, s in enumerate(names):
                    given = np.load(os.path.join(d, INPUT_FILES[s]))
                    after = np.load(os.path.join(outdir, "forward.input%d.npy" % i))
                    if given.shape != after.shape or not (given == after).all():
                        diff = "input %d (%s) changed by the calls" % (i, s)
            if diff:
                finding("MISMATCH", py, "%s (%s): %s" % (label, pipeline, diff), [fe, cmd])
            else:
                counts[label] = counts.get(label, 0) + 1
                if a.verbose:
                    print("ok %s %s (%d tokens, %d results)" % (label, py, tokens, n))
    if not a.work and not counts["mismatched"] + counts["errors"]:
        shutil.rmtree(work, ignore_errors=True)
    elif not a.work:
        print("files of the runs kept in %s" % work)
    print("torch-modules: %d modules, %d imported, %d rejected (clean errors), %d matched "
          "unfused, %d matched fused, %d mismatched, %d errors"
          % (len(files), counts["imported"], counts["rejected"], counts["unfused"],
             counts["fused"], counts["mismatched"], counts["errors"]))
    sys.exit(1 if counts["mismatched"] or counts["errors"] else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A whole Llama decoder layer: tx (tx-run, fused, tx-to-cpu{threads=N})
against the same layer in PyTorch eager, same weights and inputs.

  /usr/bin/python3 bench/layer/bench_layer.py                  # full run
  /usr/bin/python3 bench/layer/bench_layer.py --configs=8b --tokens=1,16,256
  /usr/bin/python3 bench/layer/bench_layer.py --quick          # the lit test

For every config (bench/layer/gen_layer.py: bundled, 8b, tiny), token count
T and thread count n: the weights and inputs are written once as .npy; then,
in `--rounds` interleaved rounds, PyTorch (torch.set_num_threads(n)) runs the
layer `--warmup` + `--reps` times and tx-run runs the module compiled with
`tx-fusion,tx-to-cpu{threads=n}` the same number of times (`--repeat`),
reading the same .npy weights (--weights) and inputs (--inputs). tx-run
reports compile time, weight-load time, the first call and the median of the
others, which the table prints apart; per-call columns are the median over
the rounds. tx's output is checked against PyTorch's (max abs difference over
max |torch|; `ok` below --tolerance).

PyTorch is Debian's python3-torch (1.13, a module of /usr/bin/python3): where
it cannot be imported the benchmark prints why and exits 0 (skipped).
The full run drops OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE from its own
environment (they select a slower OpenBLAS kernel for torch's GEMMs; see the
shared TOOLCHAIN.md); --quick leaves the environment alone.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_layer  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", default="bundled,8b")
    p.add_argument("--tokens", default="1,16,256,2048")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--reps", type=int, default=3,
                   help="timed calls per side and round (after the warm-up)")
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--rounds", type=int, default=2,
                   help="interleaved rounds (torch, tx, torch, tx, ...)")
    p.add_argument("--pipeline", default="tx-fusion,tx-to-cpu{{threads={n}}}",
                   help="tx-run pipeline; {n} is the thread count")
    p.add_argument("--tolerance", type=float, default=1e-4)
    p.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(),
                                                     "tx-bench-layer"))
    p.add_argument("--build-dir", default=os.environ.get(
        "BUILD_DIR", os.path.join(gen_layer.ROOT, "build")))
    p.add_argument("--profile", action="store_true",
                   help="also print tx-run --profile's per-op table for each "
                        "tx run")
    p.add_argument("--quick", action="store_true",
                   help="tiny and bundled shapes, T = 1,7, one round, one "
                        "call each (a smoke test: no meaningful timing)")
    if "--quick" in sys.argv[1:]:
        # Defaults of the smoke test; explicit flags still win.
        p.set_defaults(configs="bundled,tiny", tokens="1,7", reps=1, warmup=0,
                       rounds=1)
    a = p.parse_args()
    a.configs = a.configs.split(",")
    for c in a.configs:
        if c not in gen_layer.CONFIGS:
            p.error(f"unknown config '{c}' (have: {', '.join(gen_layer.CONFIGS)})")
    try:
        a.tokens = [int(t) for t in a.tokens.split(",")]
        a.threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        p.error("--tokens and --threads take comma-separated integers")
    if min(a.tokens) < 1 or min(a.threads) < 1 or a.reps < 1 or a.rounds < 1:
        p.error("--tokens, --threads, --reps and --rounds must be at least 1")
    return a


def torch_layer(torch, W, c):
    """The layer in PyTorch ops, as Llama's modeling code writes it."""
    F = torch.nn.functional
    P, H, QH, KVH, D = (gen_layer.PREFIX, c["hidden"], c["heads"],
                        c["kv_heads"], c["head_dim"])
    eps, scale, G = c["eps"], c["scale"], QH // KVH

    def rmsnorm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w

    def rotary(x, cos, sin):  # x [T, heads, D]; NeoX halves
        x1, x2 = x[..., : D // 2], x[..., D // 2:]
        c_, s_ = cos[:, None, :], sin[:, None, :]
        return torch.cat([x1 * c_ - x2 * s_, x2 * c_ + x1 * s_], dim=-1)

    def forward(x, cos, sin):
        T = x.shape[0]
        h = rmsnorm(x, W[P + "input_layernorm.weight"])
        a = P + "self_attn."
        q = F.linear(h, W[a + "q_proj.weight"]).view(T, QH, D)
        k = F.linear(h, W[a + "k_proj.weight"]).view(T, KVH, D)
        v = F.linear(h, W[a + "v_proj.weight"]).view(T, KVH, D)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        # GQA: query head h reads kv head h // G.
        qh = q.transpose(0, 1)                                   # [QH, T, D]
        kh = k.transpose(0, 1).repeat_interleave(G, dim=0)       # [QH, T, D]
        vh = v.transpose(0, 1).repeat_interleave(G, dim=0)
        s = torch.matmul(qh, kh.transpose(1, 2)) * scale         # [QH, T, T]
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        s = s.masked_fill(mask, float("-inf"))
        o = torch.matmul(torch.softmax(s, dim=-1), vh)           # [QH, T, D]
        o = F.linear(o.transpose(0, 1).reshape(T, QH * D), W[a + "o_proj.weight"])
        res = o + x
        h2 = rmsnorm(res, W[P + "post_attention_layernorm.weight"])
        m = P + "mlp."
        g = F.silu(F.linear(h2, W[m + "gate_proj.weight"]))
        return F.linear(g * F.linear(h2, W[m + "up_proj.weight"]),
                        W[m + "down_proj.weight"]) + res

    return forward


TX_LINE = re.compile(r"compile ([0-9.]+) s, weights ([0-9.]+) s, "
                     r"(?:first call ([0-9.]+) s, )?run ([0-9.]+) s")


def run_tx(a, module, wdir, inputs, outdir, n, calls):
    cmd = [os.path.join(a.build_dir, "bin", "tx-run"), module, "-e", "forward",
           "--pipeline", a.pipeline.format(n=n), "--weights", wdir,
           "--inputs", ",".join(inputs), "--output-dir", outdir,
           "--repeat", str(calls)]
    if a.profile:
        cmd.append("--profile")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_layer.py: tx-run failed ({' '.join(cmd)}):\n{r.stderr}")
    m = TX_LINE.search(r.stdout)
    if not m:
        sys.exit(f"bench_layer.py: unexpected tx-run output:\n{r.stdout}")
    compile_s, load_s = float(m.group(1)), float(m.group(2))
    first = float(m.group(3)) if m.group(3) else float(m.group(4))
    if a.profile:
        print(r.stdout[r.stdout.find("profile:"):].rstrip())
    return compile_s, load_s, first, float(m.group(4))


def blas_thread_setter():
    """openblas_set_num_threads of the BLAS PyTorch loaded, or None.

    torch.set_num_threads bounds ATen's OpenMP pool only: Debian's torch
    computes its GEMMs with the libblas.so.3 alternative, by default
    OpenBLAS's pthread build, whose own pool uses every core. Without this,
    the "1 thread" PyTorch column ran its GEMMs on 2 threads (8b, T=256:
    628 ms against 1155 ms with OPENBLAS_NUM_THREADS=1)."""
    import ctypes
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f
                 if "blas" in line and line.rstrip().endswith(".so.3")
                 or "openblas" in line}
    for path in sorted(paths):
        if not path.startswith("/"):
            continue
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_int]
        return path, fn
    return None


def main():
    a = parse_args()
    if not a.quick and ("OPENBLAS_CORETYPE" in os.environ
                        or "OPENBLAS_L2_SIZE" in os.environ):
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
        os.execve(sys.executable, [sys.executable] + sys.argv, env)
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"bench_layer.py: skipped: PyTorch/numpy not importable by "
              f"{sys.executable} ({e}); Debian's python3-torch provides it "
              f"for /usr/bin/python3")
        return 0
    tx_run = os.path.join(a.build_dir, "bin", "tx-run")
    if not os.access(tx_run, os.X_OK):
        sys.exit(f"bench_layer.py: {tx_run} not built")

    blas = blas_thread_setter()
    print("PyTorch BLAS: " + (f"{blas[0]} (threads set with "
                               f"openblas_set_num_threads)" if blas else
                               "no OpenBLAS found; its thread count is "
                               "torch.set_num_threads's"))
    print(f"tx decoder layer vs PyTorch {torch.__version__} eager: "
          f"pipeline {a.pipeline.format(n='n')}; f32; "
          f"{a.rounds} round(s) of {a.warmup} warm-up + {a.reps} call(s) per side")
    print("| config  |    T | thr | tx compile s | tx weights s | torch load s "
          "| tx first ms |    tx ms |  torch ms | tx/torch | rel err  | check |")
    print("|---------|------|-----|--------------|--------------|--------------"
          "|-------------|----------|-----------|----------|----------|-------|")
    failed = False
    for cname in a.configs:
        c = gen_layer.CONFIGS[cname]
        cdir = os.path.join(a.workdir, cname)
        wdir = os.path.join(cdir, "weights")
        gen_layer.write_weights(c, wdir)
        module = os.path.join(cdir, "layer.mlir")
        with open(module, "w") as f:
            f.write(gen_layer.module_text(c))
        t0 = time.perf_counter()
        W = {name: torch.from_numpy(np.load(os.path.join(wdir, name + ".npy")))
             for name in gen_layer.weight_shapes(c)}
        torch_load = time.perf_counter() - t0
        forward = torch_layer(torch, W, c)
        for T in a.tokens:
            inputs = gen_layer.write_inputs(c, T, os.path.join(cdir, "inputs"))
            x, cos, sin = (torch.from_numpy(np.load(p)) for p in inputs)
            for n in a.threads:
                torch.set_num_threads(n)
                if blas:
                    blas[1](n)
                outdir = os.path.join(cdir, f"out.T{T}.n{n}")
                tx_rounds, torch_rounds = [], []
                ref = None
                for _ in range(a.rounds):
                    times = []
                    with torch.inference_mode():
                        for i in range(a.warmup + a.reps):
                            s = time.perf_counter()
                            ref = forward(x, cos, sin)
                            if i >= a.warmup:
                                times.append(time.perf_counter() - s)
                    torch_rounds.append(statistics.median(times))
                    tx_rounds.append(run_tx(a, module, wdir, inputs, outdir, n,
                                            a.warmup + a.reps))
                out = np.load(os.path.join(outdir, "forward.0.npy"))
                r = ref.numpy()
                rel = float(np.abs(out - r).max() / max(np.abs(r).max(), 1e-30))
                ok = rel <= a.tolerance and np.isfinite(out).all()
                failed |= not ok
                med = lambda i: statistics.median(t[i] for t in tx_rounds)
                tx_ms, torch_ms = 1e3 * med(3), 1e3 * statistics.median(torch_rounds)
                print(f"| {cname:7s} | {T:4d} | {n:3d} | {med(0):12.3f} | "
                      f"{med(1):12.3f} | {torch_load:12.3f} | "
                      f"{1e3 * med(2):11.3f} | {tx_ms:8.3f} | {torch_ms:9.3f} | "
                      f"{tx_ms / torch_ms:8.2f} | {rel:8.1e} | "
                      f"{'ok' if ok else 'FAIL':5s} |", flush=True)
    print("check: " + ("FAIL" if failed else "PASS"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

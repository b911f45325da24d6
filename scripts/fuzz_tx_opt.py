#!/usr/bin/env python3
"""Fuzzes tx-opt: mutated test inputs x random pass pipelines.

Each case takes one input from the test suite (a `// -----` split of a
test/**/*.mlir file, comments removed), applies 0-3 random mutations (delete,
duplicate or swap lines, change numbers, types or keywords, truncate), draws a
pipeline of 1-3 passes from the tx passes and pipelines that `tx-opt --help`
lists (plus a few upstream ones) with random option values (valid ones, zero,
negative, huge, garbage) in a random nesting (`builtin.module(...)`,
`builtin.module(func.func(...))`, `any(...)`, nested modules, or plain
`--pass` flags), runs tx-opt under a timeout and a memory limit, and
classifies the run:

  ok         exit 0 and the printed IR parses and verifies again (tx-opt)
  diagnosed  exit != 0 with an `error:` diagnostic and no crash
  crash      a signal, "LLVM ERROR", "PLEASE submit a bug report", a stack
             dump or an assertion
  hang       the timeout expired
  invalid    exit 0 but the printed IR does not parse or verify again
  silent     exit != 0 without any `error:` diagnostic (or LLVM's option
             parser's "for the --x option:" message, or MLIR's pass-option
             parser's "<Pass-Options-Parser>: no such option x")

Every crash/hang/invalid/silent case is saved (input, command, stderr;
reduced by deleting lines while the class and signature stay, when that is
cheap) under --out/<class>/<n>/. Cases matching an entry of
--known-failures (lines `class | regex | bug`, the regex searched in the
pipeline + stderr) are counted as known. The summary line:

  fuzz_tx_opt: N runs: A ok, B diagnosed, C crash, D hang, E invalid, F silent (K known); unexpected: U

Exit status: 0 when every crash/hang/invalid/silent case is known, 1
otherwise, 2 on a usage error. The same --seed and --count always give the
same cases; --time stops early (for long runs).
"""
import argparse
import glob
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BAD = ["crash", "hang", "invalid", "silent"]
CLASSES = ["ok", "diagnosed"] + BAD

# A few upstream passes to compose with (they run on anything tx emits).
UPSTREAM = ["canonicalize", "cse", "symbol-dce", "inline", "sccp",
            "loop-invariant-code-motion", "convert-scf-to-cf",
            "expand-strided-metadata", "lower-affine"]

CRASH_MARKS = ["LLVM ERROR", "PLEASE submit a bug report", "Stack dump:",
               "Assertion", "terminate called", "Segmentation fault",
               "UNREACHABLE executed", "double free", "AddressSanitizer"]


# --- passes and their options, from tx-opt --help ---------------------------
def parse_help(tx_opt):
    """{pass: [(option, type, [enum values])]} for tx-* passes/pipelines."""
    out = subprocess.run(tx_opt + ["--help"], capture_output=True, text=True,
                         timeout=60).stdout
    passes = {}
    current = None
    in_passes = False
    for line in out.splitlines():
        if line.strip() in ("Passes:", "Pass Pipelines:"):
            in_passes = True
            continue
        if not in_passes:
            continue
        m = re.match(r"^      --([\w.-]+)\s", line)
        if m:
            name = m.group(1)
            current = name if name.startswith("tx-") or name in UPSTREAM else None
            if current:
                passes[current] = []
            continue
        m = re.match(r"^        --([\w.-]+)(?:=<([\w:-]+)>)?\s", line)
        if m and current:
            passes[current].append([m.group(1), m.group(2) or "bool", []])
            continue
        m = re.match(r"^\s+=([\w.-]+)\s", line)
        if m and current and passes[current]:
            passes[current][-1][2].append(m.group(1))
            continue
        if re.match(r"^  --", line):   # the next top-level option: done
            in_passes = False
    return passes


NUMBERS = ["0", "-1", "1", "2", "3", "7", "16", "64", "1000", "2147483647",
           "2147483648", "-2147483648", "4294967296", "9223372036854775807",
           "-9223372036854775808", "99999999999999999999"]
WORDS = ["", "x", "q_proj", "k_proj", "v_proj", "gate_proj", "-", "auto",
         "off", "sm_80", "sm_90", "sm_90a", "isa", "bin", "fatbin", "tf32",
         "polynomial", "libdevice", "/nonexistent/dir", "%", "{", "a b"]


def option_value(rng, typ, enums):
    r = rng.random()
    if enums and r < 0.7:
        return rng.choice(enums)
    t = typ.lower()
    if t in ("bool", "boolean") and r < 0.8:
        return rng.choice(["true", "false", "1", "0", "maybe"])
    if any(k in t for k in ("int", "long", "uint", "ulong", "number")) and r < 0.85:
        if rng.random() < 0.3:   # lists (gemm-tile=4,8,...)
            return ",".join(rng.choice(NUMBERS[:9]) for _ in range(rng.randint(0, 4)))
        return rng.choice(NUMBERS)
    if r < 0.5:
        return rng.choice(NUMBERS)
    return rng.choice(WORDS)


def quote_value(v):
    # Pass-pipeline syntax: values with spaces or braces need quoting.
    return "'" + v + "'" if re.search(r"[\s{}=,]", v) and "," not in v else v


def random_pass(rng, passes, names):
    name = rng.choice(names)
    opts = passes.get(name, [])
    chosen = []
    if opts and rng.random() < 0.7:
        for opt, typ, enums in rng.sample(opts, min(len(opts), rng.randint(1, 3))):
            chosen.append(f"{opt}={quote_value(option_value(rng, typ, enums))}")
    if rng.random() < 0.03:
        chosen.append("no-such-option=1")
    return name, chosen


def random_pipeline(rng, passes):
    """(args for tx-opt, pipeline text for reports)."""
    tx = sorted(p for p in passes if p.startswith("tx-"))
    up = sorted(p for p in passes if not p.startswith("tx-"))
    elems = []
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        pool = tx if (rng.random() < 0.8 or not up) else up
        elems.append(random_pass(rng, passes, pool))
    def text(e):
        name, opts = e
        return name + ("{" + " ".join(opts) + "}" if opts else "")
    nesting = rng.choice(["module", "module", "func", "func", "any",
                          "nested-module", "mixed", "flags"])
    if nesting == "flags":
        args = []
        for name, opts in elems:
            args.append(f"--{name}" + ("=" + " ".join(opts) if opts else ""))
        return args, " ".join(args)
    body = ",".join(text(e) for e in elems)
    if nesting == "module":
        pipe = f"builtin.module({body})"
    elif nesting == "func":
        pipe = f"builtin.module(func.func({body}))"
    elif nesting == "any":
        pipe = f"builtin.module(any({body}))"
    elif nesting == "nested-module":
        pipe = f"builtin.module(builtin.module({body}))"
    else:
        parts = [(f"func.func({text(e)})" if rng.random() < 0.5 else text(e))
                 for e in elems]
        pipe = "builtin.module(" + ",".join(parts) + ")"
    return [f"--pass-pipeline={pipe}"], pipe


# --- inputs and mutations ---------------------------------------------------
def load_seeds(roots):
    cases = []
    for root in roots:
        files = sorted(glob.glob(os.path.join(root, "**", "*.mlir"), recursive=True))
        for f in files:
            try:
                text = open(f, encoding="utf-8").read()
            except (OSError, UnicodeDecodeError):
                continue
            for part in re.split(r"^// -----.*$", text, flags=re.M):
                lines = [l for l in part.splitlines()
                         if not l.lstrip().startswith("//") and l.strip()]
                if lines and len(lines) < 400:
                    cases.append((os.path.relpath(f), "\n".join(lines) + "\n"))
    return cases


TYPES = ["f32", "f16", "bf16", "i32", "i1", "index", "f64", "i64"]
KEYWORDS = ["tx.linear", "tx.unary", "tx.binary", "tx.slice", "tx.view",
            "tx.alias", "tx.transpose", "tx.guard", "tx.layer_ref",
            "tx.rmsnorm", "tx.all_reduce", "scf.if", "scf.for", "func.call",
            "memref.subview", "is_not_none", "ne_none", "truthy", "silu",
            "relu", "mul", "add", "dim", "offset", "size", "bias", "group"]


def mutate(rng, text):
    lines = text.splitlines()
    kind = rng.choice(["delete", "duplicate", "swap", "number", "number",
                       "type", "keyword", "ssa", "truncate", "dim"])
    if not lines:
        return text
    i = rng.randrange(len(lines))
    if kind == "delete":
        del lines[i]
    elif kind == "duplicate":
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "number":
        nums = list(re.finditer(r"(?<![\w%#@.])-?\d+(\.\d+)?", lines[i]))
        if nums:
            m = rng.choice(nums)
            lines[i] = lines[i][:m.start()] + rng.choice(NUMBERS + ["0.0", "-1.5", "1e39", "nan"]) + lines[i][m.end():]
    elif kind == "type":
        toks = list(re.finditer(r"\b(f32|f16|bf16|i32|i1|index|i64)\b", lines[i]))
        if toks:
            m = rng.choice(toks)
            lines[i] = lines[i][:m.start()] + rng.choice(TYPES) + lines[i][m.end():]
    elif kind == "dim":
        toks = list(re.finditer(r"(\?|\d+)x", lines[i]))
        if toks:
            m = rng.choice(toks)
            new = "?" if m.group(1) != "?" else rng.choice(["0", "1", "3", "4096"])
            lines[i] = lines[i][:m.start()] + new + "x" + lines[i][m.end():]
    elif kind == "keyword":
        present = [k for k in KEYWORDS if k in lines[i]]
        if present:
            lines[i] = lines[i].replace(rng.choice(present), rng.choice(KEYWORDS), 1)
    elif kind == "ssa":
        names = sorted(set(re.findall(r"%[\w.$-]+", text)))
        used = list(re.finditer(r"%[\w.$-]+", lines[i]))
        if names and used:
            m = rng.choice(used)
            lines[i] = lines[i][:m.start()] + rng.choice(names) + lines[i][m.end():]
    elif kind == "truncate":
        cut = rng.randrange(len(text) + 1)
        return text[:cut]
    return "\n".join(lines) + "\n"


# --- running and classifying ------------------------------------------------
def limit_memory(mb):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


# The working folder of every tool run (see run_tool).
SCRATCH = tempfile.mkdtemp(prefix="tx-fuzz-cwd-")


def run_tool(cmd, text, timeout, mem_mb):
    """(returncode or None on timeout, stdout, stderr). Runs in a scratch
    folder: fuzzed options such as `output=...` write files where it runs."""
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=limit_memory(mem_mb),
                         cwd=SCRATCH)
    try:
        out, err = p.communicate(text.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out.decode(errors="replace"), err.decode(errors="replace")
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def signature(cls, err):
    """A short text that identifies a failure (for reduction and reports)."""
    if cls == "hang":
        return "timeout"
    for line in err.splitlines():
        if "LLVM ERROR" in line or "Assertion" in line or "UNREACHABLE" in line:
            return re.sub(r"0x[0-9a-f]+", "", line.strip())[:200]
    frames = re.findall(r"#\d+ 0x[0-9a-f]+ (?:in )?(\S+)", err)
    frames = [f for f in frames if not re.search(
        r"PrintStackTrace|SignalHandler|RunSignalHandlers|__restore_rt|"
        r"^\(|killpg|raise|abort|libc", f)]
    if frames:
        return " <- ".join(frames[:3])[:300]
    errs = [l for l in err.splitlines() if "error:" in l]
    if errs:
        return re.sub(r"^[^:]*:\d+:\d+: ", "", errs[0])[:200]
    return err.strip().splitlines()[-1][:200] if err.strip() else "no output"


def classify(tool, args, text, timeout, mem_mb):
    # The IR goes to a file: some passes print reports (JSON, analyses) on
    # stdout, which is not IR.
    fd, path = tempfile.mkstemp(suffix=".mlir", prefix="fuzz-")
    os.close(fd)
    try:
        rc, _, err = run_tool(tool + args + ["-o", path], text, timeout, mem_mb)
        out = ""
        if os.path.exists(path):   # tx-opt removes it when it fails
            out = open(path, encoding="utf-8", errors="replace").read()
    finally:
        if os.path.exists(path):
            os.unlink(path)
    if rc is None:
        return "hang", out, err
    if rc < 0 or any(m in err for m in CRASH_MARKS):
        return "crash", out, err
    if rc != 0:
        # LLVM's option parser names the option and the bad value in its own
        # format ("tx-opt: for the --x option: 'v' is invalid ..."), without
        # an `error:` prefix, and so does MLIR's pass-option parser
        # ("<Pass-Options-Parser>: no such option x"): clear messages, so
        # diagnosed.
        told = ("error:" in err
                or re.search(r": for the -+[\w-]+ option: ", err)
                or "<Pass-Options-Parser>: " in err)
        return ("diagnosed" if told else "silent"), out, err
    # Printed IR must parse and verify again.
    rc2, _, err2 = run_tool(tool, out, timeout, mem_mb)
    if rc2 is None or rc2 != 0:
        return "invalid", out, err + "\n--- re-parsing the output:\n" + (err2 or "timeout")
    return "ok", out, err


def reduce_input(tool, args, text, cls, sig, timeout, mem_mb, budget_s):
    """Deletes chunks of lines while the class and signature stay."""
    lines = text.splitlines()
    deadline = time.time() + budget_s
    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and time.time() < deadline:
        i, changed = 0, False
        while i < len(lines) and time.time() < deadline:
            cand = lines[:i] + lines[i + chunk:]
            c, _, e = classify(tool, args, "\n".join(cand) + "\n",
                               timeout, mem_mb)
            if c == cls and signature(c, e) == sig:
                lines, changed = cand, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return "\n".join(lines) + "\n"


def load_known(path):
    known = []
    if not path:
        return known
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|", 2)]
        if len(parts) != 3 or parts[0] not in BAD:
            sys.exit(f"{path}:{n}: expected 'class | regex | bug' with class "
                     f"one of {', '.join(BAD)}")
        known.append((parts[0], re.compile(parts[1]), parts[2]))
    return known


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tx-opt", default="tx-opt",
                    help="the tool (a command line: 'python3 fake.py' works)")
    ap.add_argument("--inputs", action="append",
                    help="folder searched for *.mlir seeds (repeatable; "
                         "default: the repository's test/)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=200, help="cases to run")
    ap.add_argument("--time", type=float, default=0,
                    help="stop after this many seconds (0: no limit)")
    ap.add_argument("--timeout", type=float, default=20,
                    help="seconds per tx-opt run before it counts as a hang")
    ap.add_argument("--mem-mb", type=int, default=4096,
                    help="address-space limit of each tx-opt run")
    ap.add_argument("--out", default="fuzz-out")
    ap.add_argument("--known-failures")
    ap.add_argument("--reduce-seconds", type=float, default=20,
                    help="time spent reducing each new failure (0: none)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    tool = shlex.split(args.tx_opt)
    tool[0] = shutil.which(tool[0]) or tool[0]
    if os.sep in tool[0]:
        tool[0] = os.path.abspath(tool[0])  # runs happen in a scratch folder
    if not tool or not os.access(tool[0], os.X_OK):
        print(f"fuzz_tx_opt: cannot run '{args.tx_opt}'", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seeds = load_seeds(args.inputs or [os.path.join(root, "test")])
    if not seeds:
        print("fuzz_tx_opt: no *.mlir inputs found", file=sys.stderr)
        return 2
    passes = parse_help(tool)
    if not any(p.startswith("tx-") for p in passes):
        print("fuzz_tx_opt: no tx passes in 'tx-opt --help'", file=sys.stderr)
        return 2
    known = load_known(args.known_failures)
    os.makedirs(args.out, exist_ok=True)

    counts = {c: 0 for c in CLASSES}
    known_hits, unexpected, runs = 0, 0, 0
    seen = {}   # (class, signature) -> saved folder
    start = time.time()
    for i in range(args.count):
        if args.time and time.time() - start > args.time:
            break
        rng = random.Random(args.seed * 1000003 + i)
        src, text = rng.choice(seeds)
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            text = mutate(rng, text)
        targs, pipe = random_pipeline(rng, passes)
        cls, out, err = classify(tool, targs, text, args.timeout, args.mem_mb)
        runs += 1
        counts[cls] += 1
        if args.verbose:
            print(f"{i}: {cls}: {src}: {pipe}", flush=True)
        if cls not in BAD:
            continue
        sig = signature(cls, err)
        hit = next((k for k in known if k[0] == cls and
                    (k[1].search(pipe + "\n" + err) or k[1].search(sig))), None)
        if hit:
            known_hits += 1
        else:
            unexpected += 1
        key = (cls, sig, pipe if cls != "crash" else "")
        if key in seen:
            continue
        d = os.path.join(args.out, cls, str(len(seen)))
        seen[key] = d
        os.makedirs(d, exist_ok=True)
        small = text
        if args.reduce_seconds > 0 and cls != "hang":
            small = reduce_input(tool, targs, text, cls, sig, args.timeout,
                                 args.mem_mb, args.reduce_seconds)
        with open(os.path.join(d, "input.mlir"), "w") as f:
            f.write(small)
        with open(os.path.join(d, "original.mlir"), "w") as f:
            f.write(text)
        with open(os.path.join(d, "stderr.txt"), "w") as f:
            f.write(err)
        with open(os.path.join(d, "cmd.sh"), "w") as f:
            q = " ".join("'" + a.replace("'", "'\\''") + "'" for a in targs)
            f.write(f"tx-opt {q} input.mlir\n")
        with open(os.path.join(d, "info.json"), "w") as f:
            json.dump({"class": cls, "signature": sig, "pipeline": pipe,
                       "seed_file": src, "case": i, "seed": args.seed,
                       "known": hit[2] if hit else None}, f, indent=1)
        print(f"{cls.upper()}{' (known: ' + hit[2] + ')' if hit else ''}: "
              f"{pipe} on {src} (case {i}): {sig} -> {d}", flush=True)

    print(f"fuzz_tx_opt: {runs} runs: {counts['ok']} ok, "
          f"{counts['diagnosed']} diagnosed, {counts['crash']} crash, "
          f"{counts['hang']} hang, {counts['invalid']} invalid, "
          f"{counts['silent']} silent ({known_hits} known); "
          f"unexpected: {unexpected}; {time.time() - start:.0f} s")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())

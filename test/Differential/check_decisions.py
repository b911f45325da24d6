#!/usr/bin/env python3
"""Checks the fusion's decisions against the `// must-not-fuse: A B` lines
that gen_adversarial.py writes (two layers whose top-level calls have a
write of their input's storage between them).

Runs `tx-opt <file> <pipeline>` on each module and reads its remarks; a
`fused 'A', ..., 'B' ...` remark naming both layers of a forbidden pair is a
missed write, whether or not it changes the numbers (a write of the values
already there, a write tx-difftest's inputs cannot tell apart, a module the
CPU cannot run).

Usage: check_decisions.py --tx-opt PATH [--pipeline ARG] FILE...
Prints `N modules, F fused groups, P forbidden pairs, W wrong`; exit status
1 when W > 0, 2 when tx-opt fails.
"""
import argparse
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tx-opt", required=True)
    ap.add_argument("--pipeline", default="-tx-fusion")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    fused = pairs = wrong = 0
    for path in args.files:
        with open(path) as f:
            text = f.read()
        forbidden = [tuple(m.groups()) for m in
                     re.finditer(r"^// must-not-fuse: (\S+) (\S+)$", text, re.M)]
        pairs += len(forbidden)
        out = subprocess.run([args.tx_opt, path, args.pipeline, "-o", "/dev/null"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.stderr.write(f"{path}: tx-opt failed:\n{out.stderr}")
            return 2
        for m in re.finditer(r"remark: fused ((?:'[^']*'(?:, )?)+) into", out.stderr):
            fused += 1
            names = set(re.findall(r"'([^']*)'", m.group(1)))
            for a, b in forbidden:
                if a in names and b in names:
                    wrong += 1
                    print(f"WRONG {path}: fused '{a}' and '{b}' across a write "
                          "of their input")
    print(f"{len(args.files)} modules, {fused} fused groups, {pairs} forbidden "
          f"pairs, {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

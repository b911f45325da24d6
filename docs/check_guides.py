#!/usr/bin/env python3
"""Runs the snippets of the guides so that they cannot rot.

Fenced blocks whose info string says
  ```sh test        run with bash (-e -o pipefail) from the source root
  ```python test    run with this Python
  ```<lang> from=<path>   must appear verbatim in <path> (a file that the
                          test suite builds and runs, e.g. test/Install/)
with PATH starting at <build>/bin, PYTHONPATH=<build>/python_packages and
TX_BUILD=<build>. Usage: check_guides.py --build <dir> <guide.md>...
"""

import argparse
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.M | re.S)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("guides", nargs="+")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.abspath(args.build)
    env = dict(os.environ)
    env["PATH"] = os.path.join(build, "bin") + os.pathsep + env["PATH"]
    env["PYTHONPATH"] = os.path.join(build, "python_packages")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TX_BUILD"] = build
    failures = ran = 0
    for guide in args.guides:
        text = open(guide, encoding="utf-8").read()
        for m in FENCE.finditer(text):
            lang, attrs, body = m[1], m[2].split(), m[3]
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d" % (os.path.relpath(guide, root), line)
            sources = [a[5:] for a in attrs if a.startswith("from=")]
            if sources:
                path = os.path.join(root, sources[0])
                if body.strip() not in open(path, encoding="utf-8").read():
                    print("%s: FAIL: block is not in %s" % (where, sources[0]))
                    failures += 1
                else:
                    print("%s: ok (in %s)" % (where, sources[0]))
                ran += 1
                continue
            if "test" not in attrs:
                continue
            if lang == "sh":
                cmd = ["bash", "-e", "-o", "pipefail", "-c", body]
            elif lang == "python":
                cmd = [sys.executable, "-c", body]
            else:
                print("%s: FAIL: cannot run a %s block" % (where, lang))
                failures += 1
                continue
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True,
                                  text=True)
            ran += 1
            if proc.returncode != 0:
                failures += 1
                print("%s: FAIL (exit %d)\n%s%s" % (where, proc.returncode,
                                                   proc.stdout, proc.stderr))
            else:
                print("%s: ok" % where)
    print("ran %d snippets, %d failed" % (ran, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

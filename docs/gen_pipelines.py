#!/usr/bin/env python3
"""Writes the tx pass pipelines and their options, as `tx-opt --help` lists
them, as Markdown: gen_pipelines.py <tx-opt> <output.md>."""

import re
import subprocess
import sys


def main(tx_opt, output):
    help_text = subprocess.run([tx_opt, "--help"], check=True,
                               capture_output=True, text=True).stdout
    lines = help_text.splitlines()
    # Top-level entries are `      --name  - description`; their options are
    # indented further. Keep the tx- entries that are pipelines.
    entry = re.compile(r"^(\s+)--(tx-[\w-]+)\s+- (.*)$")
    out = ["# tx pass pipelines", "",
           "Generated from `tx-opt --help` by docs/gen_pipelines.py.", ""]
    in_pipelines = False
    current_indent = None
    for line in lines:
        if line.strip() == "Pass Pipelines:":
            in_pipelines = True
            continue
        if not in_pipelines:
            continue
        m = entry.match(line)
        if m and (current_indent is None or len(m[1]) <= current_indent):
            current_indent = len(m[1])
            if out[-1]:
                out.append("")
            out += ["## `%s`" % m[2], "", m[3].strip(), ""]
            continue
        if m is None and re.match(r"^\s+--(?!tx-)[\w-]+\s+- ", line) and \
                current_indent is not None and \
                len(line) - len(line.lstrip()) <= current_indent:
            current_indent = None  # An upstream pipeline: skip it.
            continue
        if current_indent is not None:
            opt = re.match(r"^\s+--([\w-]+)(=<[^>]*>)?\s+- (.*)$", line)
            # The values of an enum option: `    =name   -   description`,
            # indented less than the option.
            value = re.match(r"^\s+=([\w-]+)\s+- (.*)$", line)
            if opt:
                out.append("* `%s%s`: %s" % (opt[1], opt[2] or "",
                                             opt[3].strip()))
            elif value:
                out.append("  * `%s`: %s" % (value[1], value[2].strip()))
            elif line.strip() and not line.startswith(" " * (current_indent + 1)):
                current_indent = None
    with open(output, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

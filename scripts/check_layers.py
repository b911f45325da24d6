#!/usr/bin/env python3
"""Checks that tx's include graph runs one way, layer by layer:

  Dialect <- Analysis <- Transforms <- Conversion <- Codegen <- Pipelines
          <- Registration <- Execution, CAPI <- tools

A file may include headers of its own layer or of a lower one; an include of
a higher layer is an error, printed as `file:line: error: ...`. Within one
layer, a cycle between components (a header and the source files of the
same name, e.g. Weights.h + Weights.cpp) is also an error. So is, in lib/, a
pipeline parsed from text or a pass looked up by name (parsePassPipeline,
PassInfo::lookup, PassPipelineInfo::lookup): lib/ builds pipelines with the
typed builders; only tools/ parse what their user typed. Usage:

  check_layers.py [ROOT]      (default: the repository holding this script)

Exit status 0 when the graph is clean, 1 otherwise.
"""

import os
import re
import sys

# Rank of each layer; a file may include ranks <= its own.
LAYERS = {
    "Dialect": 0,
    "Analysis": 1,
    "Transforms": 2,
    "Conversion": 3,
    "Codegen": 4,
    "Pipelines": 5,
    "Registration": 6,
    "Execution": 7,
    "CAPI": 8,
    "tools": 9,
}

# Top-level headers of include/TxDialect that are not the dialect's own.
TOP_LEVEL = {"InitAllTx.h": "Registration"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"(TxDialect[^"]*)"')
SOURCES = (".h", ".cpp", ".td", ".inc", ".c")
BY_NAME = re.compile(r"\b(parsePassPipeline|PassInfo::lookup|"
                     r"PassPipelineInfo::lookup)\b")


def layer_of_header(path):
    """The layer of an include path `TxDialect/...` (or TxDialect-c/...)."""
    parts = path.split("/")
    if parts[0] == "TxDialect-c":
        return "CAPI"
    if len(parts) == 2:
        return TOP_LEVEL.get(parts[1], "Dialect")
    return parts[1] if parts[1] in LAYERS else None


def layer_of_file(rel):
    """The layer of a repository file, or None when it is not layered."""
    parts = rel.split("/")
    if parts[0] == "include" and len(parts) > 1:
        return layer_of_header("/".join(parts[1:]))
    if parts[0] == "lib" and len(parts) > 1:
        return parts[1] if parts[1] in LAYERS else None
    if parts[0] == "tools":
        return "tools"
    return None


def component_of(path):
    """A header or source file's component: its base name."""
    return os.path.splitext(os.path.basename(path))[0]


def scan(root):
    errors = []
    edges = {}
    for top in ("include", "lib", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCES):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                layer = layer_of_file(rel)
                if layer is None:
                    continue
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        named = BY_NAME.search(line)
                        if named and top == "lib":
                            errors.append(
                                "%s:%d: error: %s in lib/ (build pipelines "
                                "with the typed builders)"
                                % (rel, number, named.group(1)))
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        target_layer = layer_of_header(target)
                        if target_layer is None:
                            errors.append("%s:%d: error: '%s' is in no layer"
                                          % (rel, number, target))
                            continue
                        if LAYERS[target_layer] > LAYERS[layer]:
                            errors.append(
                                "%s:%d: error: %s includes '%s' of the higher "
                                "layer %s" % (rel, number, layer, target,
                                              target_layer))
                        if target_layer == layer and top != "tools":
                            # The dialect's ops, types and attributes are one
                            # component (ODS: the dialect registers its ops).
                            if layer == "Dialect":
                                continue
                            src = "%s/%s" % (layer, component_of(rel))
                            dst = "%s/%s" % (layer, component_of(target))
                            if src != dst:
                                edges.setdefault(src, {}).setdefault(
                                    dst, "%s:%d" % (rel, number))
    errors += cycles(edges)
    return errors


def cycles(edges):
    """Cycles between folders of one layer, each reported once."""
    found, seen = [], set()

    def visit(node, stack):
        for nxt, where in sorted(edges.get(node, {}).items()):
            if nxt in stack:
                cycle = stack[stack.index(nxt):] + [nxt]
                key = frozenset(cycle)
                if key not in seen:
                    seen.add(key)
                    found.append("%s: error: components include each other: %s"
                                 % (where, " -> ".join(cycle)))
            else:
                visit(nxt, stack + [nxt])

    for start in sorted(edges):
        visit(start, [start])
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    errors = scan(root)
    for e in errors:
        print(e)
    print("%d layering error%s" % (len(errors), "" if len(errors) == 1 else "s"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

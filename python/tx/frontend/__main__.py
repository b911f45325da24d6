"""python3 -m tx.frontend modeling.py --config config.json -o model.mlir"""

import argparse
import sys

from . import import_file, table
from .errors import FrontendError


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python3 -m tx.frontend",
        description="Import an HF-style PyTorch modeling file as tx IR.")
    p.add_argument("modeling", help="the modeling .py file")
    p.add_argument("--config", required=True, help="config.json")
    p.add_argument("-o", "--output", default="-", help="output .mlir (default: stdout)")
    p.add_argument("--entry", help="class to import (default: the one no other class uses)")
    p.add_argument("--layer-idx", type=int, default=0, help="layer_idx of the constructor")
    p.add_argument("--prefix", help="checkpoint name prefix ({layer_idx} is substituted)")
    p.add_argument("--flag", action="append", default=[], metavar="ATTR",
                   help="bool module attribute imported as an i1 argument (repeatable)")
    p.add_argument("--norm", action="append", default=[], metavar="CLASS[=KIND]",
                   help="treat CLASS(hidden_size, eps=...) as an RMSNorm, or with "
                        "=layernorm as a LayerNorm with weight and bias (repeatable)")
    p.add_argument("--helper", action="append", default=[], metavar="NAME=KNOWN",
                   help="treat function NAME as the table's KNOWN (repeatable)")
    p.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32",
                   help="element type of the weights and activations (default f32)")
    p.add_argument("--mask", choices=["causal", "none"], default="causal",
                   help="the forward's attention_mask: the causal mask (default) or None")
    # Testing only: break the import on purpose, to show the tests catch it.
    p.add_argument("--test-break", choices=["fold-guards", "swap-rope", "split-order"],
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    try:
        helpers = {}
        for pair in args.helper:
            name, _, known = pair.partition("=")
            if table.lookup_function(known) is None:
                raise FrontendError("--helper %s: no function '%s' in the table (known: %s)"
                                    % (pair, known, ", ".join(sorted(table.FUNCTIONS))),
                                    path="<command line>")
            helpers[name] = known
        text = import_file(args.modeling, args.config, entry=args.entry,
                           layer_idx=args.layer_idx, prefix=args.prefix, flags=args.flag,
                           norms=args.norm, helpers=helpers, dtype=args.dtype, mask=args.mask,
                           test_break=args.test_break)
    except FrontendError as err:
        print(err, file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

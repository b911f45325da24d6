# A stand-in for tx-opt that fails on purpose, so that fuzz.test shows the
# fuzzer detects and reports each bad class: it aborts on inputs holding
# `tx.linear`, loops forever on `tx.slice`, prints unparsable IR on
# `tx.unary`, and echoes everything else.
import os
import sys

args = sys.argv[1:]
if "--help" in args:
    print("  Available Dialects: builtin\n"
          "  Passes:\n"
          "      --tx-fake                                 -   A fake pass\n"
          "        --level=<long>                          - A number\n"
          "  --pass-pipeline=<string>                      - Pipeline\n")
    sys.exit(0)
out = sys.stdout
if "-o" in args:
    out = open(args[args.index("-o") + 1], "w")
    args = args[:args.index("-o")]
text = sys.stdin.read()
if "BROKEN" in text:                       # the printed IR, read back
    print("error: does not parse", file=sys.stderr)
    sys.exit(1)
if "tx.linear" in text and args:
    sys.stderr.write("Stack dump:\n #0 0x0000 fakeCrash()\n")
    sys.stderr.flush()
    os.abort()
if "tx.slice" in text and args:
    while True:
        pass
if "tx.unary" in text and args:
    out.write("BROKEN\n")
    sys.exit(0)
out.write(text)

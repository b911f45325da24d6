#!/usr/bin/env bash
# Runs the bundled Llama-style decoder layer on the CPU, unfused and (when
# this build has the tx-fusion pipeline) fused, on the same seeded inputs
# and weights, and checks that the outputs match.
#
#   scripts/run-example.sh [example.mlir] [tokens]
#
# Assumes a build in ${BUILD_DIR:-build} with tx-run and tx-opt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
example=${1:-$root/examples/llama_decoder_layer.mlir}
tokens=${2:-64}
run="$BUILD_DIR/bin/tx-run"
opt="$BUILD_DIR/bin/tx-opt"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== $(basename "$example"): unfused (tx-to-cpu), $tokens tokens"
"$run" "$example" -e forward --tokens "$tokens" --seed 0 --repeat 20 \
  --output-dir "$out/unfused" --dump-inputs

if ! "$opt" --help | grep -q -- '--tx-fusion '; then
  echo "(this build has no tx-fusion pipeline: fused run skipped)"
  exit 0
fi

echo "== fused (tx-fusion, then tx-to-cpu): same inputs, same checkpoint"
"$run" "$example" -e forward --pipeline='tx-fusion,tx-to-cpu' --seed 0 \
  --repeat 20 --output-dir "$out/fused" \
  --inputs "$out/unfused/forward.input0.npy,$out/unfused/forward.input1.npy,$out/unfused/forward.input2.npy"

echo "== fused layers (the merged projections and their stacking maps)"
"$opt" "$example" --tx-fusion 2>/dev/null | grep 'tx.layer' || true

# A Python with numpy (Debian's python3-numpy may not be the first python3).
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$p" -c 'import numpy' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "run-example.sh: needs python3 with numpy" >&2; exit 1; }
"$py" - "$out" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
a = np.load(f"{d}/unfused/forward.0.npy")
b = np.load(f"{d}/fused/forward.0.npy")
diff = float(np.max(np.abs(a - b)))
exact = np.array_equal(a, b)
print(f"== outputs {'match exactly' if exact else 'match'}: shape {a.shape}, "
      f"max |unfused - fused| = {diff:.3g}")
sys.exit(0 if diff <= 1e-5 * max(1.0, float(np.max(np.abs(a)))) else 1)
PY

#!/usr/bin/env bash
# The main job on a bundled example: sets tx up (scripts/setup.sh), then
# compiles the Llama-style decoder layer for the CPU and runs it in-process,
# unfused and after the fusion pipeline (QKV and gate/up merged), on the same
# inputs and checkpoint, and prints that the outputs match, with both timings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export BUILD_DIR
bash "$root/scripts/setup.sh"
echo "== what the fusion pipeline does to the example (remarks)"
"$BUILD_DIR/bin/tx-opt" "$root/examples/llama_decoder_layer.mlir" -tx-fusion -o /dev/null
bash "$root/scripts/run-example.sh" "$root/examples/llama_decoder_layer.mlir" "${TOKENS:-64}"

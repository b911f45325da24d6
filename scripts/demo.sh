#!/usr/bin/env bash
# The main job on a bundled example: sets tx up (scripts/setup.sh), then
# parses, verifies and prints the Llama decoder layer and the Gemma 4
# attention block through tx-opt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export BUILD_DIR
bash "$root/scripts/setup.sh"
for example in llama_decoder_layer gemma4_attention; do
  echo "== examples/$example.mlir: parsed, verified, printed by tx-opt"
  "$BUILD_DIR/bin/tx-opt" "$root/examples/$example.mlir"
done

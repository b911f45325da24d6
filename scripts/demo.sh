#!/usr/bin/env bash
# The main job, started the way a user starts: from a PyTorch modeling file
# and its config.json. Sets tx up (scripts/setup.sh), imports the Llama-style
# decoder layer of test/Frontend/Inputs/modeling_llama.py with tx.frontend,
# prints what the fusion does to it (remarks point at the Python lines), and
# runs it on the CPU in-process, unfused and fused, on the same inputs and
# checkpoint, with both timings. Where PyTorch is installed (python3-torch)
# the layer also runs in PyTorch on random weights saved as
# model.safetensors, and tx's outputs are compared with PyTorch's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export BUILD_DIR
bash "$root/scripts/setup.sh"

inputs=$root/test/Frontend/Inputs
modeling=$inputs/modeling_llama.py
config=$inputs/llama_config.json
tokens=${TOKENS:-64}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export PYTHONPATH="$BUILD_DIR/python_packages${PYTHONPATH:+:$PYTHONPATH}"
py=/usr/bin/python3
[ -x "$py" ] || py=python3

echo "== import: python3 -m tx.frontend $(basename "$modeling") --config $(basename "$config") --entry LlamaDecoderLayer"
"$py" -m tx.frontend "$modeling" --config "$config" --entry LlamaDecoderLayer \
  -o "$out/layer.mlir"
grep -E '^  tx\.(layer|param)' "$out/layer.mlir" | sed 's/^ */   /'

echo "== what the fusion pipeline does to it (remarks)"
"$BUILD_DIR/bin/tx-opt" "$out/layer.mlir" -tx-fusion -o /dev/null

if "$py" -c 'import torch, numpy' 2>/dev/null; then
  echo "== PyTorch: the same source, random weights -> model.safetensors"
  "$py" "$inputs/torch_ref.py" run "$modeling" "$config" "$out" \
    --entry LlamaDecoderLayer --prefix model.layers.0. --tokens "$tokens"
  for pipeline in tx-to-cpu tx-fusion,tx-to-cpu; do
    echo "== tx-run --pipeline=$pipeline --weights model.safetensors"
    "$BUILD_DIR/bin/tx-run" "$out/layer.mlir" -e forward --pipeline="$pipeline" \
      --repeat 20 --weights "$out/model.safetensors" \
      --inputs "$out/x.npy,$out/cos.npy,$out/sin.npy" --output-dir "$out/$pipeline"
    "$py" "$inputs/torch_ref.py" compare "$out" "$out/$pipeline/forward.0.npy"
  done
else
  echo "(no PyTorch for $py: seeded weights, unfused vs fused only)"
  bash "$root/scripts/run-example.sh" "$out/layer.mlir" "$tokens"
fi

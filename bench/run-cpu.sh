#!/usr/bin/env bash
# Builds and runs the tx CPU benchmark (bench/cpu/tx-bench-cpu.cpp): fused vs
# unfused QKV and gate/up projections of a 4096-hidden Llama-like layer, and
# the tx GEMM throughput against OpenBLAS sgemm, side by side in one run.
#
#   bench/run-cpu.sh                 full run: M = 1,16,512,2048
#   bench/run-cpu.sh --quick         smoke test: M = 1,16, one repetition
#   bench/run-cpu.sh -- --m=1,16 --intermediate=5504   extra tx-bench-cpu flags
#
#   BUILD_DIR   build directory (default: <repo>/build), configured if needed
#   JOBS        parallel build jobs (default: 2)
#   TX_BENCH_SKIP_BUILD=1   run the binary already in BUILD_DIR (the lit test)
#
# The full run unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for its own
# process only: set on these machines, they select a slower OpenBLAS kernel
# (see shared TOOLCHAIN.md). --quick (tests, CI) leaves the environment alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
JOBS=${JOBS:-2}
LLVM=/usr/lib/llvm-22

quick=0
args=()
while (($#)); do
  case "$1" in
    --quick) quick=1; args+=(--quick) ;;
    --) shift; args+=("$@"); break ;;
    *) args+=("$1") ;;
  esac
  shift
done

if [ "${TX_BENCH_SKIP_BUILD:-0}" != 1 ]; then
  if [ ! -f "$BUILD_DIR/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$BUILD_DIR" \
      -DCMAKE_BUILD_TYPE=Release \
      -DMLIR_DIR=$LLVM/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=$LLVM/bin/lit
  fi
  ninja -C "$BUILD_DIR" -j"$JOBS" tx-bench-cpu
fi
bin="$BUILD_DIR/bin/tx-bench-cpu"
if [ ! -x "$bin" ]; then
  echo "run-cpu.sh: $bin not built (is libopenblas-dev installed?)" >&2
  exit 1
fi

if ((quick)); then
  exec "$bin" "${args[@]}"
fi
echo "command: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $bin ${args[*]}"
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bin" "${args[@]}"

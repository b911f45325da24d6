#!/usr/bin/env bash
# GPU checks and GEMM throughput of the tx-to-nvvm lowering, in one script.
#
#   bench/gpu.sh            on a GPU machine (one H200: well under 8 minutes)
#   bench/gpu.sh --offline  the steps that need no GPU (CI, machines without
#                           GPU), the correctness checks on the emulated
#                           CUDA device included
#   --no-build, --no-lit    skip those steps (the lit suite runs the offline
#                           script this way, inside an existing build)
#
# Steps: build; the GPU lit tests (PTX, ptxas, runtime); the benchmark GEMMs
# lowered to cubins with ptxas; the cuBLAS timer compiled with nvcc. With a
# GPU also: the runtime's device check, the Llama decoder layer (unfused and
# fused) on the GPU against the CPU result, and a table of the fused QKV and
# gate/up GEMMs (hidden 4096) against cuBLAS for decode (M=1, 16) and prefill
# (M=512, 2048) shapes, in bf16, f16 (tensor cores), tf32 and f32; each
# result checked exactly (bench/gpu/gemm.mlir.in); the decoder layer's
# end-to-end latency per call at 1, 16, 512 and 2048 tokens, eager and as a
# CUDA graph, beside the cuBLAS time of its GEMMs alone.
#
# Environment: EMU_SHAPES (the emulator's GEMM shapes, MxNxK, default
# "1x6144x4096 16x6144x4096"), BUILD_DIR (default build-gpu-bench), CUDA_HOME
# (/usr/local/cuda), LLVM_DIR (/usr/lib/llvm-22), CHIP (sm_90), JOBS (nproc),
# ITERS (GEMM timing iterations, 10).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-gpu-bench}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
LLVM=${LLVM_DIR:-/usr/lib/llvm-22}
CHIP=${CHIP:-sm_90}
JOBS=${JOBS:-$(nproc)}
ITERS=${ITERS:-10}
OFFLINE=0 BUILD_STEP=1 LIT_STEP=1
for arg in "$@"; do
  case "$arg" in
    --offline) OFFLINE=1 ;;
    --no-build) BUILD_STEP=0 ;;
    --no-lit) LIT_STEP=0 ;;
    *) echo "usage: $0 [--offline] [--no-build] [--no-lit]" >&2; exit 2 ;;
  esac
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
START=$(date +%s)
step() { echo "== [$(( $(date +%s) - START ))s] $*"; }
die() { echo "gpu.sh: error: $*" >&2; exit 1; }

[ -x "$CUDA_HOME/bin/ptxas" ] || die "no ptxas in CUDA_HOME=$CUDA_HOME"
EMULATOR_STEP=$OFFLINE

if [ "$BUILD_STEP" = 1 ]; then
step "build ($BUILD)"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$BUILD" -j"$JOBS" tx-opt tx-run tx-difftest tx_cuda_runtime \
  tx_emulator_runtime tx-cuda-runtime-test FileCheck count not >/dev/null 2>&1 ||
  ninja -C "$BUILD" -j"$JOBS" tx-opt tx-run tx-difftest tx_cuda_runtime \
  tx_emulator_runtime tx-cuda-runtime-test
fi
TXOPT=$BUILD/bin/tx-opt
TXRUN=$BUILD/bin/tx-run
RUNTIME=$BUILD/lib/libtx_cuda_runtime.so

[ -x "$TXOPT" ] || die "no tx-opt in $BUILD (build it, or drop --no-build)"
if [ "$OFFLINE" = 0 ]; then
  # The GPU steps need a driver and a device: say so now, not after the
  # lit suite and the cuBLAS build.
  [ -x "$CUDA_HOME/bin/nvcc" ] || die "no nvcc in CUDA_HOME=$CUDA_HOME (the cuBLAS timer needs it)"
  [ -x "$BUILD/bin/tx-cuda-runtime-test" ] ||
    die "no tx-cuda-runtime-test in $BUILD (the CUDA runtime is built only where cuda.h is found)"
  why=$("$BUILD/bin/tx-cuda-runtime-test" device 2>&1) ||
    die "no usable CUDA GPU: ${why#device: } (bench/gpu.sh --offline runs the steps that need none)"
fi
if [ "$LIT_STEP" = 1 ]; then
  step "GPU lit tests (PTX, ptxas, runtime)"
  "$LLVM/bin/lit" -s "$BUILD/test/Codegen/GPU" "$BUILD/test/Runtime/cuda"
fi

# The benchmark GEMMs: y[M,N] += x[M,4096] W[N,4096]^T with N = 6144 (fused
# QKV of a Llama-3-8B-like layer: 32 query and 8 KV heads of 128) and
# N = 28672 (fused gate/up, intermediate 14336).
HIDDEN=4096
SHAPES="qkv:6144 gate_up:28672"
MS="1 16 512 2048"
# Types: f32 (exact FMAs), tf32 (f32 data on TF32 tensor cores,
# mma=tf32), f16 and bf16 (tensor cores, f32 accumulation).
TYPES="bf16 f16 tf32 f32"
gemm_module() { # name M N type -> path of the lowered module
  local name=$1 m=$2 n=$3 t=$4 out=$WORK/gemm_$1_$2_$4 elem=$4 mma=auto
  [ "$t" = tf32 ] && elem=f32 mma=tf32
  sed -e "s/@M@/$m/g; s/@N@/$n/g; s/@K@/$HIDDEN/g; s/@T@/$elem/g" \
      -e "s/@ITERS@/$ITERS/g; s/@MLAST@/$((m - 1))/g; s/@NLAST@/$((n - 1))/g" \
      -e "s/@MMID@/$(((m - 1) / 2))/g; s/@NMID@/$(((n - 1) / 3))/g" \
      "$ROOT/bench/gpu/gemm.mlir.in" > "$out.mlir"
  "$TXOPT" "$out.mlir" \
    --tx-to-nvvm="chip=$CHIP format=bin mma=$mma deallocate=false" \
    > "$out.llvm.mlir"
  echo "$out.llvm.mlir"
}
# The exact y[m,n] of gemm.mlir.in's inputs.
expected() { # M N m n
  python3 -c "print(sum(((k + 3*$3) % 7 - 3) * (((k + $4) % 5 - 2) / 2) for k in range($HIDDEN)))"
}

step "benchmark GEMMs through ptxas ($CHIP)"
if [ "$OFFLINE" = 1 ]; then
  for t in $TYPES; do gemm_module qkv 2048 6144 "$t" >/dev/null; done
  gemm_module gate_up 16 28672 bf16 >/dev/null
  echo "   qkv M=2048 ($TYPES), gate_up M=16 bf16: cubins ok"
fi

step "cuBLAS timer (nvcc)"
if [ -x "$CUDA_HOME/bin/nvcc" ]; then
  "$CUDA_HOME/bin/nvcc" -O2 -o "$WORK/cublas_gemm" \
    "$ROOT/bench/gpu/cublas_gemm.cu" -lcublas
else
  die "no nvcc in CUDA_HOME=$CUDA_HOME"
fi

if [ "$EMULATOR_STEP" = 1 ]; then
  # No GPU: the same correctness checks as below, with the kernels' NVVM
  # LLVM IR executed by the emulated CUDA device (tx-run/tx-difftest
  # --device=emulator). The decoder layer at the GPU step's tolerances; the
  # benchmark GEMM in its four types, exact, at the decode shapes of the fused
  # QKV (EMU_SHAPES, MxNxK; about 15 s each on the emulator).
  step "correctness on the emulated CUDA device (no GPU needed)"
  sed -e 's/xf32>/xbf16>/g' -e 's/, f32 {/, bf16 {/g' \
    "$ROOT/examples/llama_decoder_layer.mlir" > "$WORK/emu_llama_bf16.mlir"
  EMU="format=llvm math=polynomial cuda-toolkit=none"
  for variant in unfused fused fused-tf32 fused-bf16; do
    rewrite="" mma=auto rtol=1e-3 module=$ROOT/examples/llama_decoder_layer.mlir
    case "$variant" in
      fused) rewrite=tx-fusion ;;
      fused-tf32) rewrite=tx-fusion mma=tf32 rtol=2e-2 ;;
      fused-bf16) rewrite=tx-fusion rtol=3e-2 module=$WORK/emu_llama_bf16.mlir ;;
    esac
    out=$("$BUILD/bin/tx-difftest" --device=emulator --rewrite="$rewrite" \
      --lowering="tx-to-nvvm{$EMU mma=$mma}" --tokens 8 \
      --tolerance "$rtol" "$module") || die "emulator: $variant: $out"
    echo "   $variant: ${out#tx-difftest: }"
  done
  for t in $TYPES; do
    for shape in ${EMU_SHAPES:-1x6144x4096 16x6144x4096}; do
      IFS=x read -r m n k <<< "$shape"
      PATH="$BUILD/bin:$LLVM/bin:$PATH" bash "$ROOT/bench/gpu/emulator-gemm.sh" \
        "$ROOT" "$BUILD/lib" "$LLVM/lib" "$t" "$m" "$n" "$k" |
        sed 's/^/   gemm /' | tee "$WORK/emu_gemm.txt"
      grep -q ': ok$' "$WORK/emu_gemm.txt" || die "emulator: gemm $t $shape wrong"
    done
  done
fi

if [ "$OFFLINE" = 1 ]; then
  step "offline: done (GPU steps skipped)"
  exit 0
fi

step "runtime on the device"
"$BUILD/bin/tx-cuda-runtime-test" device

step "Llama decoder layer: GPU against CPU (unfused and fused)"
compare() { # a.npy b.npy label rtol
  python3 - "$1" "$2" "$3" "$4" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol = float(sys.argv[4])
err = float(np.max(np.abs(a - b))) if a.size else 0.0
ok = a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=rtol / 10)
print(f"   {sys.argv[3]}: shape {a.shape}, max |gpu - cpu| = {err:.3g}: "
      + ("ok" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
PY
}
EXAMPLE=$ROOT/examples/llama_decoder_layer.mlir
# tf32: the projections on TF32 tensor cores (mma.sync m16n8k8), the rest
# as before; TF32 keeps 10 mantissa bits, hence the looser tolerance.
# bf16: the whole layer in bf16 (tx-run rounds inputs and weights), so the
# projections take the bf16 tensor-core kernel (ldmatrix + mma.sync m16n8k16)
# on the GPU and the f32-accumulated GEMM on the CPU; both round every
# intermediate to bf16, hence the tolerance.
sed -e 's/xf32>/xbf16>/g' -e 's/, f32 {/, bf16 {/g' "$EXAMPLE" > "$WORK/llama_bf16.mlir"
for variant in unfused fused fused-tf32 fused-bf16; do
  prefix="" mma=auto rtol=1e-3 module=$EXAMPLE
  case "$variant" in
    fused) prefix="tx-fusion," ;;
    fused-tf32) prefix="tx-fusion," mma=tf32 rtol=2e-2 ;;
    fused-bf16) prefix="tx-fusion," rtol=3e-2 module=$WORK/llama_bf16.mlir ;;
  esac
  "$TXRUN" "$module" -e forward --tokens 8 --seed 3 \
    --pipeline="${prefix}tx-to-cpu" --output-dir "$WORK/cpu_$variant" >/dev/null
  "$TXRUN" "$module" -e forward --tokens 8 --seed 3 --device=cuda \
    --pipeline="${prefix}tx-to-nvvm{chip=$CHIP format=bin mma=$mma}" \
    --output-dir "$WORK/gpu_$variant" >/dev/null
  compare "$WORK/gpu_$variant/forward.0.npy" "$WORK/cpu_$variant/forward.0.npy" \
    "$variant" "$rtol"
done

# End-to-end latency of the decoder layer (examples/llama_decoder_layer.mlir,
# f32) under the execution model of tx-to-nvvm: weights resident, one stream
# and one synchronisation per call, eager (37 launches) and as a CUDA graph
# (cudagraph_mode = full: one cuGraphLaunch per call), at decode (1, 16
# tokens) and prefill (512, 2048), beside the cuBLAS time of the layer's
# seven projection GEMMs alone, back to back (the lower bound of a layer
# whose every other op were free): what is not GEMM shows as the ratio.
step "decoder layer latency: eager, graphed, cuBLAS GEMM-only bound"
sed 's/#tx.config<tp_size = 1>/#tx.config<tp_size = 1, cudagraph_mode = full>/' \
  "$EXAMPLE" > "$WORK/llama_graph.mlir"
LAYER_GEMMS="64:64 32:64 32:64 64:64 128:64 128:64 64:128" # N:K of q k v o gate up down
printf "%6s | %11s %11s | %11s | %7s %7s\n" tokens "eager ms" "graph ms" \
  "cuBLAS ms" "eager/" "graph/"
for m in 1 16 512 2048; do
  run_ms() { # module -> median ms of 20 calls after the first
    "$TXRUN" "$1" -e forward --tokens "$m" --device=cuda --repeat 21 \
      --pipeline="tx-to-nvvm{chip=$CHIP format=bin}" |
      sed -n 's/.* run \([0-9.e-]*\) s (median.*/\1/p' |
      python3 -c "import sys; print(float(sys.stdin.read()) * 1e3)"
  }
  eager=$(run_ms "$EXAMPLE")
  graph=$(run_ms "$WORK/llama_graph.mlir")
  bound=0
  for g in $LAYER_GEMMS; do
    read -r _ _ _ _ _ _ cb < <("$WORK/cublas_gemm" f32 "$m" "${g%%:*}" "${g##*:}" "$ITERS")
    bound=$(python3 -c "print($bound + $cb * 1e3)")
  done
  python3 -c "print(f'{$m:6d} | {$eager:11.4f} {$graph:11.4f} | {$bound:11.4f} | {$eager/$bound:7.2f} {$graph/$bound:7.2f}')"
done
echo "   ms per call (tx-run --repeat 21: median of the 20 after the first)."
echo "   eager/, graph/ = tx time / cuBLAS GEMM-only time (1 = nothing but GEMMs)."

step "GEMM throughput against cuBLAS (K=$HIDDEN, $ITERS calls each)"
RUNNER_LIBS=$RUNTIME,$LLVM/lib/libmlir_runner_utils.so,$LLVM/lib/libmlir_c_runner_utils.so
printf "%-8s %-4s %5s %6s | %9s %9s | %9s %9s | %6s %6s\n" gemm type M N \
  "tx TF/s" "tx ms" "cuBLAS" "cuBLAS*" "ratio" "ratio*"
for shape in $SHAPES; do
  name=${shape%%:*}; n=${shape##*:}
  for t in $TYPES; do
    for m in $MS; do
      mod=$(gemm_module "$name" "$m" "$n" "$t")
      out=$("$LLVM/bin/mlir-runner" "$mod" -e main -entry-point-result=void \
        -shared-libs="$RUNNER_LIBS")
      got=$(echo "$out" | sed -n 1,3p | tr '\n' ' ')
      tx=$(echo "$out" | sed -n 4p)
      want="$(expected "$m" "$n" 0 0) $(expected "$m" "$n" $((m - 1)) $((n - 1))) $(expected "$m" "$n" $(((m - 1) / 2)) $(((n - 1) / 3)))"
      python3 -c "import sys; g=[float(v) for v in '$got'.split()]; w=[float(v) for v in '$want'.split()]; sys.exit(0 if g == w else 1)" ||
        die "$name $t M=$m: wrong result (y[0,0], y[M-1,N-1], y[mid]: $got; expected $want)"
      read -r _ _ _ _ _ cb_sync cb_b2b < <("$WORK/cublas_gemm" "$t" "$m" "$n" "$HIDDEN" "$ITERS")
      python3 - "$name" "$t" "$m" "$n" "$tx" "$cb_sync" "$cb_b2b" <<'PY'
import sys
name, t, m, n, tx, cs, cb = sys.argv[1:]
m, n, k = int(m), int(n), 4096
tx, cs, cb = float(tx), float(cs), float(cb)
flop = 2.0 * m * n * k
tf = lambda s: flop / s / 1e12
print(f"{name:<8} {t:<4} {m:5d} {n:6d} | {tf(tx):9.2f} {tx*1e3:9.3f} | "
      f"{tf(cs):9.2f} {tf(cb):9.2f} | {cs/tx:6.3f} {cb/tx:6.3f}")
PY
    done
  done
done
echo "   TF/s = 2*M*N*K / time. tx: one synchronised launch per call (the"
echo "   lowered host code waits after each kernel); cuBLAS: synchronised per"
echo "   call, cuBLAS*: back to back. ratio = cuBLAS time / tx time (1 = parity)."
step "done"

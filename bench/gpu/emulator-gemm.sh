#!/usr/bin/env bash
# bench/gpu/gemm.mlir.in (the GEMM of bench/gpu.sh, device memory and
# async copies included) at M x N x K in type T (bf16, f16, tf32, f32),
# lowered with tx-to-nvvm{format=llvm} and run by mlir-runner on the
# emulated device; its three printed elements must equal the exact sums of
# the benchmark's exact inputs. Prints "T MxNxK: ok" or the difference.
# Used by bench/gpu.sh (machines without a GPU) and test/Runtime/emulator.
#   emulator-gemm.sh TX_SRC TX_LIB LLVM_LIB T M N K [extra tx-to-nvvm options]
# tx-opt and mlir-runner come from PATH.
set -euo pipefail
src=$1 txlib=$2 llvmlib=$3 t=$4 m=$5 n=$6 k=$7 extra=${8:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
elem=$t mma=auto
[ "$t" = tf32 ] && elem=f32 mma=tf32
sed -e "s/@M@/$m/g; s/@N@/$n/g; s/@K@/$k/g; s/@T@/$elem/g; s/@ITERS@/1/g" \
    -e "s/@MLAST@/$((m - 1))/g; s/@NLAST@/$((n - 1))/g" \
    -e "s/@MMID@/$(((m - 1) / 2))/g; s/@NMID@/$(((n - 1) / 3))/g" \
    "$src/bench/gpu/gemm.mlir.in" > "$work/gemm.mlir"
tx-opt "$work/gemm.mlir" --tx-to-nvvm="format=llvm math=polynomial cuda-toolkit=none mma=$mma deallocate=false $extra" > "$work/gemm.llvm.mlir"
got=$(mlir-runner "$work/gemm.llvm.mlir" -e main -entry-point-result=void \
  -shared-libs="$txlib/libtx_emulator_runtime.so,$llvmlib/libmlir_runner_utils.so,$llvmlib/libmlir_c_runner_utils.so" | sed -n 1,3p | tr '\n' ' ')
python3 - "$t" "$m" "$n" "$k" "$got" <<'PY'
import sys
t, m, n, k, got = sys.argv[1], *map(int, sys.argv[2:5]), sys.argv[5]
def y(i, j):
    return sum(((kk + 3 * i) % 7 - 3) * (((kk + j) % 5 - 2) / 2) for kk in range(k))
want = [y(0, 0), y(m - 1, n - 1), y((m - 1) // 2, (n - 1) // 3)]
g = [float(v) for v in got.split()]
print(f"{t} {m}x{n}x{k}: " + ("ok" if g == want else f"got {g}, expected {want}"))
PY

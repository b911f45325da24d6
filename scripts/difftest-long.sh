#!/usr/bin/env bash
# Long differential run: COUNT generated programs (default 10000) of every
# generator feature set, run before and after the fusion pipeline (and the
# static ones also against the scalar reference lowering) with tx-difftest;
# prints each batch's tx-difftest summary and the totals. Mismatching
# modules are copied to OUT/repro-<set>/.
#   scripts/difftest-long.sh [COUNT] [SEED] [OUT]
# BUILD_DIR (default build/) locates tx-difftest; BATCH programs per call.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
COUNT=${1:-10000}; SEED=${2:-1000}; OUT=${3:-$(mktemp -d /tmp/tx-difftest-long.XXXX)}
BATCH=${BATCH:-100}
gen="$root/test/Differential/gen_programs.py"
difftest="$BUILD_DIR/bin/tx-difftest"
# name | generator features | tx-difftest options
sets=(
  "plain||"
  "views|views|"
  "cfg-loops|cfg-loops|--lowering=tx-to-cpu{deallocate=false}"
  "region-writes|region-writes|"
  "exclusive-disjoint|exclusive,disjoint|"
  "static|static,loop-writes|--reference-lowering=tx-to-cpu{vectorize=false}"
  "all|views,disjoint,cfg-loops,region-writes,exclusive,loop-writes|--lowering=tx-to-cpu{deallocate=false}"
)
total=0; mism=0; errs=0; start=$(date +%s)
per=$(( (COUNT + ${#sets[@]} - 1) / ${#sets[@]} ))
for s in "${sets[@]}"; do
  IFS='|' read -r name feats opts <<<"$s"
  done_n=0; b=0
  while [ "$done_n" -lt "$per" ]; do
    n=$(( per - done_n < BATCH ? per - done_n : BATCH ))
    dir="$OUT/$name/batch$b"; mkdir -p "$dir"
    python3 "$gen" --seed $(( SEED + b )) --count "$n" ${feats:+--features "$feats"} --out "$dir"
    line=$("$difftest" $opts --reproducer-dir="$OUT/repro-$name" "$dir"/*.mlir | tee "$dir.log" | tail -1)
    echo "$name seed $(( SEED + b )): $line"
    grep -E "^(MISMATCH|ERROR)" "$dir.log" || true
    m=$(sed -E 's/.* ([0-9]+) mismatched, ([0-9]+) errors.*/\1/' <<<"$line")
    e=$(sed -E 's/.* ([0-9]+) mismatched, ([0-9]+) errors.*/\2/' <<<"$line")
    total=$(( total + n )); mism=$(( mism + ${m:-0} )); errs=$(( errs + ${e:-0} ))
    rm -f "$dir"/*.mlir
    done_n=$(( done_n + n )); b=$(( b + 1 ))
  done
done
echo "difftest-long: $total programs, $mism mismatched, $errs errors in $(( $(date +%s) - start )) s (reproducers in $OUT)"
[ "$mism" -eq 0 ] && [ "$errs" -eq 0 ]

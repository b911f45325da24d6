#!/usr/bin/env bash
# Long fuzzing run of tx-opt: scripts/fuzz_tx_opt.py for MINUTES (default 30)
# from SEED, failures saved (reduced) under OUT; prints the counts. Exit
# status 1 when a crash, hang, invalid output or undiagnosed failure is not
# in test/Fuzz/known-failures.txt.
#   scripts/fuzz-long.sh [MINUTES] [SEED] [OUT]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
MINUTES=${1:-30}; SEED=${2:-$RANDOM}; OUT=${3:-$(mktemp -d /tmp/tx-fuzz-long.XXXX)}
echo "fuzz-long: seed $SEED, $MINUTES min, failures in $OUT"
exec python3 "$root/scripts/fuzz_tx_opt.py" --tx-opt="$BUILD_DIR/bin/tx-opt" \
  --seed "$SEED" --count 100000000 --time $(( MINUTES * 60 )) --timeout 30 \
  --out "$OUT" --known-failures "$root/test/Fuzz/known-failures.txt"

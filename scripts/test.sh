#!/usr/bin/env bash
# Sets up tx (scripts/setup.sh) and runs every test: the lit suite (which
# also drives the C API, plugin, install and Python tests). Ends with one
# line "N passed, N failed, N skipped".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
export BUILD_DIR
bash "$root/scripts/setup.sh" || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
/usr/lib/llvm-22/bin/lit -sv "$BUILD_DIR/test" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

# lit aligns the colons ("  Passed     : 54") when several kinds are listed.
count() { grep -E "^\s+$1\s*: +[0-9]+" "$log" | sed -E "s/^\s+$1\s*: +([0-9]+).*/\1/" | head -1; }
passed=$(( $(count Passed || true) + $(count "Expectedly Failed" || true) + 0 ))
failed=$(( $(count Failed || true) + $(count "Unexpectedly Passed" || true) + $(count Unresolved || true) + $(count "Timed Out" || true) + 0 ))
skipped=$(( $(count Unsupported || true) + $(count Excluded || true) + 0 ))
rm -f "$log"
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

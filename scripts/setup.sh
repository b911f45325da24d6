#!/usr/bin/env bash
# Sets up tx on a fresh Debian 12 machine: installs the Debian packages it
# needs (only those missing; apt-get update first), configures and builds.
# Idempotent: a second run only rebuilds what changed.
#   BUILD_DIR  build directory (default: <repo>/build)
#   JOBS       parallel build jobs (default: 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$root/build}
JOBS=${JOBS:-2}
LLVM=/usr/lib/llvm-22

PACKAGES=(
  cmake ninja-build g++ pkg-config
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  python3 python3-numpy python3-pytest python3-torch
  libopenblas-dev
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=$LLVM/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=$LLVM/bin/lit
fi
ninja -C "$BUILD_DIR" -j"$JOBS"

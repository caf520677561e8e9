#!/usr/bin/env bash
# Sets up the machine (scripts/setup.sh), configures build/ (CMake, Ninja, clang-22, lld, ccache) and
# builds everything, tests included. Used by scripts/run.sh and scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"

cmake -S "$root" -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=/usr/lib/llvm-22/bin/clang \
  -DCMAKE_CXX_COMPILER=/usr/lib/llvm-22/bin/clang++ \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
  -DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  -DQLA_BUILD_COMPILER=ON \
  -DQLA_BUILD_TESTS=ON
ninja -C "$build" -j"${JOBS:-$(nproc)}"

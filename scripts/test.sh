#!/usr/bin/env bash
# Sets up, builds, and runs every test (lit FileCheck tests, Catch2 unit tests; GPU tests skip
# where no GPU is present). Exits non-zero when a test fails.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j"${JOBS:-$(nproc)}"

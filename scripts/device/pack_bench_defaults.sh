#!/usr/bin/env bash
# Packs the default build (no tuned settings) of every (H, HV) that bench_gdn.sh times, with the context
# split's kernels, as devpkg/gdn/h<H>hv<HV>: the table of the current defaults. Then on the device:
#   OUT=$OUT PROGRESS=$OUT/progress.tgz bash devpkg/bench_gdn.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
args=()
for hv in 2,8 4,16 8,32 16,16 16,32 16,48 16,64; do
  IFS=, read -r H HV <<<"$hv"
  args+=("h${H}hv${HV}" "H=$H,HV=$HV,K=128,V=128,BV=64")
done
SPLIT=1 bash "$root/scripts/device/pack_gdn.sh" "${args[@]}"

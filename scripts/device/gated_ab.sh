#!/usr/bin/env bash
# Run 36 found the gated config (H=2,HV=4,K=V=128, gate_in_kernel=1, l2norm=1) giving a NaN error on
# the GPU (last checked in run 22, before the context split became the default for short batches).
# This localises it, on the GPU machine, with packages from:
#   SPLIT=1 scripts/device/pack_gdn.sh gated "H=2,HV=4,K=128,V=128,BV=64,gate_in_kernel=1,l2norm=1" \
#     gk "H=2,HV=4,K=128,V=128,BV=64,gate_in_kernel=1" l2 "H=2,HV=4,K=128,V=128,BV=64,l2norm=1" \
#     plain "H=2,HV=4,K=128,V=128,BV=64"
#   (and, built from a tree with commit 1cdcab3's compiler change reverted, KEEP_PKG=1 ... gatedold "<gated's>")
# Each package: the default cases (CPU and GPU references, varlen, 4x8192), then 4x8192 again (split by
# the planner). Run 37 ran it with --split-unverified (the guard of d77d100, removed in session 8 once the
# cause — the wide kernel's L2-norm layout — was fixed). Output in $OUT/checks.log and one JSON a run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; mkdir -p $out
for c in ${CONFIGS:-gated gatedold gk l2 plain}; do
  [ -d devpkg/gdn/$c ] || continue
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $out/check-$c.json \
    --timeout 50 2>&1 | sed "s/^/$c /" >> $out/checks.log
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --shape 4,8192 \
    --json $out/split-$c.json --timeout 50 2>&1 | sed "s/^/$c split /" >> $out/checks.log
done
grep -E "FAIL|passed|rror" $out/checks.log | cut -c1-220

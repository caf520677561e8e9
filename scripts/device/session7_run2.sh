#!/usr/bin/env bash
# Session 7, second device run (one command):
#   1. the stmatrix.trans store of Oᵀ (1cdcab3) checked: qla_gpu_gdn's default cases on smalls, gated,
#      vfirst and h16hv32 (CPU and GPU float64 references, varlen), the split path of smalls, and
#      compute-sanitizer memcheck/racecheck/synccheck on smalls (bench_variants.sh);
#   2. (16,32) and (16,64) 4x8192 timed beside FLA 0.6.0 (the change's effect: run 35 had 1.014 / 2.016 ms);
#   3. qlac tune gdn over the 17 shapes from a database without GDN entries, with the candidate list
#      that now has split_tokens=2048/4096 (under 3 minutes?), then qlac tune gemm on the same database
#      (only the new register-budget candidate is timed).
# Everything lands in $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s7r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
for c in gated vfirst h16hv32; do
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/check-$c.json --timeout 150 \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c /" >> $w/checks.log
done
grep -E "passed|FAIL" $w/checks.log; save
CONFIGS="h16hv32 h16hv64" SHAPES="4,8192" FLA_SHAPES="16,32,4,8192 16,64,4,8192" OUT=$w/variants \
  bash devpkg/bench_variants.sh > $w/variants.log 2>&1
grep -E "passed|FAIL|memcheck|racecheck|synccheck|4x8192|peer_graph" $w/variants.log | cut -c1-220; save
DB_START=devpkg/db_start.json TUNE_TIMEOUT=300 OUT=$w/gdn bash devpkg/tune_gdn.sh > $w/tune-gdn-summary.log 2>&1
cp /tmp/tune-gdn/* $w/ 2>/dev/null; save
( time timeout 150 /tmp/qlac tune gemm --shapes 8192x8192x8192,4096x4096x4096 --db $w/tuning.json --jobs 16 ) > $w/tune-gemm.log 2>&1
echo "tune exit $?" >> $w/tune-gemm.log; save
cat $w/tune.log $w/tune-gemm.log | tr '\r' '\n' | grep -E "best|tuned in|^real|exit" | grep -v "\[" | tail -30

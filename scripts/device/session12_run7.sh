#!/usr/bin/env bash
# Session 12, run 75: the planner's four segments for (16,64) and (16,48) 1x32768, with (2,8) and (4,16)
# 1x32768, beside FLA 0.6.0 in the same run (bench_gdn.sh, logsigmoid gates); then our rows of the same
# shapes with the mixed gates (zero-decay heads) and in exact mode, into mixed.log.
set -uo pipefail
out=${OUT:-/tmp/out}
SHAPES="16,64,1,32768 16,48,1,32768 2,8,1,32768 4,16,1,32768" OUT=$out bash devpkg/bench_gdn.sh > /dev/null 2>&1
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}
for s in h16hv64 h16hv48 h2hv8 h4hv16; do
  for mode in "--gate mixed" "--gate logsigmoid --exact"; do
    timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$s --set "$(cat devpkg/gdn/$s/settings)" --shape 1,32768 --bench $mode \
      2>&1 | sed 's/ seed=[0-9]*//' | grep -E "ms a call|FAIL" | sed "s/^/$mode: /" >> $out/mixed.log
  done
done
grep -E "PASS|FAIL" $out/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
grep -h peer_graph $out/gdn.log | cut -c1-160
cat $out/mixed.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

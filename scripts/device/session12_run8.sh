#!/usr/bin/env bash
# Session 12, run 76: runs of no iteration store nothing (qla-context-split). Checks: small and gated
# default cases truncated and exact, memcheck on small's varlen split both modes; (2,8) and (4,16)
# 1x32768 with logsigmoid gates (run 75: 0.223 and 0.400 ms graph).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=$out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 40 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 30; g gated cases --timeout 30
g small cases-exact --exact --timeout 30; g gated cases-exact --exact --timeout 30
for mode in "" --exact; do
  timeout 40 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40,700 $mode --timeout 30 > /tmp/san.log 2>&1
  echo "gdn small memcheck: exit $? ($(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1)) varlen 100,300,40,700 $mode" >> $w/gdn.log
done
for c in h2hv8 h4hv16; do g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 30; done
grep -E "FAIL|passed|memcheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190

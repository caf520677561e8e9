#!/usr/bin/env bash
# A short GPU check of the context split's path (pack_gdn.sh with SPLIT=1: smalls, h16hv32, h2hv8):
# the split on `smalls` with both gate kinds and exact mode, memcheck and racecheck on it, and the
# one-sequence timings of (16,32) (truncated and exact, both gate kinds) and (2,8). JSON rows and the
# log go to $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}
P=devpkg/gdn; out=${OUT:-/tmp/out}; work=/tmp/qla-verify; rm -rf $work; mkdir -p $work $out
log=$work/gdn.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $log
g() { # CONFIG TAG ARGS...
  local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn $P/$c --set "$(cat $P/$c/settings)" --json $work/gdn-$c-$tag.json --timeout 50 "$@" 2>&1 \
    | grep -E "PASS|FAIL|rror" | sed 's/ seed=[0-9]*//' | tee -a $log
}
g smalls 1x4096-truncated-mixed --shape 1,4096 --gate mixed
g smalls 1x4096-exact-mixed --shape 1,4096 --gate mixed --exact
g smalls 1x4096-truncated-logsigmoid --shape 1,4096 --gate logsigmoid
for t in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $t --error-exitcode 9 devpkg/qla_gpu_gdn $P/smalls --set "$(cat $P/smalls/settings)" \
    --shape 1,2048 > /tmp/s.log 2>&1
  echo "gdn smalls-split $t: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/s.log | tail -1))" | tee -a $log
done
tar czf $out/out.tgz -C $work .
g h16hv32 1x32768-truncated-logsigmoid --shape 1,32768 --bench --gate logsigmoid
g h16hv32 1x32768-exact-logsigmoid --shape 1,32768 --bench --gate logsigmoid --exact
g h2hv8 1x32768-truncated-logsigmoid --shape 1,32768 --bench --gate logsigmoid
g h16hv32 1x32768-truncated-mixed --shape 1,32768 --bench --gate mixed
tar czf $out/out.tgz -C $work .

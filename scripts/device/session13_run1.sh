#!/usr/bin/env bash
# Session 13, run 77: programmatic dependent launch A/B. The runtime's GPU tests (dependent launch
# plainly, with a memset between, in a graph); small with dependent_launch=1: cases truncated and exact,
# memcheck and synccheck on its varlen split; (2,8) and (4,16) 1x32768 logsigmoid with and without
# dependent_launch=1, twice each, interleaved (run 76: 0.223 and 0.400 ms graph).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=$out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
timeout 120 devpkg/qla_runtime_tests "[gpu]" > $w/runtime-gpu.log 2>&1; echo "runtime [gpu] tests: exit $?" >> $w/gdn.log
tail -3 $w/runtime-gpu.log >> $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 40 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 30; g smallp cases --timeout 30; g smallp cases-exact --exact --timeout 30
g gatedp cases --timeout 30
for tool in memcheck synccheck racecheck; do for mode in "" --exact; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smallp \
    --set "$(cat devpkg/gdn/smallp/settings)" --varlen 100,300,40,700 $mode --timeout 50 > /tmp/san.log 2>&1
  echo "gdn smallp $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) varlen 100,300,40,700 $mode" >> $w/gdn.log
done; done
for rep in 1 2; do for c in h2hv8 h2hv8p h4hv16 h4hv16p; do
  g $c log$rep --shape 1,32768 --bench --gate logsigmoid --timeout 30; done; done
for c in h16hv32 h16hv32p; do g $c log --shape 4,8192 --bench --gate logsigmoid --timeout 30; done
grep -E "FAIL|passed|check|ms a call|exit" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

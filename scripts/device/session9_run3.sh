#!/usr/bin/env bash
# Session 9, the table (runs 45, 46) after b08e3db (cumsum heads) and the line-scan cumsum lowering:
# devpkg from `python3 scripts/device/pack_tuned.py` (17 tuned t-* packages, tuning/h200.json) plus
# KEEP_PKG=1 pack_gdn.sh smalls, gated, h16hv32, h16hv64, p32ih2, p64ih2 (inverse_heads=2).
#   PART=a: checks (smalls and gated default cases, memcheck on smalls), the issue-3 shapes at the default
#           build and with inverse_heads=2, then bench_tuned.sh on nine tuned shapes with FLA;
#   PART=b: bench_tuned.sh on the other eight with FLA.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; mkdir -p $out
first="t-16-32-4x8192 t-16-32-8x4096 t-16-64-4x8192 t-16-64-2x16384 t-16-32-1x32768 t-16-64-1x32768 t-16-32-1x131072 t-16-48-1x32768 t-8-32-1x32768"
second="t-16-16-1x2048 t-16-16-1x32768 t-16-32-1x8192 t-2-8-1x2048 t-2-8-1x32768 t-2-8-1x8192 t-2-8-8x1024 t-4-16-1x32768"
if [ "${PART:-a}" = a ]; then
  w=/tmp/s9r3; rm -rf $w; mkdir -p $w
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $w/gdn.log
  g() { local c=$1 tag=$2; shift 2
    timeout 120 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
      2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
  g smalls cases --timeout 60
  g gated cases --timeout 60
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smalls \
    --set "$(cat devpkg/gdn/smalls/settings)" --varlen 100,2300,40 --timeout 90 > $w/san.log 2>&1
  echo "gdn smalls memcheck: exit $? ($(grep -E 'ERROR SUMMARY' $w/san.log | tail -1)) varlen 100,2300,40 (split)" >> $w/gdn.log
  for c in h16hv32 p32ih2 h16hv64 p64ih2; do g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100; done
  grep -E "FAIL|passed|memcheck|ms a call" $w/gdn.log | cut -c1-200
  tar czf $out/checks.tgz -C $w .
  ONLY="$first" FLA=1 FLA_TIMEOUT=330 OUT=$out bash devpkg/bench_tuned.sh 2>&1 | grep -E "FAIL|ms a call|peer_graph_ms" | cut -c1-200
else
  ONLY="$second" FLA=1 FLA_TIMEOUT=400 OUT=$out bash devpkg/bench_tuned.sh 2>&1 | grep -E "FAIL|ms a call|peer_graph_ms" | cut -c1-200
fi

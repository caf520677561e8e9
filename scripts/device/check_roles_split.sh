#!/usr/bin/env bash
# Runs on the GPU machine from the repo root with devpkg/ carried (pack_gdn.sh with SPLIT=1, configs
# smallr = small with roles=1, h16hv32r = (16,32) with roles=1, h16hv32 and h2hv8 with the split kernels):
# the role-split forward's checks (every small case, memcheck/racecheck/synccheck) and times, the context
# split against no split on the one-sequence shapes, per-kernel times (ncu) and FLA beside (FLA="H,HV,B,T ...").
# Writes everything under $OUT as one out.tgz (at most 8 files come back from the device).
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; work=/tmp/qla-out; mkdir -p "$out" "$work"
log=$work/gdn.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$log"
gdn() { # CONFIG TAG ARGS...: one qla_gpu_gdn run, its rows in $work/gdn-TAG.json
  local cfg=$pkg/gdn/$1 tag=$2; shift 2
  echo "== $tag: $*" | tee -a "$log"
  timeout 240 $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --json "$work/gdn-$1-$tag.json" "$@" 2>&1 | tee -a "$log"
}
for c in ${CHECK:-smallr}; do gdn $c $c-cases --timeout 30; done
for c in ${SAN:-smallr}; do
  for tool in memcheck racecheck synccheck; do
    timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/$c \
      --set "$(cat $pkg/gdn/$c/settings)" --cases 2 --timeout 120 > /tmp/san.log 2>&1
    echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))" | tee -a "$log"
    cat /tmp/san.log >> "$work/sanitizers.log"
  done
done
# BENCH="cfg:tag:args;..." e.g. "h16hv32r:r-1x32768:--shape 1,32768 --bench"
IFS=';' read -ra runs <<<"${BENCH:-}"
for r in "${runs[@]}"; do
  IFS=':' read -r cfg tag args <<<"$r"
  gdn $cfg $tag $args --timeout 60
done
# NCU_RUNS="cfg:tag:args;...": each kernel's own time in one call
IFS=';' read -ra nruns <<<"${NCU_RUNS:-}"
for r in "${nruns[@]}"; do
  IFS=':' read -r cfg tag args <<<"$r"
  echo "kernel times, $tag ($args):" | tee -a "$log"
  timeout 240 ncu --clock-control none --metrics gpu__time_duration.sum --csv $pkg/qla_gpu_gdn $pkg/gdn/$cfg \
    --set "$(cat $pkg/gdn/$cfg/settings)" $args 2>/dev/null | grep -E '"gdn_' | awk -F'","' '{print $5, $NF}' \
    | tr -d '"' | tee -a "$log"
done
if [ -n "${FLA:-}" ] && [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  FLA_ERR_MAX_TOKENS=${FLA_ERR_MAX_TOKENS:-0} PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 300 \
    python3 $pkg/fla_gdn_shapes.py "$work" $FLA 2>&1 | tee -a "$log"
fi
grep -E "PASS|FAIL|exit|==|ms" "$log" | sed 's/ seed=[0-9]*//' | tail -60
tar czf "$out/out.tgz" -C "$work" .

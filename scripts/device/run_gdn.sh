#!/usr/bin/env bash
# Runs on the GPU machine from the repo root with devpkg/ (pack_gdn.sh) carried: every packed GDN
# forward config against float64 references (the (16,32)/(16,64) ones on their 4x8192 case, timed),
# compute-sanitizer memcheck/racecheck/synccheck on the small config, optionally Nsight Compute on
# gdn_chunk_forward or $NCU_KERNEL (NCU=1) and flash-linear-attention beside it (FLA="H,HV,B,T ..." with .whl carried).
# Writes $OUT/gdn.log, $OUT/gdn-*.json, $OUT/sanitizers.log (and ncu-*.txt/csv, fla-*.json).
# CONFIGS="small gated ..." checks only those packed configs.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gdn.log"
for cfg in $pkg/gdn/*; do
  name=$(basename $cfg)
  if [ -n "${CONFIGS:-}" ] && ! grep -qw "$name" <<<"$CONFIGS"; then continue; fi
  case $name in h16*) extra="--shape 4,8192" ;; *) extra="" ;; esac
  $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --bench $extra --json "$out/gdn-$name.json" 2>&1 | tee -a "$out/gdn.log"
done
# Sanitizers on the small configs (small, and smalls2 = small with pipelined copies, when packed).
for san in small smalls2; do
  [ -d $pkg/gdn/$san ] || continue
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/$san --set "$(cat $pkg/gdn/$san/settings)" --cases 2 > /tmp/san.log 2>&1
    tag=gdn; [ $san = small ] || tag="gdn $san"
    echo "$tag $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))" | tee -a "$out/gdn.log"
    cat /tmp/san.log >> "$out/sanitizers.log"
  done
done
if [ "${NCU:-0}" = 1 ]; then
  cfg=$pkg/gdn/${NCU_CFG:-h16hv32}
  ncu --clock-control none -k regex:${NCU_KERNEL:-gdn_chunk_forward} -c 1 --set full --import-source no -o /tmp/prof -f \
    $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --shape 4,2048 > /tmp/ncu.log 2>&1
  ncu -i /tmp/prof.ncu-rep --page details > "$out/ncu-details.txt" 2>&1
  ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > "$out/ncu-sass.csv" 2>&1
  grep -E "Duration|Registers Per|Achieved Occupancy|Block Limit (Reg|Shared)|Warp Cycles Per Issued|Local Memory Spilling Requests " "$out/ncu-details.txt" | tee -a "$out/gdn.log"
fi
if [ -n "${NCU_TIMES:-}" ]; then
  # Each kernel's own time in one forward call on 4x8192, for the configs named (NCU_TIMES="h16hv32 gated").
  [ "$NCU_TIMES" = 1 ] && NCU_TIMES=h16hv32
  for name in $NCU_TIMES; do
    cfg=$pkg/gdn/$name
    echo "kernel times, $name 4x8192:" | tee -a "$out/gdn.log"
    ncu --clock-control none --metrics gpu__time_duration.sum --csv $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" \
      --shape 4,8192 2>/dev/null | grep -E '"gdn_' | awk -F'","' '{print $5, $NF}' | tr -d '"' | tee -a "$out/gdn.log"
  done
fi
if [ -n "${FLA:-}" ] && [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 python3 $pkg/fla_gdn_shapes.py "$out" $FLA 2>&1 | tee -a "$out/gdn.log"
fi
grep -E "PASS|FAIL|exit" "$out/gdn.log" | sed 's/ seed=[0-9]*//'

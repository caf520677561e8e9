#!/usr/bin/env bash
# Runs on the GPU machine from the repo root (devpkg/ from pack_gdn.sh carried): the GDN forward timed
# on (16,32) 4x8192, then Nsight Compute on gdn_chunk_forward at (16,32) 4x2048 (same grid, fewer
# chunks): the details page and the per-SASS-instruction source page (warp-stall samples) into $OUT.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cfg=$pkg/gdn/${PROFILE_CFG:-h16hv32}
$pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --shape 4,8192 --bench --json "$out/bench.json" 2>&1 | tee "$out/run.log"
ncu --clock-control none -k regex:gdn_chunk_forward -c 1 --set full --import-source no -o /tmp/prof -f \
  $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --shape 4,2048 > /tmp/ncu.log 2>&1
tail -3 /tmp/ncu.log
ncu -i /tmp/prof.ncu-rep --page details > "$out/ncu-details.txt" 2>&1
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > "$out/ncu-sass.csv" 2>&1
ls -la "$out"
grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Warp Cycles Per Issued|Issued Ipc|Local" "$out/ncu-details.txt" | head -30

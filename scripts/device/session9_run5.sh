#!/usr/bin/env bash
# Session 9, run 48 (a template of session8_run5.sh): ncu (full set, SASS source view) of gdn_chunk_inverse
# and the wide gdn_chunk_forward at session 9's defaults (after the per-column gate factors and the cumsum
# changes) on (16,32) 4x8192, one launch each; details and the per-instruction CSV (xz), for the next
# session's work on issue 4 (where the forward's chain waits: barriers, wgmma, loads).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r5; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gpu.txt
P=devpkg/gdn/h16hv32
timeout 300 ncu --clock-control none -k regex:"gdn_chunk_(inverse|forward)" -c 2 --set full --import-source no \
  -o /tmp/prof -f devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --timeout 280 \
  > $w/ncu-run.log 2>&1
echo "ncu exit $?" | tee -a $w/ncu-run.log; save
ncu -i /tmp/prof.ncu-rep --page details > $w/details.txt 2>&1
ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > $w/sass.csv 2>&1
xz -9 -T8 $w/sass.csv; save
grep -E "^  gdn_|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc A|Local Memory Spill" $w/details.txt | head -40

#!/usr/bin/env bash
# Session 13, run 78: where gdn_chunk_inverse's time goes today (ncu stall reasons and per-instruction
# samples, (16,32) 4x8192 default config), to pick the next inverse change.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s13r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
c=h16hv32; P=devpkg/gdn/$c
timeout 150 ncu --clock-control none -k regex:"gdn_chunk_inverse" -s 2 -c 1 --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
  --import-source no -o /tmp/prof-inv -f \
  devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --bench --timeout 140 > $w/ncu-run.log 2>&1
echo "ncu exit $?" | tee -a $w/gdn.log
ncu -i /tmp/prof-inv.ncu-rep --page details > $w/details-inv.txt 2>&1
ncu -i /tmp/prof-inv.ncu-rep --page source --csv --print-source sass > $w/sass-inv.csv 2>&1; xz -9 -T8 $w/sass-inv.csv
save
grep -E "Duration|Registers Per|Issue Slots Busy|Executed Ipc A|Spill|Achieved Occupancy|Theoretical Occ|Stall|Warp Cycles" $w/details-inv.txt | head -30

#!/usr/bin/env bash
# Session 16, run 92: why load-ahead made the wide forward slower (run 91: 469 -> 534 us at (16,32) 4x8192).
# ncu stall reasons and per-instruction samples of gdn_chunk_forward (the wide tile, unsplit) for
# h16hv32ks (bd4061b) and h16hv32 (load-ahead). Pack as for session16_run1.sh (the same devpkg).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s16r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
for c in h16hv32ks h16hv32; do
  P=devpkg/gdn/$c
  timeout 200 ncu --clock-control none -k regex:"gdn_chunk_forward" -s 2 -c 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
    --import-source no -o /tmp/prof-$c -f \
    devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --gate logsigmoid --bench --timeout 180 \
    > $w/ncu-run-$c.log 2>&1
  echo "ncu $c exit $?" | tee -a $w/gdn.log
  ncu -i /tmp/prof-$c.ncu-rep --page details > $w/details-$c.txt 2>&1
  ncu -i /tmp/prof-$c.ncu-rep --page source --csv --print-source sass > $w/sass-$c.csv 2>&1; xz -9 -T8 $w/sass-$c.csv
  save
  grep -E "Duration|Issue Slots Busy|Executed Ipc A|Stall|Warp Cycles|L2 Hit|DRAM Through" $w/details-$c.txt | head -20
done

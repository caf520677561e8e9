#!/usr/bin/env bash
# Session 10, run 52: (1) A/B of run 51's two diffs (the gate row as warp shuffles + the gate factors
# written after the xT gemm; new*) against the base (base*) on (16,32) and (16,64) 4x8192, interleaved;
# (2) is the forward's chain bound by tensor-core work? the same call at precise = 0 / 1 / 2 (0 and 2
# gemms a chunk fewer / more); (3) ncu of the wide forward, base and new (stall reasons, source counters).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r1; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for r in 1 2; do
  for c in base32 new32 p0-32 p2-32; do g $c 4x8192-$r --shape 4,8192 --bench --gate logsigmoid --timeout 50; done
  for c in base64 new64; do g $c 4x8192-$r --shape 4,8192 --bench --gate logsigmoid --timeout 50; done
done
grep -E "FAIL|passed|check:|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
for c in base32 new32; do
  P=devpkg/gdn/$c
  timeout 150 ncu --clock-control none -k regex:"gdn_chunk_forward" -c 1 --section SpeedOfLight --section LaunchStats \
    --section WarpStateStats --section SchedulerStats --section SourceCounters --import-source no -o /tmp/prof-$c -f \
    devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --timeout 140 > $w/ncu-run-$c.log 2>&1
  echo "ncu $c exit $?" | tee -a $w/ncu-run-$c.log
  ncu -i /tmp/prof-$c.ncu-rep --page details > $w/details-$c.txt 2>&1
  ncu -i /tmp/prof-$c.ncu-rep --page source --csv --print-source sass > $w/sass-$c.csv 2>&1; xz -9 -T8 $w/sass-$c.csv
  save
  grep -E "Duration|Registers Per|Issue Slots Busy|Executed Ipc A|Local Memory Spill" $w/details-$c.txt | head -8
done

#!/usr/bin/env bash
# Session 13, run 79: tri_inverse's diagonal blocks inside the warps (shuffles, no scratch, every warp
# busy) in gdn_chunk_inverse. Checks: small and gated cases truncated and exact, vfirst; memcheck and
# racecheck on small's varlen split; timings (run 77: (2,8) 0.222, (4,16) 0.400, (16,32) 4x8192 0.744 ms
# graph); ncu of the inverse at (16,32) 4x8192 (run 78: 294.9 us).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s13r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 30; g gated cases --timeout 30; g vfirst cases --timeout 30
g small cases-exact --exact --timeout 30; g gated cases-exact --exact --timeout 30
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40,700 --timeout 50 > /tmp/san.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) varlen 100,300,40,700" >> $w/gdn.log
done
save
for c in h2hv8 h4hv16; do g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 30; done
g h16hv32 log --shape 4,8192 --bench --gate logsigmoid --timeout 30
g h16hv32 log1 --shape 1,32768 --bench --gate logsigmoid --timeout 30
g h16hv64 log --shape 4,8192 --bench --gate logsigmoid --timeout 30
save
c=h16hv32; P=devpkg/gdn/$c
timeout 100 ncu --clock-control none -k regex:"gdn_chunk_inverse" -s 2 -c 1 --section SpeedOfLight --section LaunchStats \
  --section Occupancy --section WarpStateStats --section SourceCounters --import-source no -o /tmp/prof-inv -f \
  devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --bench --timeout 90 > $w/ncu-run.log 2>&1
echo "ncu exit $?" >> $w/gdn.log
ncu -i /tmp/prof-inv.ncu-rep --page details > $w/details-inv.txt 2>&1
ncu -i /tmp/prof-inv.ncu-rep --page source --csv --print-source sass > $w/sass-inv.csv 2>&1; xz -9 -T8 $w/sass-inv.csv
grep -E "Duration|Registers Per|Warp Cycles Per Issued|Achieved Occupancy" $w/details-inv.txt | head -5 | tee -a $w/gdn.log
save
grep -E "FAIL|passed|check:|memcheck|racecheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

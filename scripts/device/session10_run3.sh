#!/usr/bin/env bash
# Session 10, run 54: the wgmma descriptors made once per operand (each wgmma's an add to its low word)
# and the output scale folded into aqk and the gate row (new*), against bacaf97 (base*). Checks on the
# new build: the default cases of small and gated (split kernels included), memcheck and synccheck on
# small; A/B interleaved on (16,32) and (16,64) 4x8192, (2,8) and (16,32) 1x32768 (split); ncu of the new
# wide forward (instruction counts, stalls).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 70 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated; do g $c cases --timeout 60; done
for tool in memcheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,700,40 --timeout 80 > $w/san-$tool.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,700,40" >> $w/gdn.log
done
save
for r in 1 2; do
  for h in 32 64; do for c in base$h new$h; do g $c 4x8192-$r --shape 4,8192 --bench --gate logsigmoid --timeout 60; done; done
  for h in 28 32; do for c in base$h new$h; do g $c 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 60; done; done
done
grep -E "FAIL|passed|check:|ms a call|small (mem|sync)" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-180
save
P=devpkg/gdn/new32
timeout 150 ncu --clock-control none -k regex:"gdn_chunk_(forward|inverse)" -c 2 --section SpeedOfLight --section LaunchStats \
  --section WarpStateStats --section SchedulerStats --section InstructionStats --section SourceCounters --import-source no \
  -o /tmp/prof-new32 -f devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --timeout 140 > $w/ncu-run.log 2>&1
echo "ncu exit $?" >> $w/ncu-run.log
ncu -i /tmp/prof-new32.ncu-rep --page details > $w/details-new32.txt 2>&1
ncu -i /tmp/prof-new32.ncu-rep --page source --csv --print-source sass > $w/sass-new32.csv 2>&1; xz -9 -T8 $w/sass-new32.csv
save
grep -E "^  gdn_|Duration|Registers Per|Executed Instructions  |Issue Slots Busy" $w/details-new32.txt | head -12

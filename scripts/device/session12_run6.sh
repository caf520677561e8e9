#!/usr/bin/env bash
# Session 12, run 74: (16,64) and (16,48) 1x32768 are not split by the planner (minSegments = 3, from
# runs 23 and 27-28, when exact passes cost more); run 73 timed (16,64) 2x16384 at 1.44 ms against 2.14
# unsplit 1x32768. Here: 2, 3 and 4 segments forced, with logsigmoid gates, mixed gates (zero-decay heads
# take full runs) and exact mode, against no split.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s12r6; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in h16hv64 h16hv48; do
  for gate in logsigmoid mixed; do
    g $c $gate-nosplit --shape 1,32768 --bench --gate $gate --no-split --timeout 50
    for L in 16384 10944 8192; do g $c $gate-seg$L --shape 1,32768 --bench --gate $gate --segment-tokens $L --timeout 50; done
  done
  for L in 16384 10944 8192; do g $c exact-seg$L --shape 1,32768 --bench --gate logsigmoid --exact --segment-tokens $L --timeout 50; done
done
grep -E "FAIL|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //;s/rel_l2 o .* final state [0-9.e-]*//' | cut -c1-200
save

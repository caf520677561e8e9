#!/usr/bin/env bash
# (As run in run 38. --split-unverified was removed after it — builds with L2 norm split like any — so drop it to rerun.)
# Session 8, second device run: where the L2-norm build's NaN under the context split comes from (run 1:
# l2 and gated split NaN, gk/plain split PASS, every unsplit case PASS; the CPU execution of the same
# calls, wide kernel included, passes). Cases on l2 (H=2,HV=4,K=V=128,l2norm=1):
#   wide-unsplit: 64x512 (the wide BV=128 state kernel, never run with L2 norm on a GPU before);
#   split-narrow: 4x8192 split in 4096-token segments (8 segments: the main run takes BV=64);
#   split-wide:   4x8192 split by the planner (the run-1 failure);
# then compute-sanitizer memcheck/racecheck/synccheck on l2w (H=1,HV=2,K=V=128,l2norm=1) 64x128 (wide,
# unsplit) and 2x2048 split; and per-kernel GPU times of one (16,32) 4x8192 call (ncu, duration only).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s8r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
g() { # CONFIG TAG ARGS...
  local c=$1 tag=$2; shift 2
  timeout 100 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log
}
for c in l2 gated; do
  g $c wide-unsplit --shape 64,512 --timeout 60
  g $c split-narrow --shape 4,8192 --split-unverified --segment-tokens 4096 --timeout 60
  g $c split-wide --shape 4,8192 --split-unverified --timeout 60
done
grep -E "PASS|FAIL|rror" $w/gdn.log | cut -c1-230; save
S="$(cat devpkg/gdn/l2w/settings)"
for tool in memcheck racecheck synccheck; do
  for shape in "--shape 64,128" "--shape 2,2048 --split-unverified"; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/l2w --set "$S" $shape \
      --timeout 100 > $w/san.log 2>&1
    echo "l2w $tool $shape: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san.log | tail -1))" | tee -a $w/gdn.log
    grep -m3 -B2 -A12 "Invalid\|Race\|hazard\|Barrier" $w/san.log >> $w/san-$tool.log
  done
done
save
P=devpkg/gdn/h16hv32
timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum -o /tmp/t -f devpkg/qla_gpu_gdn $P \
  --set "$(cat $P/settings)" --shape 4,8192 --timeout 140 > $w/ncu-run.log 2>&1
ncu -i /tmp/t.ncu-rep --csv --page raw > $w/kernel-times.csv 2>&1
python3 - $w/kernel-times.csv <<'PY' | tee $w/kernel-times.txt
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
h = rows[0]; ki = h.index("Kernel Name"); ti = h.index("gpu__time_duration.sum")
t = collections.defaultdict(list)
for r in rows[2:]:
    try: t[r[ki]].append(float(r[ti]))
    except (ValueError, IndexError): pass
for k, v in t.items(): print(f"{k}: n={len(v)} min={min(v)} median={sorted(v)[len(v)//2]}")
PY
save

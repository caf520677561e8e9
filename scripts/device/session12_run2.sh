#!/usr/bin/env bash
# Session 12, run 70: gdn_split_correct with three steps' loads at once and 8 columns a block (run 69:
# 25 µs at (2,8) 1x32768, one round trip a step). Checks: small and gated default cases truncated and
# exact, memcheck / racecheck / synccheck on small's varlen split (exact: the product path) ; (2,8) and
# (4,16) 1x32768 at the planner's segment length and others (fewer correction steps now cost less);
# ncu durations of one (2,8) call.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s12r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 50; g gated cases --timeout 50
g small cases-exact --exact --timeout 50; g gated cases-exact --exact --timeout 50
for tool in memcheck racecheck synccheck; do for mode in "" --exact; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40,700 $mode --timeout 50 > $w/san-$tool$mode.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool$mode.log | tail -1)) varlen 100,300,40,700 $mode" >> $w/gdn.log
done; done
save
for c in h2hv8 h4hv16; do
  g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 50
  g $c log-exact --shape 1,32768 --bench --gate logsigmoid --exact --timeout 50
done
for L in 1024 1536 3072; do g h2hv8 log-seg$L --shape 1,32768 --bench --gate logsigmoid --segment-tokens $L --timeout 50; done
for L in 2048 3072 6144; do g h4hv16 log-seg$L --shape 1,32768 --bench --gate logsigmoid --segment-tokens $L --timeout 50; done
g h16hv32 log --shape 1,32768 --bench --gate logsigmoid --timeout 50
g h16hv32 log-seg4096 --shape 1,32768 --bench --gate logsigmoid --segment-tokens 4096 --timeout 50
save
prof() { local c=$1 tag=$2; shift 2
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 100 \
    > $w/ncu-$c-$tag.csv 2> $w/ncu-$c-$tag.err
  python3 - "$w/ncu-$c-$tag.csv" "$c $tag" <<'PY' | tee -a $w/gdn.log
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value")
for r in rows[1:]:
    if "reference" in r[k] or "poison" in r[k]: continue
    print(f"ncu {sys.argv[2]}: {r[k][:28]:28s} {float(r[v].replace(',', '')) / 1000:9.1f} us")
PY
}
prof h2hv8 1x32768 --shape 1,32768 --gate logsigmoid
prof h2hv8 1x32768-exact --shape 1,32768 --gate logsigmoid --exact
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200
save

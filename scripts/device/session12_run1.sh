#!/usr/bin/env bash
# Session 12, run 69: chunk totals [segment][chunk][head], gdn_cumsum gcd(HV, 32) heads a block in the
# split (was one). Checks: small and gated default cases truncated and exact, memcheck / synccheck on
# small's varlen split; the split shapes with logsigmoid gates (FLA's) truncated and exact, mixed gates;
# ncu durations of each kernel of one (2,8) and one (16,32) 1x32768 call.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s12r1; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 50; g gated cases --timeout 50
g small cases-exact --exact --timeout 50; g gated cases-exact --exact --timeout 50
for tool in memcheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40 --timeout 50 > $w/san-$tool.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,300,40" >> $w/gdn.log
done
save
for c in h2hv8 h4hv16 h16hv32; do
  g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 50
  g $c log-exact --shape 1,32768 --bench --gate logsigmoid --exact --timeout 50
  g $c mixed --shape 1,32768 --bench --gate mixed --timeout 50
done
g h16hv32 log --shape 1,131072 --bench --gate logsigmoid --timeout 50
g h16hv32 log-exact --shape 1,131072 --bench --gate logsigmoid --exact --timeout 50
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
prof h16hv32 1x32768 --shape 1,32768 --gate logsigmoid
grep -E "FAIL|passed|sanit|memcheck|synccheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200
save

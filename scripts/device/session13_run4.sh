#!/usr/bin/env bash
# Session 13, run 80: #qla.acc_slice broadcasts (gate and beta vectors laid out like the rows or columns
# they fill: no shared-memory exchange) against slice_broadcasts=0 (configs *x, = run 79's kernels).
# Checks: small, gated, vfirst cases (truncated and exact), memcheck/racecheck/synccheck on small's
# varlen split; A/B timings interleaved; ncu per-kernel times of (16,32) 4x8192 both ways.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s13r4; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 30; g gated cases --timeout 30; g vfirst cases --timeout 30
g small cases-exact --exact --timeout 30; g gated cases-exact --exact --timeout 30
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40,700 --timeout 50 > /tmp/san.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) varlen 100,300,40,700" >> $w/gdn.log
done
save
for rep in 1 2; do
  for c in h2hv8 h2hv8x h4hv16 h4hv16x; do g $c log$rep --shape 1,32768 --bench --gate logsigmoid --timeout 30; done
  for c in h16hv32 h16hv32x; do g $c log$rep --shape 4,8192 --bench --gate logsigmoid --timeout 30; done
done
for c in h16hv32 h16hv32x; do g $c log1x --shape 1,32768 --bench --gate logsigmoid --timeout 30; done
for c in h16hv64 h16hv64x; do g $c log --shape 4,8192 --bench --gate logsigmoid --timeout 30; done
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
prof h16hv32 4x8192 --shape 4,8192 --gate logsigmoid
prof h16hv32x 4x8192 --shape 4,8192 --gate logsigmoid
save
grep -E "FAIL|passed|check:|memcheck|racecheck|synccheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

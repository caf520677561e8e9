#!/usr/bin/env bash
# Session 13, run 85: (16,64) 1x32768 in two segments (--segment-tokens 16384: 128 wide blocks, one
# wave) against the planner's four (256 blocks, two waves), logsigmoid gates, both modes; ncu of each
# call's kernels (where the split's 42 us over 4x8192 go).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s13r8; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for rep in 1 2; do
  g h16hv64 four-$rep --shape 1,32768 --bench --gate logsigmoid --timeout 30
  g h16hv64 two-$rep --shape 1,32768 --bench --gate logsigmoid --segment-tokens 16384 --timeout 30
done
g h16hv64 two-mixed --shape 1,32768 --bench --gate mixed --segment-tokens 16384 --timeout 30
g h16hv64 four-mixed --shape 1,32768 --bench --gate mixed --timeout 30
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
prof h16hv64 four --shape 1,32768 --gate logsigmoid
prof h16hv64 two --shape 1,32768 --gate logsigmoid --segment-tokens 16384
save
grep -E "FAIL|passed|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

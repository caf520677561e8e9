#!/usr/bin/env bash
# Session 12, run 71: the fused forward (fuse_inverse = 1: the inverse in an aux warpgroup of the forward)
# where the forward is latency-bound — the split's main pass at (2,8) and (4,16) 1x32768, and unsplit
# (2,8) 1x8192 — against the two-kernel default in the same run; ncu durations of the kernels.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s12r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in h2hv8 h2hv8f h2hv8fw; do
  g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 50
  g $c nosplit --shape 1,8192 --bench --gate logsigmoid --no-split --timeout 50
done
for c in h4hv16 h4hv16f; do g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 50; done
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
prof h2hv8f 1x32768 --shape 1,32768 --gate logsigmoid
prof h2hv8fw 1x32768 --shape 1,32768 --gate logsigmoid
prof h2hv8 nosplit --shape 1,8192 --gate logsigmoid --no-split
prof h2hv8f nosplit --shape 1,8192 --gate logsigmoid --no-split
prof h4hv16 1x32768 --shape 1,32768 --gate logsigmoid
grep -E "FAIL|passed|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200
save

#!/usr/bin/env bash
# Session 13, run 86: four value heads a block of the inverse (inverse_heads=4, where HV / H = 4: q and
# k loaded once for four heads, 167 registers, 58 KB) against two (the default), on (16,64), (2,8) and
# (4,16); cases on a four-head config; ncu of the inverse at (16,64) 4x8192.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s13r9; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g h2hv8h4 cases --timeout 30
for c in h16hv64 h16hv64h4; do g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 30; g $c 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 30; done
for c in h2hv8 h2hv8h4 h4hv16 h4hv16h4; do g $c 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 30; done
save
prof() { local c=$1 tag=$2; shift 2
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:gdn_chunk_inverse \
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
for c in h16hv64 h16hv64h4; do prof $c 4x8192 --shape 4,8192 --gate logsigmoid --no-split; done
save
grep -E "FAIL|passed|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

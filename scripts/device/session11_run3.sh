#!/usr/bin/env bash
# Session 11, run 63: d59797b alone (partial wgmma waits; the forward issues Hᵀ·Qcᵀ first, so Xᵀ's reader
# waits with only Vcᵀ·aᵀ in flight; the rest in base order) against 851e0b6 (base*): checks on small,
# gated, wide; racecheck / synccheck on wide; (16,32) and (16,64) 4x8192 twice each, ncu of (16,32).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s11r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 90 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated wide; do g $c cases --timeout 80; done
for tool in racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/wide \
    --set "$(cat devpkg/gdn/wide/settings)" --varlen 100,300,40 --no-split --timeout 140 > $w/san-wide-$tool.log 2>&1
  echo "gdn wide $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san-wide-$tool.log | tail -1)) varlen 100,300,40 unsplit" >> $w/gdn.log
done
save
for r in 1 2; do
  for c in h32 base32; do g $c 4x8192-$r --shape 4,8192 --bench --timeout 80; done
  for c in h64 base64; do g $c 4x8192-$r --shape 4,8192 --bench --timeout 80; done
done
prof() { local c=$1 tag=$2; shift 2
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"gdn_(cumsum|chunk)" \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 100 \
    > $w/ncu-$c-$tag.csv 2> $w/ncu-$c-$tag.err
  python3 - "$w/ncu-$c-$tag.csv" "$c $tag" <<'PY' | tee -a $w/gdn.log
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value")
for r in rows[1:]:
    print(f"ncu {sys.argv[2]}: {r[k][:28]:28s} {float(r[v].replace(',', '')) / 1000:9.1f} us")
PY
}
prof h32 4x8192 --shape 4,8192; prof base32 4x8192 --shape 4,8192; prof h32 4x8192b --shape 4,8192
grep -E "FAIL|passed|check:|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save

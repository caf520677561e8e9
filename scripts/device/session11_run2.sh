#!/usr/bin/env bash
# Session 11, run 62: the forward's two warpgroups no longer meet at block barriers inside the chunk loop:
# gate rows replicated in every warp (broadcasts as shuffles, run 51's layout; the gate factors made after
# the first gemms are issued) and Oᵀ's store staged a warpgroup at a time (named barrier per warpgroup).
# Checks: default cases of small, gated, wide (BV = 128, stages = 2: the per-warpgroup staging), split
# too; memcheck, racecheck, synccheck on wide and small. A/B against 851e0b6 (base*), FLA in the same run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s11r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 90 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated wide; do g $c cases --timeout 80; done
for c in wide small; do for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" --varlen 100,300,40 --no-split --timeout 140 > $w/san-$c-$tool.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san-$c-$tool.log | tail -1)) varlen 100,300,40 unsplit" >> $w/gdn.log
done; done
grep -E "FAIL|passed|(memcheck|racecheck|synccheck):" $w/gdn.log | cut -c1-160
save
for r in 1 2; do
  for c in h32 base32; do g $c 4x8192-$r --shape 4,8192 --bench --timeout 80; done
  for c in h64 base64; do g $c 4x8192-$r --shape 4,8192 --bench --timeout 80; done
  for c in h28 base28; do g $c 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80; done
  for c in h32 base32; do g $c 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80; done
done
grep -E "FAIL|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
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
prof h32 4x8192 --shape 4,8192; prof base32 4x8192 --shape 4,8192
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site FLA_ERR_MAX_TOKENS=0 timeout 240 python3 devpkg/fla_gdn_shapes.py $w 16,32,4,8192 16,64,4,8192 2,8,1,32768 16,32,1,32768 2>&1 | tail -4 | cut -c1-160 | tee -a $w/gdn.log
save

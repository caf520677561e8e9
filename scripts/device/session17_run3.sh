#!/usr/bin/env bash
# Session 17, runs 95 + 96 in one call (device starts were scarce): session17_run1.sh's checks, sanitizers
# and A/B (HEAD, fed3515 = old, slice_broadcasts = sb) trimmed, then session17_run2.sh's table beside FLA.
# Pack as session17_run1.sh's header says (pack_bench_defaults.sh first); carry devpkg and .whl.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s17r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in gated h2hv8; do g $c cases --timeout 30; g $c cases-exact --exact --timeout 30; done
san() { local c=$1 tool=$2; shift 2
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 80 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for tool in memcheck racecheck synccheck; do san h2hv8 $tool --shape 64,256; done
san h2hv8 synccheck --varlen 100,300,40,700
san gated memcheck --varlen 100,300,40,700
save
for c in h16hv32 h16hv32old h16hv32sb; do g $c ab4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 30; done
save
prof() { local c=$1; shift
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:gdn_ \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 90 \
    > $w/ncu-$c.csv 2> $w/ncu-$c.err
  python3 - "$w/ncu-$c.csv" "$c" <<'PY' | tee -a $w/gdn.log
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value")
t = collections.defaultdict(list)
for r in rows[1:]:
    if "reference" in r[k] or "poison" in r[k]: continue
    t[r[k][:28]].append(float(r[v].replace(',', '')) / 1000)
for name, xs in t.items():
    xs.sort(); print(f"ncu {sys.argv[2]}: {name:28s} median {xs[len(xs)//2]:9.1f} us of {len(xs)}")
PY
}
for c in h16hv32 h16hv32old h16hv32sb; do prof $c --shape 4,8192 --gate logsigmoid --no-split; done
save
t() { # H,HV,B,T MODE
  local H HV B T; IFS=, read -r H HV B T <<<"$1"
  local args=""; [ "$2" = exact ] && args="--exact"
  g h${H}hv${HV} ${B}x${T}-$2 --shape $B,$T --bench --gate logsigmoid $args --timeout 150
}
split="2,8,1,32768 4,16,1,32768 16,32,1,32768 16,64,1,32768 16,32,1,131072"
batched="16,32,4,8192 16,64,4,8192 16,32,8,4096"
for s in $split $batched; do t $s truncated; save; done
for s in $split; do t $s exact; save; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 240 \
  python3 devpkg/fla_gdn_shapes.py "$w" $split $batched >> $w/gdn.log 2>&1
save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|ncu|fla" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200 | tail -70

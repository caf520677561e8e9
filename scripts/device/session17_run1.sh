#!/usr/bin/env bash
# Session 17, run 95: the per-warp release of ring slots that qla.read loads from (8416f88) against the
# commit before it (fed3515, thread 0 of each warpgroup arrives). Pack (dev machine): pack_bench_defaults.sh,
# then KEEP_PKG=1 SPLIT=1 pack_gdn.sh gated "H=2,HV=4,K=128,V=128,BV=64,gate_in_kernel=1,l2norm=1", then
# KEEP_PKG=1 SPLIT=1 BUILD_DIR=<fed3515 build> pack_gdn.sh h16hv32old "H=16,HV=32,..." h16hv64old "H=16,HV=64,...".
# On the device (carry devpkg): OUT=$OUT bash devpkg/session17_run1.sh
# Checks: every case of gated and h2hv8 (exact too); memcheck/racecheck/synccheck on h2hv8 (64x256 and a
# varlen split), gated's varlen; timings at (16,32), (16,64) 4x8192 and 1x32768, new and old; ncu per-kernel
# durations at (16,32) 4x8192 unsplit, new and old; an ncu source profile of the new wide forward.
# h16hv<HV>sb: HEAD's packages with the wide forward built with slice_broadcasts=1 (each thread reads its
# columns of the gate box and makes their exponentials: no scratch broadcast, no block barrier).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s17r1; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in gated h2hv8; do g $c cases --timeout 30; g $c cases-exact --exact --timeout 30; done
san() { local c=$1 tool=$2; shift 2
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 80 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for tool in memcheck racecheck synccheck; do san h2hv8 $tool --shape 64,256; san h2hv8 $tool --varlen 100,300,40,700; done
for tool in memcheck synccheck; do san gated $tool --varlen 100,300,40,700; done
save
for c in h16hv32 h16hv32old h16hv32sb h16hv64 h16hv64old h16hv64sb; do
  g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 30
  g $c 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 30
done
save
prof() { local c=$1 tag=$2; shift 2
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:gdn_ \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 100 \
    > $w/ncu-$c-$tag.csv 2> $w/ncu-$c-$tag.err
  python3 - "$w/ncu-$c-$tag.csv" "$c $tag" <<'PY' | tee -a $w/gdn.log
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
for c in h16hv32 h16hv32old h16hv32sb; do prof $c 4x8192 --shape 4,8192 --gate logsigmoid --no-split; save; done
P=devpkg/gdn/h16hv32
timeout 150 ncu --clock-control none -k regex:"gdn_chunk_forward" -s 2 -c 1 --section SpeedOfLight \
  --section WarpStateStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis \
  --import-source no -o /tmp/prof-h16hv32 -f \
  devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --gate logsigmoid --bench --timeout 120 \
  > $w/ncu-run-h16hv32.log 2>&1
echo "ncu source profile exit $?" | tee -a $w/gdn.log
ncu -i /tmp/prof-h16hv32.ncu-rep --page details > $w/details-h16hv32.txt 2>&1
ncu -i /tmp/prof-h16hv32.ncu-rep --page source --csv --print-source sass > $w/sass-h16hv32.csv 2>&1; xz -9 -T8 $w/sass-h16hv32.csv
save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-220

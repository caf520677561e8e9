#!/usr/bin/env bash
# Session 16, run 91: k_slices in the inverse's merges (*ks: build of bd4061b; *base: the build before
# it, 2d142ed), qla-pipeline's load-ahead of register loads (h16hv32/h16hv64: this build, k_slices and
# load-ahead) and the L2 prefetch of the gate columns (*pf: prefetch_gates=1 on this build).
# Pack (dev machine), each from its own build: BUILD_DIR=<2d142ed> SPLIT=1 pack_gdn.sh h16hv32base ...
# h16hv64base ...; KEEP_PKG=1 BUILD_DIR=<bd4061b> SPLIT=1 pack_gdn.sh h16hv32ks ... h16hv64ks ...;
# KEEP_PKG=1 SPLIT=1 pack_gdn.sh small gated vfirst h2hv8 (vfirst and h2hv8 with prefetch_gates=1)
# h16hv32 h16hv32pf h16hv64 h16hv64pf. On the device (carry devpkg): OUT=$OUT bash devpkg/session16_run1.sh
# Checks: every case of the small configs (exact too); memcheck/racecheck/synccheck on small's varlen split
# and gated's, memcheck/racecheck on h2hv8 at 64x256 (the wide forward); timings at (16,32) and (16,64)
# 4x8192 and 1x32768; ncu per-kernel durations at (16,32) 4x8192 unsplit for base, ks, this build and pf.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s16r1; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated vfirst h2hv8; do g $c cases --timeout 30; done
g small cases-exact --exact --timeout 30; g gated cases-exact --exact --timeout 30
san() { local c=$1 tool=$2; shift 2
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 80 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for tool in memcheck racecheck synccheck; do san small $tool --varlen 100,300,40,700; done
for tool in memcheck synccheck; do san gated $tool --varlen 100,300,40,700; done
for tool in memcheck racecheck; do san h2hv8 $tool --shape 64,256; done
save
for c in h16hv32base h16hv32ks h16hv32 h16hv32pf h16hv64base h16hv64ks h16hv64 h16hv64pf; do
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
for c in h16hv32base h16hv32ks h16hv32 h16hv32pf; do prof $c 4x8192 --shape 4,8192 --gate logsigmoid --no-split; save; done
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-220

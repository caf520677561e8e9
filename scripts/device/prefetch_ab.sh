#!/usr/bin/env bash
# The L2 prefetch of the gate columns (prefetch_gates=1: qla.prefetch of the forward's next-chunk gcum
# column, the inverse's block heads' gcum and beta columns) against the default (off). Written in
# session 14, not yet run (no device was lent after run 90). Pack first, on the dev machine:
#   SPLIT=1 bash scripts/device/pack_gdn.sh smallpf "H=1,HV=2,K=64,V=64,BV=64,prefetch_gates=1" \
#     gatedpf "H=2,HV=4,K=128,V=128,BV=64,gate_in_kernel=1,l2norm=1,prefetch_gates=1" \
#     vfirstpf "H=1,HV=2,K=64,V=128,BV=64,state_v_first=1,prefetch_gates=1" \
#     h2hv8pf "H=2,HV=8,K=128,V=128,BV=64,prefetch_gates=1" \
#     h16hv32 "H=16,HV=32,K=128,V=128,BV=64" h16hv32pf "H=16,HV=32,K=128,V=128,BV=64,prefetch_gates=1" \
#     h16hv64 "H=16,HV=64,K=128,V=128,BV=64" h16hv64pf "H=16,HV=64,K=128,V=128,BV=64,prefetch_gates=1"
# then on the device (carry devpkg): OUT=$OUT bash devpkg/prefetch_ab.sh
# Checks: the prefetching builds' cases (small and gated exact too); memcheck, racecheck, synccheck on
# smallpf's varlen split, memcheck and racecheck on h2hv8pf at 64x256 (the wide forward); A/B timings at
# (16,32) and (16,64) 4x8192 and 1x32768; ncu per-kernel durations at (16,32) 4x8192 unsplit (run 90:
# inverse 247.6 us, forward 450.3 us).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/prefetch-ab; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in smallpf gatedpf vfirstpf h2hv8pf; do g $c cases --timeout 30; done
g smallpf cases-exact --exact --timeout 30; g gatedpf cases-exact --exact --timeout 30
san() { local c=$1 tool=$2; shift 2
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 80 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for tool in memcheck racecheck synccheck; do san smallpf $tool --varlen 100,300,40,700; done
for tool in memcheck racecheck; do san h2hv8pf $tool --shape 64,256; done
save
for c in h16hv32 h16hv32pf h16hv64 h16hv64pf; do
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
for c in h16hv32 h16hv32pf; do prof $c 4x8192 --shape 4,8192 --gate logsigmoid --no-split; done
save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-220

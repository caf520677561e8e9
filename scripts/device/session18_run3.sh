#!/usr/bin/env bash
# Session 18, run 99: the wide forward with warpgroup_turns=1 (the two warpgroups take turns at issuing
# their gemm groups, qla-order-warpgroups) against the default (warpgroup_local alone).
# Pack: devpkg as for session18_run2.sh, plus h16hv32tt / h16hv64tt = h16hv32 / h16hv64 with
# gdn_chunk_forward_wide rebuilt by `qlac compile gdn_chunk_forward --set "H=16,HV=..,K=128,V=128,BV=128,
# stages=2,initial_state=1,final_state=1,warpgroup_turns=1"`. Carry devpkg.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s18r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
# Correctness of the wide tile (4 or more sequences take it): batched, varlen, and the bench shape.
for c in h16hv32tt h16hv64tt; do
  g $c small --shape 4,256 --timeout 30
  g $c varlen --varlen 100,300,40,700,64,1000 --timeout 30
done
san() { local c=$1 tool=$2; shift 2
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 110 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for tool in memcheck racecheck synccheck; do san h16hv32tt $tool --shape 4,256; done
san h16hv32tt racecheck --varlen 100,300,40,700
save
for round in 1 2; do
  for c in h16hv32 h16hv32tt; do g $c ab4x8192-$round --shape 4,8192 --bench --gate logsigmoid --timeout 40; done
  for c in h16hv64 h16hv64tt; do g $c ab4x8192-$round --shape 4,8192 --bench --gate logsigmoid --timeout 40; done
done
for c in h16hv32 h16hv32tt; do g $c ab1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 60; done
save
prof() { local c=$1; shift
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:gdn_chunk_forward \
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
for c in h16hv32 h16hv32tt h16hv64 h16hv64tt; do prof $c --shape 4,8192 --gate logsigmoid --no-split; done
save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-220 | tail -60

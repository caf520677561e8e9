#!/usr/bin/env bash
# Session 19, run 101: the fused forward (fuse_inverse=1: the inverse in an aux warpgroup, BV = 128, role
# budgets loads / aux / state 24 / 120 / 184) with bf16 operands (precise=0: 16 B of spills) and with
# precise=1 (260 B), against the two-kernel default and the two-kernel precise=0 in the same run.
# Pack: bash scripts/device/pack_session19.sh (the configs below). Carry devpkg.
# Also inverse_products_once (Kc Kcᵀ, Qc Kcᵀ once for a block's two heads, stashed in shared memory).
# Also the chunk inverse as one op inside the warps (inverse_in_warps: mma.sync merges; checked on the
# CPU's SIMT simulator, never yet on a GPU): its checks and sanitizers first, then the A/B.
# Also K = V = 256 with Hᵀ's operand through shared memory (share_state_operand: 476 -> 36 B of spills)
# and Hᵀ parked in shared memory between its conversion and the update (stash_state: 0 B) against the
# register form, (16,32) 1x32768 (the planner runs the narrow kernel unsplit at K = 256).
# Two parts, each inside one device call's 10 minutes: PART=checks (correctness, sanitizers; ≈ 7 min),
# then PART=timing (the A/B and ncu kernel times; ≈ 7 min). PART=all runs both.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
part=${PART:-all}
out=${OUT:-/tmp/out}; w=/tmp/s19r1-$part; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
if [ "$part" != timing ]; then
for c in h2hv4iw h16hv32iw h2hv4po h16hv32po h2hv4f0 h16hv32f0 h16hv32f1 h16hv32f0w; do
  g $c small --shape 4,256 --timeout 30
  g $c varlen --varlen 100,300,40,700,64,1000 --no-split --timeout 30
done
san() { local c=$1 tool=$2; shift 2
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 110 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for c in k256s k256ss; do
  g $c small --shape 2,300 --timeout 30
  g $c varlen --varlen 100,300,40,700 --timeout 30
done
for tool in memcheck racecheck synccheck; do san h2hv4f0 $tool --shape 4,256 --no-split; done
for tool in memcheck racecheck synccheck; do san h2hv4iw $tool --shape 4,256 --no-split; done
san h2hv4po racecheck --shape 4,256 --no-split
g h2hv4iw gated --gate mixed --timeout 60
g h2hv4po gated --gate mixed --timeout 60
san k256ss memcheck --shape 2,300
san k256ss racecheck --shape 2,300
save
fi
[ "$part" = checks ] && { grep -E "FAIL|passed|memcheck|racecheck|synccheck" $w/gdn.log | cut -c1-220 | tail -60; exit 0; }
for round in 1 2; do
  for c in h16hv32 h16hv32iw h16hv32po h16hv32p0 h16hv32f0 h16hv32f0w h16hv32f1; do
    g $c ab4x8192-$round --shape 4,8192 --bench --gate logsigmoid --no-split --timeout 40
  done
done
for c in k256 k256s k256ss; do g $c ab1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 60; done
save
prof() { local c=$1; shift
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum \
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
for c in h16hv32 h16hv32iw h16hv32po h16hv32p0 h16hv32f0 h16hv32f0w h16hv32f1; do prof $c --shape 4,8192 --gate logsigmoid --no-split; done
for c in k256 k256s k256ss; do prof $c --shape 1,8192 --gate logsigmoid --no-split; done
save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-220 | tail -60

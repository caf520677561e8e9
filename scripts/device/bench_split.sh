#!/usr/bin/env bash
# Runs on the GPU machine from the repo root with devpkg/ (pack_gdn.sh with SPLIT=1; configs named
# h<H>hv<HV>, and `smalls` = H=1,HV=2,K=V=64) and .whl carried. In order:
#   1. every small case of `smalls` (CPU and GPU float64 references) and its split path (--shape 1,4096:
#      split, truncated and exact, both gate kinds);
#   2. compute-sanitizer memcheck/racecheck/synccheck on the split path of `smalls` (SAN_SHAPE, 1,2048);
#   3. each shape of SHAPES (H,HV,B,T) in each mode of MODES (truncated-logsigmoid, truncated-mixed,
#      exact-mixed, exact-logsigmoid, nosplit-logsigmoid, nosplit-mixed), checked and timed;
#   4. flash-linear-attention on SHAPES (FLA=1), its error check skipped (FLA_ERR_MAX_TOKENS=0).
# Everything lands in $OUT/out.tgz (at most 8 files come back); PROGRESS rewrites it after each step.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; work=/tmp/qla-out; rm -rf $work; mkdir -p "$out" "$work"
log=$work/gdn.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$log"
save() { tar czf "$out/out.tgz" -C "$work" .; }
gdn() { # CONFIG TAG ARGS...
  local cfg=$pkg/gdn/$1 tag=$2; shift 2
  echo "== $1 $tag: $*" | tee -a "$log"
  timeout 200 $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --json "$work/gdn-$(basename $cfg)-$tag.json" "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | tee -a "$log"
}
modeArgs() { # MODE -> qla_gpu_gdn arguments
  local split=${1%%-*} gate=${1#*-} args
  case $split in exact) args="--exact" ;; nosplit) args="--no-split" ;; *) args="" ;; esac
  echo "$args --gate $gate"
}
if [ -d $pkg/gdn/smalls ]; then
  gdn smalls cases --timeout 60
  for m in truncated-logsigmoid truncated-mixed exact-mixed; do gdn smalls 1x4096-$m --shape 1,4096 $(modeArgs $m) --timeout 60; done
  for tool in memcheck racecheck synccheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/smalls \
      --set "$(cat $pkg/gdn/smalls/settings)" --shape ${SAN_SHAPE:-1,2048} --timeout 150 > /tmp/san.log 2>&1
    echo "gdn smalls-split $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))" | tee -a "$log"
    cat /tmp/san.log >> "$work/sanitizers.log"
  done
  save
fi
for s in ${SHAPES:-}; do
  IFS=, read -r H HV B T <<<"$s"
  for m in ${MODES:-truncated-logsigmoid}; do
    gdn h${H}hv${HV} ${B}x${T}-$m --shape $B,$T --bench $(modeArgs $m) --timeout 120
  done
  save
done
if [ -n "${FLA:-}" ] && [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  FLA_ERR_MAX_TOKENS=${FLA_ERR_MAX_TOKENS:-0} PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout ${FLA_TIMEOUT:-300} \
    python3 $pkg/fla_gdn_shapes.py "$work" ${FLA_SHAPES:-$SHAPES} 2>&1 | tee -a "$log"
fi
save
grep -E "PASS|FAIL|exit [0-9]" "$log" | sed -E 's/rel_l2 o ([^,]*), final state ([^ ]*) vs GPU float64 reference, unwritten 0, /\1 \2 /' | tail -80

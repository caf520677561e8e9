#!/usr/bin/env bash
# Runs on the GPU machine from the repo root with devpkg/ (pack_gdn.sh): each config of CONFIGS on each
# B,T of SHAPES (checked against the GPU float64 reference and timed; ARGS added, e.g. --no-split),
# then flash-linear-attention on FLA_SHAPES (H,HV,B,T; .whl carried). If devpkg/gdn/smalls exists, its
# small cases, its split path and compute-sanitizer memcheck/racecheck/synccheck run first.
# Everything lands in $OUT/out.tgz.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; work=/tmp/qla-variants; rm -rf $work; mkdir -p "$out" "$work"
log=$work/gdn.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$log"
save() { tar czf "$out/out.tgz" -C "$work" .; }
gdn() { # CONFIG TAG ARGS...
  local name=$1 cfg=$pkg/gdn/$1 tag=$2; shift 2
  echo "== $name $tag: $*" >> "$log"
  timeout 200 $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --json "$work/gdn-$name-$tag.json" "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$name /" | tee -a "$log"
}
if [ -d $pkg/gdn/smalls ]; then
  gdn smalls cases --timeout 60
  gdn smalls 1x4096-split --shape 1,4096 --gate mixed --timeout 60
  for tool in memcheck racecheck synccheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/smalls \
      --set "$(cat $pkg/gdn/smalls/settings)" --shape 1,2048 --timeout 150 > /tmp/san.log 2>&1
    echo "gdn smalls $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))" | tee -a "$log"
  done
  save
fi
for s in ${SHAPES:-}; do
  IFS=, read -r B T <<<"$s"
  for c in ${CONFIGS:-}; do gdn $c ${B}x${T} --shape $B,$T --bench --gate logsigmoid --timeout 120 ${ARGS:-}; done
  save
done
if [ -n "${FLA_SHAPES:-}" ] && [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout ${FLA_TIMEOUT:-300} \
    python3 $pkg/fla_gdn_shapes.py "$work" $FLA_SHAPES 2>&1 | tee -a "$log"
fi
save

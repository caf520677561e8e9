#!/usr/bin/env bash
# Session 18: the issue-5 table (truncated and exact) and the issue-4 shapes beside FLA, only on an H200
# (the bars are H200 ratios; H100 ratios run higher). On any other GPU it stops at once to save device time.
# Devpkg as packed for session17_run3.sh; carry devpkg and .whl.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s18h200; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
grep -q H200 $w/gdn.log || { echo "not an H200: stopping"; save; exit 3; }
g() { local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g gated cases --timeout 30; g h2hv8 cases-exact --exact --timeout 30
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
grep -E "FAIL|passed|ms a call|fla" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200 | tail -40

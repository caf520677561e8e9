#!/usr/bin/env bash
# Session 17, run 96: the issue-5 table (five shapes, truncated and exact mode) and the issue-4 GDN shapes
# at the defaults, with flash-linear-attention 0.6.0 on the same shapes in the same process run after ours.
# Pack: scripts/device/pack_bench_defaults.sh (devpkg), carry devpkg and .whl. OUT=$OUT bash devpkg/session17_run2.sh
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; work=/tmp/qla-out; rm -rf $work; mkdir -p "$out" "$work"
log=$work/gdn.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$log"
save() { tar czf "$out/out.tgz" -C "$work" .; }
gdn() { # H,HV,B,T MODE
  local H HV B T; IFS=, read -r H HV B T <<<"$1"
  local cfg=$pkg/gdn/h${H}hv${HV} args=""; [ "$2" = exact ] && args="--exact"
  echo "== h${H}hv${HV} ${B}x${T} $2" | tee -a "$log"
  timeout 200 $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --json "$work/gdn-h${H}hv${HV}-${B}x${T}-$2.json" \
    --shape $B,$T --bench --gate logsigmoid $args --timeout 150 2>&1 | sed 's/ seed=[0-9]*//' | tee -a "$log"
}
split="2,8,1,32768 4,16,1,32768 16,32,1,32768 16,64,1,32768 16,32,1,131072"
batched="16,32,4,8192 16,64,4,8192 16,32,8,4096"
for s in $split $batched; do gdn $s truncated; save; done
for s in $split; do gdn $s exact; save; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 300 \
  python3 $pkg/fla_gdn_shapes.py "$work" $split $batched 2>&1 | tee -a "$log"
save
grep -E "==|PASS|FAIL|ms a call|fla" "$log" | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200 | tail -60

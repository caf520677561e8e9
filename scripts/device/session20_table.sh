#!/usr/bin/env bash
# Session 20: issue 4's three shapes, each candidate config beside the default, and flash-linear-attention
# on the same shapes in the same run. Pack: scripts/device/pack_session20.sh; carry devpkg and .whl.
#   C32="h16hv32 h16hv32iw ..." C64="h16hv64 ..." OUT=$OUT bash devpkg/session20_table.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s20table; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in ${C32:-h16hv32}; do
  g $c 4x8192-truncated --shape 4,8192 --bench --gate logsigmoid --timeout 100
  g $c 8x4096-truncated --shape 8,4096 --bench --gate logsigmoid --timeout 100
done
save
for c in ${C64:-h16hv64}; do g $c 4x8192-truncated --shape 4,8192 --bench --gate logsigmoid --timeout 100; done
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 200 \
  python3 devpkg/fla_gdn_shapes.py "$w" 16,32,4,8192 16,64,4,8192 16,32,8,4096 >> $w/gdn.log 2>&1
save
grep -E "FAIL|passed|ms a call|fla" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200 | tail -40

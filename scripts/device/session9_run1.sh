#!/usr/bin/env bash
# Session 9, first device run (run 43): re-time the issue-3 shapes at the current defaults (after the
# per-column gate factors, 94ae5e6) beside FLA 0.6.0 in the same run — (16,32) 4x8192 and 8x4096,
# (16,64) 4x8192 — and per-kernel GPU times (ncu duration) of one (16,64) 4x8192 call.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r1; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 120 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g h16hv32 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100
g h16hv32 8x4096 --shape 8,4096 --bench --gate logsigmoid --timeout 100
g h16hv64 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100
grep -E "FAIL|passed|ms a call" $w/gdn.log | cut -c1-230; save
P=devpkg/gdn/h16hv64
timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -o /tmp/t -f devpkg/qla_gpu_gdn $P \
  --set "$(cat $P/settings)" --shape 4,8192 --timeout 90 > $w/ncu-run.log 2>&1
ncu -i /tmp/t.ncu-rep --csv --page raw > $w/kernel-times-h16hv64.csv 2>&1
cut -c1-200 $w/kernel-times-h16hv64.csv | head -12; save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLA_ERR_MAX_TOKENS=0 timeout 150 python3 devpkg/fla_gdn_shapes.py $w \
  16,32,4,8192 16,32,8,4096 16,64,4,8192 2>&1 | tee $w/fla.log | grep peer_graph_ms | cut -c1-250
save

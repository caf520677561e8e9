#!/usr/bin/env bash
# Session 8, last device run (run 42, little device time left): the review fixes and the per-column gate
# factors — compute-sanitizer memcheck and racecheck on l2w (K=V=128, L2 norm) 50x130 (the wide kernel,
# 6500 tokens: not a multiple of 64, where the unbounded register loads read past q and k); gated default
# cases; (16,32) 4x8192 default build timed beside FLA 0.6.0.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s8r6; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gpu.txt
g() { local c=$1 tag=$2; shift 2
  timeout 120 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/l2w \
    --set "$(cat devpkg/gdn/l2w/settings)" --shape 50,130 --timeout 90 > $w/san.log 2>&1
  echo "gdn l2w-50x130 $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san.log | tail -1)) $(grep -E 'PASS|FAIL' $w/san.log | cut -c1-150)" | tee -a $w/gdn.log
done
save
g gated cases --timeout 100
g h16hv32 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100
grep -E "FAIL|passed|ms a call" $w/gdn.log | cut -c1-230; save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLA_ERR_MAX_TOKENS=0 timeout 90 python3 devpkg/fla_gdn_shapes.py $w 16,32,4,8192 2>&1 \
  | tee $w/fla.log | grep peer_graph_ms | cut -c1-250
save

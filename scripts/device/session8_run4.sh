#!/usr/bin/env bash
# Session 8, fourth device run (run 40): the table after this session's changes (the L2-norm layout fix,
# precise=1 by default, the spill-free inverse). PART=ours:
#   1. checks: smalls default cases + split path + compute-sanitizer memcheck/racecheck/synccheck on its
#      varlen split; gated and h16hv32 default cases (CPU and GPU float64 references, varlen splits);
#   2. every tuned package (pack_tuned.py: the tiles of tuning/h200.json, now with precise=1) on its shape,
#      and the default h16hv32 package on (16,32) 4x8192 (every kernel spill-free).
# PART=fla: FLA 0.6.0 on the 17 shapes (issue shapes first), no error computation (run 39 has FLA's error).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s8r4-${PART:-ours}; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out-${PART:-ours}.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $w/gpu.txt
g() { # CONFIG TAG ARGS...
  local c=$1 tag=$2; shift 2
  timeout 150 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log
}
if [ "${PART:-ours}" = ours ]; then
  g smalls cases --timeout 60
  g smalls split4096 --shape 1,4096 --gate mixed --timeout 60
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smalls \
      --set "$(cat devpkg/gdn/smalls/settings)" --varlen 100,2300,40 --timeout 100 > $w/san.log 2>&1
    echo "gdn smalls $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san.log | tail -1))" | tee -a $w/gdn.log
  done
  g gated cases --timeout 100
  g h16hv32 cases --timeout 120
  grep -E "FAIL|passed|rror|exit" $w/gdn.log | cut -c1-200; save
  g h16hv32 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 120
  for t in devpkg/gdn/t-*; do
    n=$(basename $t); g $n tuned --shape $(cat $t/shape) --bench --gate logsigmoid --timeout 120; save
  done
  grep -E "ms a call" $w/gdn.log | sed 's/vs GPU float64 reference, //; s/ (.* replay/ (/' | cut -c1-170
  exit 0
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLA_ERR_MAX_TOKENS=0 timeout 560 python3 devpkg/fla_gdn_shapes.py $w \
  16,32,4,8192 16,64,4,8192 16,32,8,4096 2,8,1,32768 4,16,1,32768 16,32,1,32768 16,64,1,32768 16,32,1,131072 \
  16,16,1,2048 16,16,1,32768 16,32,1,8192 16,48,1,32768 16,64,2,16384 2,8,1,2048 2,8,1,8192 2,8,8,1024 8,32,1,32768 \
  2>&1 | tee $w/fla.log | grep -c peer_graph_ms
save

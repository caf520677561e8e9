#!/usr/bin/env bash
# Session 8, first device run. PART=checks (one command):
#   1. gated_ab.sh: the run-36 NaN of the gated config localised (gated, gatedold = gated without the
#      stmatrix.trans Oᵀ store, gk = in-kernel gate only, l2 = L2 norm only, plain), default cases and
#      4x8192 forced split;
#   2. smalls: default cases, the split path, compute-sanitizer memcheck/racecheck/synccheck;
#   3. h16hv32 default cases (the new varlen split: the 33000-token case splits on (16,32)).
# PART=perf (a second command on the held machine): the spill-free variants p32/p64 (precise=1,
#   inverse_blocks_per_sm=2) beside the defaults h16hv32/h16hv64 on 4x8192 (+ 8x4096 for (16,32)), the
#   varlen split timed on (16,32) 100+32768+132 (truncated and exact), FLA 0.6.0 on the same shapes with
#   its own error (FLA_ERR_MAX_TOKENS covers 32768 tokens).
# Everything lands in $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s8r1-${PART:-checks}; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out-${PART:-checks}.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $w/gpu.txt
g() { # CONFIG TAG ARGS...
  local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log
}
if [ "${PART:-checks}" = checks ]; then
  OUT=$w bash devpkg/gated_ab.sh > $w/gated_ab.out 2>&1; cat $w/gated_ab.out | tail -40; save
  g smalls cases --timeout 60
  g smalls split4096 --shape 1,4096 --gate mixed --timeout 60
  for tool in memcheck racecheck synccheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smalls \
      --set "$(cat devpkg/gdn/smalls/settings)" --varlen 100,2300,40 --timeout 120 > $w/san-$tool.log 2>&1
    echo "smalls $tool varlen-split: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san-$tool.log | tail -1))" | tee -a $w/gdn.log
  done
  save
  g h16hv32 cases --timeout 150
  grep -E "FAIL|passed|rror|exit|nan" $w/gdn.log | cut -c1-200; save
  exit 0
fi
for c in h16hv32 p32 h16hv64 p64; do g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 120; done; save
for c in h16hv32 p32; do g $c 8x4096 --shape 8,4096 --bench --gate logsigmoid --timeout 120; done; save
g h16hv32 varlen --varlen 100,32768,132 --bench --gate logsigmoid --timeout 120
g h16hv32 varlen-exact --varlen 100,32768,132 --bench --gate logsigmoid --exact --timeout 120
g h16hv32 varlen-nosplit --varlen 100,32768,132 --bench --gate logsigmoid --no-split --timeout 120
grep -E "PASS|FAIL|rror" $w/gdn.log | cut -c1-220; save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLA_ERR_MAX_TOKENS=33000 timeout 330 python3 devpkg/fla_gdn_shapes.py $w \
  16,32,4,8192 16,64,4,8192 16,32,8,4096 16,32,varlen:100:32768:132 2>&1 | tee $w/fla.log | grep -v Warn | tail -12
save

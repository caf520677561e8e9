#!/usr/bin/env bash
# Session 11, run 67: the session's defaults (the inverse's f16 merges, inverse_heads -1 = 2 where HV / H
# is even, the host reading the inverse's heads from its build's grid): small and gated default cases,
# memcheck on small's varlen split, (16,32) 4x8192 and (2,8) 1x32768 with FLA 0.6.0 in the same run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s11r7; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 50; g gated cases --timeout 50
g h32 4x8192 --shape 4,8192 --bench --timeout 50; g h28 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 50
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
  --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40 --timeout 50 > $w/san-memcheck.log 2>&1
echo "gdn small memcheck: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-memcheck.log | tail -1)) varlen 100,300,40" >> $w/gdn.log
grep -E "FAIL|passed|memcheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site FLA_ERR_MAX_TOKENS=0 timeout 80 python3 devpkg/fla_gdn_shapes.py $w 16,32,4,8192 2,8,1,32768 2>&1 | tail -2 | cut -c1-160 | tee -a $w/gdn.log
save

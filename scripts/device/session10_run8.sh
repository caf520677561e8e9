#!/usr/bin/env bash
# Session 10, run 60: gdn_split_correct with S held as stored (K x 64: a segment's end and start are plain
# row loads and stores; the product takes A and S from shared memory). Checks: small and gated default
# cases truncated and exact, memcheck / synccheck on small's exact varlen split; timing (logsigmoid gates,
# truncated) on (2,8) 1x32768 at 16 and 32 segments, (4,16) and (16,32) 1x32768, (2,8) exact; FLA 0.6.0
# in the same run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r8; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 90 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated; do g $c cases --timeout 80; g $c cases-exact --exact --timeout 80; done
for tool in memcheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,700,40 --exact --segment-tokens 128 --timeout 100 > $w/san-$tool.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,700,40 exact, 128-token segments" >> $w/gdn.log
done
save
for r in 1 2; do
  g h28 1x32768-16ways-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80
  g h28 1x32768-32ways-$r --shape 1,32768 --bench --gate logsigmoid --segment-tokens 1024 --timeout 80
  g h416 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80
  g h32 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80
done
g h28 1x32768-exact --shape 1,32768 --bench --gate logsigmoid --exact --timeout 80
grep -E "FAIL|passed|ms a call|small (mem|sync)" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site FLA_ERR_MAX_TOKENS=0 timeout 200 python3 devpkg/fla_gdn_shapes.py $w 2,8,1,32768 4,16,1,32768 16,32,1,32768 2>&1 | tail -3 | cut -c1-160 | tee -a $w/gdn.log
save

#!/usr/bin/env bash
# Session 11, run 64: gdn_split_correct loads a segment's end before its transition run count is known
# (the two loads' latencies overlap on the correction's dependent steps). Checks: small and gated default
# cases truncated and exact, memcheck / synccheck on small's exact varlen split; (2,8) and (4,16) 1x32768
# truncated (logsigmoid gates) against 851e0b6 (base*) twice each; FLA in the same run.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s11r4; rm -rf $w; mkdir -p $w $out
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
  for c in h28 base28; do g $c 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80; done
  for c in h416 base416; do g $c 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80; done
done
grep -E "FAIL|passed|ms a call|small (mem|sync)" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site FLA_ERR_MAX_TOKENS=0 timeout 150 python3 devpkg/fla_gdn_shapes.py $w 2,8,1,32768 4,16,1,32768 2>&1 | tail -2 | cut -c1-160 | tee -a $w/gdn.log
save

#!/usr/bin/env bash
# Session 10, run 58: gdn_split_correct skips a segment's transition product when its transition run
# ran no chunk (the truncated split's decaying heads: S_{s+1} = E_s, loads and stores only). new* (this
# build) against base* (bacaf97, with its own qla_gpu_gdn: the correction's tensors changed) on the
# split shapes of issue 5, FLA 0.6.0 in the same run; checks: small and gated default cases (their
# split cases), memcheck / synccheck on small; ncu durations of new28's kernels (one call).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r6; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2; local bin=devpkg/qla_gpu_gdn; [[ $c == base* ]] && bin=devpkg/qla_gpu_gdn_base
  timeout 90 $bin devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated; do g $c cases --timeout 80; done
for tool in memcheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,700,40 --timeout 100 > $w/san-$tool.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,700,40" >> $w/gdn.log
done
save
for r in 1 2; do for h in 28 416 32; do for c in base$h new$h; do
  g $c 1x32768-$r --shape 1,32768 --bench --gate logsigmoid --timeout 80
done; done; done
for c in base32 new32; do g $c 1x131072 --shape 1,131072 --bench --gate logsigmoid --timeout 80; done
grep -E "FAIL|passed|ms a call|small (mem|sync)" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-170
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site FLA_ERR_MAX_TOKENS=0 timeout 240 python3 devpkg/fla_gdn_shapes.py $w 2,8,1,32768 4,16,1,32768 16,32,1,32768 16,32,1,131072 2>&1 | tail -5 | tee -a $w/gdn.log
save

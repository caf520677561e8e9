#!/usr/bin/env bash
# Session 10, run 59: the exact split after the correction change (844f4a2): every default case of small
# and gated with --exact (the product path of gdn_split_correct on every segment), memcheck and synccheck
# on small's varlen split exact, and (2,8) / (16,32) 1x32768 exact and truncated timed.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r7; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 90 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in small gated; do g $c cases-exact --exact --timeout 80; done
for tool in memcheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
    --set "$(cat devpkg/gdn/small/settings)" --varlen 100,700,40 --exact --segment-tokens 128 --timeout 100 > $w/san-$tool.log 2>&1
  echo "gdn small $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,700,40 exact, 128-token segments" >> $w/gdn.log
done
for c in h28 h32; do
  g $c 1x32768-exact --shape 1,32768 --bench --gate logsigmoid --exact --timeout 80
  g $c 1x32768-trunc --shape 1,32768 --bench --gate logsigmoid --timeout 80
done
grep -E "FAIL|passed|ms a call|small (mem|sync)" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200
save

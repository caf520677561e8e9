#!/usr/bin/env bash
# Session 13, run 81: exact mode at the log-gate floor -88 (SplitPolicy::exactLogGateFloor): cases
# truncated and exact (mixed gates include zero-decay heads), memcheck on small's varlen split exact;
# the issue-5 shapes in both modes with logsigmoid gates (run 79 truncated: (2,8) 0.210, (4,16) 0.375 ms).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s13r5; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g small cases --timeout 30; g gated cases --timeout 30
g small cases-exact --exact --timeout 30; g gated cases-exact --exact --timeout 30
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/small \
  --set "$(cat devpkg/gdn/small/settings)" --varlen 100,300,40,700 --exact --timeout 50 > /tmp/san.log 2>&1
echo "gdn small memcheck: exit $? ($(grep -E 'ERROR SUMMARY' /tmp/san.log | tail -1)) varlen 100,300,40,700 --exact" >> $w/gdn.log
save
for c in h2hv8 h4hv16 h16hv32 h16hv64; do
  g $c log --shape 1,32768 --bench --gate logsigmoid --timeout 30
  g $c log-exact --shape 1,32768 --bench --gate logsigmoid --exact --timeout 30
done
g h16hv32 log131k --shape 1,131072 --bench --gate logsigmoid --timeout 60
g h16hv32 log131k-exact --shape 1,131072 --bench --gate logsigmoid --exact --timeout 60
g h2hv8 mixed-exact --shape 1,32768 --bench --gate mixed --exact --timeout 30
g h2hv8 mixed --shape 1,32768 --bench --gate mixed --timeout 30
save
grep -E "FAIL|passed|check:|memcheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200

#!/usr/bin/env bash
# Session 9, run 50: K and V other than 128 on the GPU (issue 3: K, V in {64, 128, 256}): the default cases
# (T = 1, 63, 64, 65, 1000 against the CPU float64 reference, varlen 1..16384 and a 33000-token mix against
# the GPU one, 4x8192 timed; mixed gates with zero-decay heads, random initial states) of
#   k256 (H=2,HV=4,K=V=256: narrow state kernel, unsplit), k128v256 (K=128,V=256, + the wide kernel),
#   k256v128 (K=256,V=128), k128v64 (K=128,V=64), k64v64s (K=V=64, with the split kernels);
# compute-sanitizer memcheck on k256, varlen 100,700,40.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r7; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 45 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; echo "$c $tag exit ${PIPESTATUS[0]}" >> $w/gdn.log; }
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/k256 \
  --set "$(cat devpkg/gdn/k256/settings)" --varlen 100,700,40 --timeout 50 > $w/san.log 2>&1
echo "gdn k256 memcheck: exit $? ($(grep -E 'ERROR SUMMARY' $w/san.log | tail -1)) varlen 100,700,40" | tee -a $w/gdn.log
for c in k256 k128v256 k256v128 k128v64 k64v64s; do g $c cases --timeout 40; save; done
grep -E "FAIL|passed|exit|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-170
save

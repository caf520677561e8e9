#!/usr/bin/env bash
# Session 10, run 53: gdn_chunk_forward with fuse_inverse (each chunk's a and aqk made by an aux
# warpgroup inside the forward, handed to the state warpgroups through shared-memory rings; no
# gdn_chunk_inverse launch). Checks: the default cases on fzsmall (K = V = 64), fz64 and fz128; compute-
# sanitizer memcheck, racecheck and synccheck on fzsmall. Timing on (16,32) 4x8192 and 8x4096 beside the
# base (two kernels): fz64 (BV = 64, three warpgroups, no spills, 2 blocks a head), fz128 (BV = 128, four
# warpgroups, the state spills at 160 registers), fz128p0 (precise = 0, 176 registers, fewer spills).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 70 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g fzsmall cases --timeout 60
for tool in memcheck racecheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/fzsmall \
    --set "$(cat devpkg/gdn/fzsmall/settings)" --varlen 100,700,40 --timeout 80 > $w/san-$tool.log 2>&1
  echo "gdn fzsmall $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,700,40" >> $w/gdn.log
done
save
for r in 1 2; do for c in base32 fz64 fz128 fz128p0; do
  g $c 4x8192-$r --shape 4,8192 --bench --gate logsigmoid --timeout 60
done; done
for c in base32 fz128 fz128p0; do g $c 8x4096 --shape 8,4096 --bench --gate logsigmoid --timeout 60; done
grep -E "FAIL|passed|check:|ms a call|fzsmall (mem|race|sync)" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
for c in fz64 fz128; do g $c cases --timeout 60; done
grep -E "FAIL|passed" $w/gdn.log | tail -4
save

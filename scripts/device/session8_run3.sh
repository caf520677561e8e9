#!/usr/bin/env bash
# Session 8, third device run (run 39). PART=checks:
#   1. the fix of c873df9 (a 64-row fragment on 256 threads no longer takes a one-warpgroup accumulator
#      layout) with the split guard for in-kernel gates / L2 norm removed: gated, l2, gk default cases (their
#      4x8192 case now splits), 64x512 (the wide state kernel, unsplit), 4x8192 split in 4096-token
#      segments; compute-sanitizer memcheck/racecheck/synccheck on l2w (K=V=128, L2 norm) 64x128 (wide)
#      and 2x2048 (split), and on smalls' varlen split;
#   2. precise=1 (H enters the tensor cores as bf16 only; no spills in either forward tile) against the
#      default precise=2, same run, on (16,32) 4x8192 / 8x4096 / 1x32768 / 1x131072, (16,64) 4x8192 /
#      1x32768, (2,8) and (4,16) 1x32768 (hNN = default, qNN = precise=1).
# PART=fla: FLA 0.6.0 on the same shapes with its own error where it fits (FLA_ERR_MAX_TOKENS).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s8r3-${PART:-checks}; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out-${PART:-checks}.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $w/gpu.txt
g() { # CONFIG TAG ARGS...
  local c=$1 tag=$2; shift 2
  timeout 150 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log
}
san() { # CONFIG TAG ARGS...
  local c=$1 tag=$2; shift 2
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
      --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 100 > $w/san.log 2>&1
    echo "gdn $c-$tag $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $w/san.log | tail -1))" | tee -a $w/gdn.log
    grep -m2 -A10 "Invalid\|Race\|hazard\|Barrier" $w/san.log >> $w/san-details.log
  done
}
if [ "${PART:-checks}" = checks ]; then
  for c in gated l2 gk; do
    g $c cases --timeout 100
    g $c wide64x512 --shape 64,512 --timeout 60
    g $c split4096 --shape 4,8192 --segment-tokens 4096 --timeout 60
  done
  grep -E "PASS|FAIL|rror|passed" $w/gdn.log | cut -c1-200; save
  san l2w wide --shape 64,128
  san l2w split --shape 2,2048
  san smalls varlensplit --varlen 100,2300,40
  save
  for s in 4,8192 8,4096 1,32768 1,131072; do for c in h16hv32 q32; do g $c ${s/,/x} --shape $s --bench --gate logsigmoid --timeout 120; done; done
  for s in 4,8192 1,32768; do for c in h16hv64 q64; do g $c ${s/,/x} --shape $s --bench --gate logsigmoid --timeout 120; done; done
  for c in h2hv8 q2hv8 h4hv16 q4hv16; do g $c 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 120; done
  grep -E "ms a call" $w/gdn.log | sed 's/vs GPU float64 reference, //' | cut -c1-200; save
  exit 0
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLA_ERR_MAX_TOKENS=32768 timeout 540 python3 devpkg/fla_gdn_shapes.py $w \
  16,32,4,8192 16,32,8,4096 16,32,1,32768 16,64,4,8192 16,64,1,32768 2,8,1,32768 4,16,1,32768 16,32,1,131072 2>&1 \
  | tee $w/fla.log | grep -v Warn | cut -c1-300 | tail -12
save

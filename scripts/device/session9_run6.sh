#!/usr/bin/env bash
# Session 9, run 49: the inverse at 4 blocks an SM. base = the default build; b4 = inverse_blocks_per_sm=4
# (128 registers, 184 B of spills); g2 = Γ made twice (its second use from a reloaded gate column, so it
# is not live across the inversion: 64 ex2 a thread instead of 32); g2b4 = both (76 B of spills).
# (16,32) 4x8192 twice each, interleaved, then (16,64) 4x8192 base / g2b4; ncu durations of the inverse.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r6; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 120 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for r in 1 2; do
  for c in base b4 g2 g2b4; do g $c 4x8192-$r --shape 4,8192 --bench --gate logsigmoid --timeout 100; done
done
for c in g64base g64g2b4; do g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100; done
grep -E "FAIL|ms a call" $w/gdn.log | sed -E 's/rel_l2 o ([^,]*), final state ([^ ]*) vs GPU float64 reference, unwritten 0, //' | cut -c1-150; save
for c in base b4 g2 g2b4; do
  timeout 60 ncu --clock-control none -k regex:gdn_chunk_inverse --metrics gpu__time_duration.sum devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" --shape 4,8192 --no-split --timeout 50 2>&1 | grep -E "gpu__time_duration" | sed "s/^/$c inverse /" | tee -a $w/gdn.log
done
save

#!/usr/bin/env bash
# Session 11, run 66: gdn_chunk_inverse variants with the f16 merges (now spill-free): inverse_heads=2
# (q, k loaded once for a key head's two value heads), inverse_stages=2 (q, k by TMA), both; against the
# default. (16,32) 4x8192: the call (checked against the GPU float64 reference) and ncu of the inverse.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s11r6; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 90 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in h32 h32h2 h32s2 h32h2s2; do g $c 4x8192 --shape 4,8192 --bench --timeout 80; done
save
for c in h32 h32h2 h32s2 h32h2s2; do
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"gdn_chunk_inverse" \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --shape 4,8192 --timeout 80 \
    > $w/ncu-$c.csv 2> $w/ncu-$c.err
  echo "ncu $c inverse: $(grep gdn_chunk_inverse $w/ncu-$c.csv | tail -1 | awk -F'","' '{print $NF}' | tr -d '"') ns" >> $w/gdn.log
done
grep -E "FAIL|ms a call|ncu" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save

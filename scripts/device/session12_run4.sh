#!/usr/bin/env bash
# Session 12, run 72: the split's main pass with the narrow tile (BV = 64, 128 threads, two blocks an SM)
# instead of the wide one (BV = 128, one block an SM) the planner takes when its grid fills the GPU: run 71
# measured the narrow forward at 2.9 µs a chunk unsplit and the wide one at 3.7 in the split.
# Packages without the wide tile (stages given) force the narrow one.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s12r4; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 60 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for r in 1 2; do
  for c in h2hv8 h2hv8n h2hv8n2; do g $c log-$r --shape 1,32768 --bench --gate logsigmoid --timeout 50; done
  for c in h4hv16 h4hv16n h16hv32 h16hv32n; do g $c log-$r --shape 1,32768 --bench --gate logsigmoid --timeout 50; done
done
for L in 1024 1536; do for c in h2hv8n; do g $c log-seg$L --shape 1,32768 --bench --gate logsigmoid --segment-tokens $L --timeout 50; done; done
for L in 2048 3072; do g h4hv16n log-seg$L --shape 1,32768 --bench --gate logsigmoid --segment-tokens $L --timeout 50; done
g h16hv32n log-seg4096 --shape 1,32768 --bench --gate logsigmoid --segment-tokens 4096 --timeout 50
g h16hv32 log-4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 50
g h16hv32n log-4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 50
grep -E "FAIL|passed|ms a call" $w/gdn.log | grep -v passed | sed -E 's/vs GPU float64 reference, unwritten 0, //;s/rel_l2 o .* final state [0-9.e-]*//' | cut -c1-200
save

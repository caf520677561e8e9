#!/usr/bin/env bash
# Session 20, one device call for everything session19_run1.sh and session20_table.sh would do in three,
# in order of what a decision needs first (each part saved as it ends, so a cut run still returns them):
#  1. checks: K = 256's default (stash_state, share_state_operand: never yet on a GPU), inverse_in_warps
#     (mma.sync merges), the fused forward with it, inverse_products_once; memcheck / racecheck / synccheck;
#  2. the A/B at (16,32) 4x8192 (f0wn: the fused forward without the gate/β ring, as before session 20) and K = 256's forms at 1x32768;
#  3. issue 4's three shapes with the candidates beside flash-linear-attention.
# Pack: scripts/device/pack_session20.sh. Carry devpkg and .whl.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s20r1; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
stamp() { echo "== $1 at $SECONDS s" >> $w/gdn.log; }
g() { local c=$1 tag=$2; shift 2
  timeout 120 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
san() { local c=$1 tool=$2; shift 2
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 80 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
stamp checks
g k256ss small --shape 2,300 --timeout 30
g k256ss varlen --varlen 100,300,40,700 --timeout 30
san k256ss memcheck --shape 2,300
san k256ss racecheck --shape 2,300
for c in h2hv4iw h2hv4po h2hv4f0 h16hv32f0w; do
  g $c small --shape 4,256 --timeout 30
  g $c varlen --varlen 100,300,40,700,64,1000 --no-split --timeout 30
done
g h2hv4iw gated --gate mixed --timeout 60
san h2hv4iw racecheck --shape 4,256 --no-split
san h2hv4iw synccheck --shape 4,256 --no-split
san h2hv4po racecheck --shape 4,256 --no-split
san h2hv4f0 racecheck --shape 4,256 --no-split
save; stamp ab
for c in h16hv32 h16hv32iw h16hv32po h16hv32p0 h16hv32f0 h16hv32f0w h16hv32f0wn h16hv32f1; do
  g $c ab4x8192 --shape 4,8192 --bench --gate logsigmoid --no-split --timeout 40
done
for c in k256 k256ss; do g $c ab1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 60; done
save; stamp table
for c in ${C32:-h16hv32iw h16hv32f0w}; do g $c 8x4096-truncated --shape 8,4096 --bench --gate logsigmoid --timeout 60; done
g h16hv32 8x4096-truncated --shape 8,4096 --bench --gate logsigmoid --timeout 60
for c in ${C64:-h16hv64 h16hv64iw h16hv64po h16hv64f0w}; do
  g $c 4x8192-truncated --shape 4,8192 --bench --gate logsigmoid --timeout 60
done
save; stamp fla
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 200 \
  python3 devpkg/fla_gdn_shapes.py "$w" 16,32,4,8192 16,64,4,8192 16,32,8,4096 >> $w/gdn.log 2>&1
stamp end; save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call|fla|==" $w/gdn.log \
  | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200 | tail -70

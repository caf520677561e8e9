#!/usr/bin/env bash
# Session 18, run 98: the defaults with warpgroup_local (run 97's win) checked and timed.
# Pack: pack_bench_defaults.sh, then KEEP_PKG=1 SPLIT=1 pack_gdn.sh gated "H=2,HV=4,K=128,V=128,BV=64,
# gate_in_kernel=1,l2norm=1" gatedwide "H=16,HV=32,...,gate_in_kernel=1,l2norm=1" h16hv32nowl
# "H=16,HV=32,K=128,V=128,BV=64,warpgroup_local=0" h16hv64nowl (same, HV=64). Carry devpkg and .whl.
# 1. checks (cases truncated and exact; gatedwide takes the wide tile with l2 norm: per-warpgroup gate
#    broadcasts beside block-wide norm reductions) and sanitizers; 2. A/B against warpgroup_local=0;
# 3. the issue-5 table (truncated and exact) and the issue-4 shapes beside FLA.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s18r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 200 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$c-$tag.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in gated h2hv8; do g $c cases --timeout 30; g $c cases-exact --exact --timeout 30; done
g gatedwide small --shape 4,512 --timeout 30
g gatedwide varlen --varlen 100,300,40,700,64,1000 --timeout 30
g h16hv32 varlen --varlen 100,300,40,700,64,1000 --timeout 30
san() { local c=$1 tool=$2; shift 2
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/$c \
    --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 110 > /tmp/san.log 2>&1
  echo "gdn $c $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1)) $*" >> $w/gdn.log; }
for tool in memcheck racecheck synccheck; do san gatedwide $tool --shape 4,256; done
san h2hv8 racecheck --shape 64,256
save
for c in h16hv32nowl h16hv32 h16hv64nowl h16hv64; do g $c ab4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 40; done
save
t() { # H,HV,B,T MODE
  local H HV B T; IFS=, read -r H HV B T <<<"$1"
  local args=""; [ "$2" = exact ] && args="--exact"
  g h${H}hv${HV} ${B}x${T}-$2 --shape $B,$T --bench --gate logsigmoid $args --timeout 150
}
split="2,8,1,32768 4,16,1,32768 16,32,1,32768 16,64,1,32768 16,32,1,131072"
batched="16,32,4,8192 16,64,4,8192 16,32,8,4096"
for s in $split $batched; do t $s truncated; save; done
for s in $split; do t $s exact; save; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 240 \
  python3 devpkg/fla_gdn_shapes.py "$w" $split $batched >> $w/gdn.log 2>&1
save
grep -E "FAIL|passed|memcheck|racecheck|synccheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-200 | tail -60

#!/usr/bin/env bash
# Session 9, run 47: issue 3's cold-compile bar for the whole GDN forward set on the GPU machine's host
# (16 cores): `qlac load gdn` (qla::gdn::buildChunkForward with the planner's kernels: the four of a call,
# the wide state kernel and the context split's six, compiled side by side) into an empty cache directory,
# three times, then once warm. devpkg: qlac.xz (stripped, xz) and lib/libfmt.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r4; rm -rf $w; mkdir -p $w $out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/compile.log
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a $w/compile.log
xz -dc devpkg/qlac.xz > /tmp/qlac && chmod +x /tmp/qlac
S="H=16,HV=32,K=128,V=128,initial_state=1,final_state=1"
for i in 1 2 3; do
  rm -rf /tmp/cold; echo "cold $i:" | tee -a $w/compile.log
  ( time QLA_CACHE_DIR=/tmp/cold /tmp/qlac load gdn --set $S ) 2>&1 | tee -a $w/compile.log
done
echo "warm:" | tee -a $w/compile.log
( time QLA_CACHE_DIR=/tmp/cold /tmp/qlac load gdn --set $S ) 2>&1 | tee -a $w/compile.log
cp $w/compile.log $out/

#!/usr/bin/env bash
# Builds what the GPU machine needs for the GDN forward runs into devpkg/ (git-ignored, carried by the
# device tool): the GDN forward kernels AOT-compiled by qlac (one folder per config), the MLIR-free GPU
# test binary and its libfmt, and the device scripts.
#   pack_gdn.sh [NAME SETTINGS]...   (default: the benchmark configs below)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
pkg=$root/devpkg
[ -n "${KEEP_PKG:-}" ] || rm -rf "$pkg"   # KEEP_PKG=1: add to what pack_gemm.sh put there
mkdir -p "$pkg/lib" "$pkg/gdn"
qlac=$build/tools/qlac/qlac
gdn() {
  for k in gdn_offsets gdn_cumsum gdn_chunk_inverse gdn_chunk_forward; do
    "$qlac" compile $k --set "$2,initial_state=1,final_state=1" -o "$pkg/gdn/$1/$k" >/dev/null
  done
  # V a multiple of 128, BV = 64 and K <= 128: also the state kernel with BV = 128 and TMA rings, which
  # the planner (ChunkForward) takes when its grid fills the GPU (as gdnForwardPackage).
  if [[ "$2" == *BV=64* && ! "$2" =~ (^|,)stages= && ( "$2" == *V=128* || "$2" == *V=256* ) && "$2" != *K=256* ]]; then
    "$qlac" compile gdn_chunk_forward --set "${2/BV=64/BV=128},stages=2,initial_state=1,final_state=1" \
      -o "$pkg/gdn/$1/gdn_chunk_forward_wide" >/dev/null
  fi
  # SPLIT=1: also the context split's kernels (for configs with K = V <= 128, states [K][V] and no roles;
  # docs/context-split.md), which ChunkForward runs when a fixed-length call leaves SMs idle.
  local kdim vdim
  kdim=$(grep -oE '(^|,)K=[0-9]+' <<<"$2" | grep -oE '[0-9]+' || echo 128)
  vdim=$(grep -oE '(^|,)V=[0-9]+' <<<"$2" | grep -oE '[0-9]+' || echo 128)
  if [ -n "${SPLIT:-}" ] && [ "$kdim" = "$vdim" ] && [ "$kdim" -le 128 ] && [[ "$2" != *state_v_first=1* && "$2" != *roles=1* ]]; then
    "$qlac" compile gdn_split_offsets --set "$2" -o "$pkg/gdn/$1/gdn_split_offsets" >/dev/null
    "$qlac" compile gdn_split_correct --set "$2" -o "$pkg/gdn/$1/gdn_split_correct" >/dev/null
    "$qlac" compile gdn_split_windows --set "$2" -o "$pkg/gdn/$1/gdn_split_windows" >/dev/null
    "$qlac" compile gdn_cumsum --set "$2,chunk_totals=1" -o "$pkg/gdn/$1/gdn_split_cumsum" >/dev/null
    # The runs are never fused (as ChunkForwardJit's set): a fused main forward beside the inverse's a, aqk.
    local runs; runs=$(sed -E 's/(^|,)fuse_inverse=1(,|$)/\1/; s/,$//' <<<"$2")
    "$qlac" compile gdn_chunk_forward --set "$runs,split_run=1,initial_state=1,final_state=1" \
      -o "$pkg/gdn/$1/gdn_chunk_forward_state" >/dev/null
    "$qlac" compile gdn_chunk_forward --set "$runs,split_run=2,initial_state=1,final_state=1" \
      -o "$pkg/gdn/$1/gdn_chunk_forward_transition" >/dev/null
  fi
  echo "$2" > "$pkg/gdn/$1/settings"; echo "compiled gdn $1: $2"
}
if [ $# -eq 0 ]; then
  set -- small "H=1,HV=2,K=64,V=64,BV=64" gated "H=2,HV=4,K=128,V=128,BV=64,gate_in_kernel=1,l2norm=1" \
         vfirst "H=1,HV=2,K=64,V=128,BV=64,state_v_first=1" \
         h16hv32 "H=16,HV=32,K=128,V=128,BV=64" h16hv64 "H=16,HV=64,K=128,V=128,BV=64"
fi
while [ $# -ge 2 ]; do gdn "$1" "$2"; shift 2; done
cp "$build/tests/qla_gpu_gdn" "$pkg/"
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 "$pkg/lib/"
cp "$root/scripts/device/"*.py "$root/scripts/device/"*.sh "$pkg/"
du -sh "$pkg"

#!/usr/bin/env bash
# Builds what the GPU machine needs for the GEMM checks into devpkg/ (git-ignored, carried by the
# device tool): AOT-compiled kernels from qlac, the MLIR-free GPU test binary and its libfmt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build}
pkg=$root/devpkg
rm -rf "$pkg" && mkdir -p "$pkg/kernels" "$pkg/lib"
qlac=$build/tools/qlac/qlac
compile() { "$qlac" compile gemm --set "$2" -o "$pkg/kernels/$1" >/dev/null; echo "compiled $1: $2"; }
compile small    M=256,N=256,K=256,BM=128,BN=128,stages=2
compile ragged   M=1000,N=700,K=520
compile m2k      M=2048,N=1536,K=768,BN=128,stages=3
compile bm64     M=512,N=384,K=4096,BM=64,BN=128,stages=2
compile sq1024   M=1024,N=1024,K=1024
compile sq4096   M=4096,N=4096,K=4096
compile sq8192   M=8192,N=8192,K=8192
compile sq8192n128 M=8192,N=8192,K=8192,BN=128,stages=5
compile sq8192k128 M=8192,N=8192,K=8192,BK=128,BN=128,stages=3
# GDN forward kernels, one folder per config (the three kernels each).
gdn() {
  for k in gdn_offsets gdn_cumsum gdn_chunk_inverse gdn_chunk_forward; do
    "$qlac" compile $k --set "$2,initial_state=1,final_state=1" -o "$pkg/gdn/$1/$k" >/dev/null 2>&1
  done
  echo "$2" > "$pkg/gdn/$1/settings"; echo "compiled gdn $1: $2"
}
gdn small H=1,HV=2,K=64,V=64,BV=64
gdn gated H=2,HV=4,K=128,V=128,BV=64,gate_in_kernel=1,l2norm=1
gdn q35b H=16,HV=32,K=128,V=128,BV=64
cp "$build/tests/qla_gpu_gemm" "$build/tests/qla_gpu_gdn" "$pkg/"
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 "$pkg/lib/"
cp "$root/scripts/device/torch_gemm.py" "$root/scripts/device/fla_gdn.py" "$root/scripts/device/run_gemm.sh" "$pkg/"
du -sh "$pkg"

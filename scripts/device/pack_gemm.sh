#!/usr/bin/env bash
# Builds what the GPU machine needs for the GEMM checks into devpkg/ (git-ignored, carried by the
# device tool): AOT-compiled kernels from qlac, the MLIR-free GPU test binary and its libfmt.
# (The GDN forward has its own: pack_gdn.sh, run_gdn.sh, bench_gdn.sh.)
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
# Warp-specialized: one producer warpgroup (TMA), two consumer warpgroups (wgmma).
compile small_ws  M=256,N=256,K=256,BM=128,BN=128,stages=2,specialize=1
compile ragged_ws M=1000,N=700,K=520,specialize=1
compile sq4096ws  M=4096,N=4096,K=4096,specialize=1
compile sq8192ws  M=8192,N=8192,K=8192,specialize=1
# Also a warpgroup loading A into registers and handing it to the consumers through a compiler-built ring
# (a register tile crossing roles, as the GDN role split needs); BN = 128: 512 threads start at 128 registers.
compile small_ws2  M=256,N=256,K=256,BM=128,BN=128,stages=2,specialize=2
compile ragged_ws2 M=1000,N=700,K=520,BN=128,specialize=2
compile sq4096ws2  M=4096,N=4096,K=4096,BN=128,specialize=2
compile sq8192ws2  M=8192,N=8192,K=8192,BN=128,specialize=2
cp "$build/tests/qla_gpu_gemm" "$pkg/"
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 "$pkg/lib/"
cp "$root/scripts/device/torch_gemm.py" "$root/scripts/device/run_gemm.sh" "$pkg/"
du -sh "$pkg"

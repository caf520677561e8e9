#!/usr/bin/env bash
# The main job. Sets up and builds; compiles the GDN forward kernels and the GEMM ahead of time with
# qlac and prints what ptxas reports for each (registers, spills, shared memory); runs the GDN
# forward DSL programs on the CPU interpreter against the float64 recurrence. With a GPU
# (nvidia-smi works) it also runs and times the GDN forward (through qla::gdn::ChunkForward) and
# the GEMM on the GPU; without one it says so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
ptxas=/usr/local/cuda/bin/ptxas

"$root/scripts/build.sh"

ptx_stats() { # dir -> "regs spill-st/ld static-smem dynamic-smem"
  local info regs st ld smem dyn
  info=$("$ptxas" -arch=sm_90a -O3 -v "$1/kernel.ptx" -o "$1/ptxas.cubin" 2>&1)
  regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$info")
  st=$(sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' <<<"$info")
  ld=$(sed -n 's/.* \([0-9]*\) bytes spill loads.*/\1/p' <<<"$info")
  smem=$(sed -n 's/.*registers.* \([0-9]*\) bytes smem.*/\1/p' <<<"$info")
  dyn=$(grep -o '"smem_bytes": *[0-9]*' "$1/manifest.json" | grep -o '[0-9]*$')
  printf '%5s %12s %10sB %11sB' "$regs" "${st:-0}/${ld:-0}" "${smem:-0}" "${dyn:-0}"
}

gdn_settings="H=16,HV=32,K=128,V=128,BV=64,initial_state=1,final_state=1"
gdn_out=$build/run/gdn
rm -rf "$gdn_out"
echo
echo "== GDN forward kernels ($gdn_settings) compiled ahead of time (qlac), assembled by ptxas -arch=sm_90a -O3"
printf '%-18s %5s %12s %11s %12s %12s\n' kernel regs "spill st/ld" "static smem" "dynamic smem" "qlac time"
for k in gdn_offsets gdn_cumsum gdn_chunk_inverse gdn_chunk_forward; do
  seconds=$("$build/tools/qlac/qlac" compile $k --set "$gdn_settings" -o "$gdn_out/$k" 2>/dev/null | sed -n 's/.* in \([0-9.]*\) s$/\1/p')
  printf '%-18s %s %11ss\n' "$k" "$(ptx_stats "$gdn_out/$k")" "$seconds"
done
echo
echo "== GDN forward on the CPU interpreter against the float64 recurrence"
"$build/tools/qlac/qlac" check gdn --set B=2,T=200,H=2,HV=4,K=64,V=64
"$build/tools/qlac/qlac" check gdn --set B=1,T=130,H=1,HV=2,K=128,V=128,gate_in_kernel=1,l2norm=1
# The context split (issue 5) on the interpreter: one sequence in segments of 128 tokens, gates with
# zero-decay heads (exact fallback) among strongly decaying ones.
"$build/tools/qlac/qlac" check gdn --set B=1,T=520,H=2,HV=4,K=64,V=64,split_tokens=128,precise=2
echo
echo "== GDN forward lowered to NVVM, run on the CPU's SIMT simulator (bounds and race checks) against float64"
"$build/tools/qlac/qlac" check gdn --set B=1,T=200,H=1,HV=2,K=128,V=128,simulate=1
"$build/tools/qlac/qlac" check gdn --set B=1,T=200,H=1,HV=2,K=128,V=128,simulate=1,inverse_in_warps=1

out=$build/run/gemm
rm -rf "$out"
mkdir -p "$out"
configs=(
  "default  M=4096,N=4096,K=4096,BM=128,BN=256,stages=4"
  "bn128    M=4096,N=4096,K=4096,BM=128,BN=128,stages=3"
  "ragged   M=1000,N=700,K=520,BM=128,BN=256,stages=4"
)

echo
echo "== GEMM compiled ahead of time (qlac) and assembled by ptxas -arch=sm_90a -O3"
printf '%-8s %-44s %5s %12s %11s %12s %12s\n' name config regs "spill st/ld" "static smem" "dynamic smem" "qlac time"
for entry in "${configs[@]}"; do
  read -r name settings <<<"$entry"
  dir=$out/$name
  # qlac prints "gemm: <settings> -> DIR (PTX n B, cubin n B) in 0.123 s" (DSL -> PTX -> cubin).
  seconds=$("$build/tools/qlac/qlac" compile gemm --set "$settings" -o "$dir" | sed -n 's/.* in \([0-9.]*\) s$/\1/p')
  info=$("$ptxas" -arch=sm_90a -O3 -v "$dir/kernel.ptx" -o "$dir/ptxas.cubin" 2>&1)
  regs=$(sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' <<<"$info")
  st=$(sed -n 's/.* \([0-9]*\) bytes spill stores.*/\1/p' <<<"$info")
  ld=$(sed -n 's/.* \([0-9]*\) bytes spill loads.*/\1/p' <<<"$info")
  smem=$(sed -n 's/.*registers.* \([0-9]*\) bytes smem.*/\1/p' <<<"$info")
  dyn=$(grep -o '"smem_bytes": *[0-9]*' "$dir/manifest.json" | grep -o '[0-9]*$')
  printf '%-8s %-44s %5s %12s %10sB %11sB %11ss\n' "$name" "$settings" "$regs" "$st/$ld" "$smem" "$dyn" "$seconds"
done
echo "(kernels in $out: kernel.ptx, kernel.cubin, manifest.json each)"

echo
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  gpu_gemm=""
  for candidate in "$build/tests/gpu/qla_gpu_gemm" "$build/tests/qla_gpu_gemm"; do
    if [ -x "$candidate" ]; then gpu_gemm=$candidate; break; fi
  done
  gpu_gdn=""
  for candidate in "$build/tests/gpu/qla_gpu_gdn" "$build/tests/qla_gpu_gdn"; do
    if [ -x "$candidate" ]; then gpu_gdn=$candidate; break; fi
  done
  if [ -n "$gpu_gdn" ]; then
    echo "== GDN forward on the GPU (through qla::gdn::ChunkForward) against float64 references, timed"
    "$gpu_gdn" "$gdn_out" --set "$gdn_settings" --bench
  fi
  if [ -n "$gpu_gemm" ]; then
    echo "== GPU GEMM check ($gpu_gemm)"
    "$gpu_gemm" "$out"/* --bench
  else
    echo "GPU present, but the GPU GEMM check (qla_gpu_gemm) was not built; nothing run on the GPU."
  fi
else
  echo "No GPU present (nvidia-smi missing or failing): compiled and assembled only, nothing run on a GPU."
fi

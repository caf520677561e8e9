#!/usr/bin/env bash
# Runs on the GPU machine from the repo root: correctness of every packed GEMM config, the
# sanitizers on a small one, then timing beside torch.matmul (cuBLAS). Writes $OUT/*.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== correctness (all configs) and timing"
$pkg/qla_gpu_gemm $pkg/kernels/* --bench --iters 100 --json "$out/qla.json" 2>&1 | tee "$out/gemm.log"
echo "== compute-sanitizer on the small configs (plain and warp-specialized)"
for cfg in small small_ws small_ws2; do
  [ -d $pkg/kernels/$cfg ] || continue
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gemm $pkg/kernels/$cfg --timeout 120 > /tmp/san.log 2>&1
    echo "$cfg $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))" | tee -a "$out/gemm.log"
    cat /tmp/san.log >> "$out/sanitizers.log"
  done
done
echo "== torch.matmul (cuBLAS) on the same shapes"
python3 $pkg/torch_gemm.py "$out/qla.json" "$out/result.json" 2>&1 | tee -a "$out/gemm.log"
# What comes back: gemm.log, qla.json, result.json, sanitizers.log.

#!/usr/bin/env bash
# Runs on the GPU machine from the repo root: correctness of every packed GEMM config, the
# sanitizers on a small one, then timing beside torch.matmul (cuBLAS). Writes $OUT/*.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
echo "== correctness (all configs) and timing"
$pkg/qla_gpu_gemm $pkg/kernels/* --bench --iters 100 --json "$out/qla.json" 2>&1 | tee "$out/gemm.log"
echo "== compute-sanitizer on the small config"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gemm $pkg/kernels/small > "$out/sanitizer-$tool.log" 2>&1
  echo "$tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -1))"
done
echo "== GDN forward kernels (correctness against float64 references; time of the three kernels)"
for cfg in $pkg/gdn/*; do
  $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --bench --json "$out/gdn-$(basename $cfg).json" 2>&1 | tee -a "$out/gdn.log"
done
compute-sanitizer --tool memcheck --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/small --set "$(cat $pkg/gdn/small/settings)" --cases 3 > "$out/sanitizer-gdn-memcheck.log" 2>&1
echo "gdn memcheck: exit $? ($(grep -E 'ERROR SUMMARY' "$out/sanitizer-gdn-memcheck.log" | tail -1))"
compute-sanitizer --tool racecheck --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/small --set "$(cat $pkg/gdn/small/settings)" --cases 2 > "$out/sanitizer-gdn-racecheck.log" 2>&1
echo "gdn racecheck: exit $? ($(grep -E 'RACECHECK SUMMARY' "$out/sanitizer-gdn-racecheck.log" | tail -1))"
echo "== torch.matmul (cuBLAS) on the same shapes"
python3 $pkg/torch_gemm.py "$out/qla.json" "$out/result.json" 2>&1 | tee "$out/torch.log"

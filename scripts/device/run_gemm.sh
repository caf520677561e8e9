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
echo "== compute-sanitizer on the small config"
for tool in memcheck racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gemm $pkg/kernels/small > /tmp/san.log 2>&1
  echo "$tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))"
  cat /tmp/san.log >> "$out/sanitizers.log"
done
echo "== GDN forward kernels (correctness against float64 references; time of the three kernels)"
for cfg in $pkg/gdn/*; do
  $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --bench --json "$out/gdn-$(basename $cfg).json" 2>&1 | tee -a "$out/gdn.log"
done
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $pkg/qla_gpu_gdn $pkg/gdn/small --set "$(cat $pkg/gdn/small/settings)" --cases 2 > /tmp/san.log 2>&1
  echo "gdn $tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tail -1))"
  cat /tmp/san.log >> "$out/sanitizers.log"
done
echo "== flash-linear-attention beside it: (16, 32) 4x8192, K = V = 128"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 python3 $pkg/fla_gdn.py /tmp/fla.json 16 32 4 8192 2>&1 | tail -3 | tee -a "$out/gdn.log"
else
  echo "no .whl folder carried: FLA not run"
fi
echo "== torch.matmul (cuBLAS) on the same shapes"
python3 $pkg/torch_gemm.py "$out/qla.json" "$out/result.json" 2>&1 | tee -a "$out/gemm.log"
# What comes back is at most 8 files: gemm.log, qla.json, result.json, sanitizers.log, gdn.log, gdn-*.json (3);
# fla.json is merged into gdn.log's tail when the file count is full.

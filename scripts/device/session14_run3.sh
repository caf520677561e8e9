#!/usr/bin/env bash
# Session 14, run 90: where the bytes go. ncu SpeedOfLight, MemoryWorkloadAnalysis and WarpStateStats of
# gdn_chunk_inverse and gdn_chunk_forward (the wide tile) at (16,32) 4x8192 unsplit, default build: is
# either kernel bound by DRAM bandwidth (run 89: the W form's 16 KB a chunk-head more made both slower)?
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s14r3; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
c=h16hv32; P=devpkg/gdn/$c
for k in gdn_chunk_inverse gdn_chunk_forward; do
  timeout 150 ncu --clock-control none -k regex:"^$k\$" -s 1 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section Occupancy -o /tmp/prof-$k -f \
    devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split --bench --gate logsigmoid --timeout 140 > $w/ncu-run-$k.log 2>&1
  echo "ncu $k exit $?" >> $w/gdn.log
  ncu -i /tmp/prof-$k.ncu-rep --page details > $w/details-$k.txt 2>&1
  save
done
grep -E "ncu|exit" $w/gdn.log
for k in gdn_chunk_inverse gdn_chunk_forward; do echo "== $k"; grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Compute \(SM\)|Mem Busy|Max Bandwidth|Stall|Warp Cycles Per Issued|Achieved Occupancy|dram__bytes|L2 Compression" $w/details-$k.txt | head -30; done

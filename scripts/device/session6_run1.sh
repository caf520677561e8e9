#!/usr/bin/env bash
# Session 6, first device run (one machine start): (a) verify_split.sh — the pass-made split runs;
# (b) ncu of gdn_chunk_inverse on (16,32) 4x8192 with its SASS source page; (c) the GEMM GPU test on
# a few configs (GemmCheck moved), (d) the qlac AOT example with a GPU, (e) qlac tune gemm on the H200.
# Everything goes to $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s6; rm -rf $w; mkdir -p $w $out
pack() { tar czf $out/out.tgz -C $w .; }
OUT=$w/split bash devpkg/verify_split.sh > $w/split.log 2>&1; pack
P=devpkg/gdn/h16hv32
timeout 120 ncu --clock-control none -k regex:gdn_chunk_inverse -c 1 --set full --import-source no -o /tmp/inv -f \
  devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split > $w/ncu-run.log 2>&1
ncu -i /tmp/inv.ncu-rep --page details > $w/inverse-details.txt 2>&1
ncu -i /tmp/inv.ncu-rep --page source --csv --print-source sass > $w/inverse-sass.csv 2>&1
ncu -i /tmp/inv.ncu-rep --page raw --csv > $w/inverse-raw.csv 2>&1
pack
K=devpkg/kernels
timeout 200 devpkg/qla_gpu_gemm $K/small $K/ragged $K/small_ws $K/sq4096 $K/sq4096ws $K/sq8192ws --bench --iters 50 \
  --json $w/gemm.json > $w/gemm.log 2>&1; echo "gemm exit $?" >> $w/gemm.log
timeout 60 devpkg/qla_aot_example > $w/aot.log 2>&1; echo "aot example exit $?" >> $w/aot.log
pack
xz -dc devpkg/qlac.xz > /tmp/qlac && chmod +x /tmp/qlac
( time timeout 240 /tmp/qlac tune gemm --shapes 8192x8192x8192,4096x4096x4096 --db $w/tuning.json --jobs 16 ) > $w/tune.log 2>&1
echo "tune exit $?" >> $w/tune.log
( time timeout 60 /tmp/qlac tune gemm --shapes 8192x8192x8192,4096x4096x4096 --db $w/tuning.json --jobs 16 ) > $w/tune2.log 2>&1
pack

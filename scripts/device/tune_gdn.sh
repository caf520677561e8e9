#!/usr/bin/env bash
# Runs on the GPU machine from the repo root with devpkg/qlac.xz (a stripped, xz-compressed qlac) and
# devpkg/lib (libfmt): qlac tune gdn over the GDN forward shapes of BENCHMARKS.md (and issue 4's 8x4096),
# timed, into a database that starts from DB_START (e.g. the GEMM's tuned entries); then the same command
# again (nothing new to time). Everything lands in $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/tune-gdn; rm -rf $w; mkdir -p $w $out
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gpu.txt
xz -dc devpkg/qlac.xz > /tmp/qlac && chmod +x /tmp/qlac
[ -n "${DB_START:-}" ] && cp "$DB_START" $w/tuning.json
shapes=${SHAPES:-2x8x1x32768,2x8x1x8192,2x8x1x2048,2x8x8x1024,4x16x1x32768,8x32x1x32768,16x64x1x32768,16x64x2x16384,16x64x4x8192,16x32x1x32768,16x32x1x8192,16x32x4x8192,16x32x8x4096,16x32x1x131072,16x48x1x32768,16x16x1x32768,16x16x1x2048}
cmd="/tmp/qlac tune gdn --shapes $shapes --db $w/tuning.json --jobs ${JOBS:-16}"
echo "$cmd" > $w/command.txt
( time timeout ${TUNE_TIMEOUT:-420} $cmd ) > $w/tune.log 2>&1; echo "tune exit $?" >> $w/tune.log
tar czf $out/out.tgz -C $w .
( time timeout 120 $cmd ) > $w/tune2.log 2>&1; echo "tune exit $?" >> $w/tune2.log
tar czf $out/out.tgz -C $w .
grep -vE "^(compiling|timing) " $w/tune.log | tr '\r' '\n' | grep -vE "^(compiling|timing) \[" | tail -30

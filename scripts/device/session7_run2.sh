#!/usr/bin/env bash
# Session 7, second device run: qlac tune gdn over the 17 shapes from a database without GDN entries,
# with the candidate list that now has the planner's segment length (split_tokens=2048/4096): does it
# stay under 3 minutes, and does a tuned segment length win anywhere; then qlac tune gemm on the same
# database (only the new register-budget candidate is timed). Everything lands in $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s7r2; rm -rf $w; mkdir -p $w $out
DB_START=devpkg/db_start.json TUNE_TIMEOUT=300 OUT=$w/gdn bash devpkg/tune_gdn.sh > $w/tune-gdn-summary.log 2>&1
cp /tmp/tune-gdn/* $w/ 2>/dev/null
tar czf $out/out.tgz -C $w .
( time timeout 200 /tmp/qlac tune gemm --shapes 8192x8192x8192,4096x4096x4096 --db $w/tuning.json --jobs 16 ) > $w/tune-gemm.log 2>&1
echo "tune exit $?" >> $w/tune-gemm.log
tar czf $out/out.tgz -C $w .
grep -E "best|tuned in|real" $w/tune.log $w/tune-gemm.log | tr '\r' '\n' | grep -vE "\[" | tail -30

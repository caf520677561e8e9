#!/usr/bin/env bash
# One device call for a session's closing measurement (run from the repo root, devpkg/ and .whl carried):
# the correctness configs and their sanitizers (run_gdn.sh, CONFIGS), then every forward shape of
# BENCHMARKS.md beside flash-linear-attention (bench_gdn.sh). Everything returns as two archives in
# $OUT (checks.tgz, bench.tgz: the bench one rewritten after every shape, so a cut-short run keeps its rows).
set -uo pipefail
out=${OUT:-/tmp/out}
rm -rf /tmp/checks && mkdir -p /tmp/checks
OUT=/tmp/checks CONFIGS="${CONFIGS:-small gated vfirst}" NCU_TIMES="${NCU_TIMES:-}" bash devpkg/run_gdn.sh \
  > /tmp/checks/stdout.txt 2>&1
tar czf "$out/checks.tgz" -C /tmp/checks .
grep -E "PASS|FAIL|exit|^gdn_" /tmp/checks/stdout.txt | sed 's/ seed=[0-9]*//' | cut -c1-160
rm -rf /tmp/benchout && mkdir -p /tmp/benchout
OUT=/tmp/benchout PROGRESS="$out/bench.tgz" bash devpkg/bench_gdn.sh > /tmp/benchout/stdout.txt 2>&1
tar czf "$out/bench.tgz" -C /tmp/bench . -C /tmp/benchout .
grep -E "ms a call|FAIL|peer_graph_ms" /tmp/benchout/stdout.txt | sed 's/ seed=[0-9]*//' | cut -c1-200 | tail -40

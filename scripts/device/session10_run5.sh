#!/usr/bin/env bash
# Session 10, run 56: where a split call's time goes (issue 5): ncu's duration of every kernel launch of
# one call (the check's call; qla_gpu_gdn without --bench), truncated and exact, for (2,8) and (16,32)
# 1x32768, and (16,32) 4x8192 unsplit for reference. Session-10 default kernels (base* = bacaf97).
# GATE="--gate logsigmoid" (run 57): the benchmark's gates; without (run 56): the check's mixed gates with
# zero-decay heads (truncated mode falls back to exact for those).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s10r5; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
prof() { local c=$1 tag=$2; shift 2
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"gdn_(offsets|cumsum|chunk|split)" \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" "$@" ${GATE:-} --timeout 100 \
    > $w/ncu-$c-$tag.csv 2> $w/ncu-$c-$tag.err
  echo "ncu $c $tag exit $?" >> $w/gdn.log
  python3 - "$w/ncu-$c-$tag.csv" "$c $tag" <<'PY' | tee -a $w/gdn.log
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value"); g = hdr.index("Grid Size")
tot = 0
for r in rows[1:]:
    us = float(r[v].replace(',', '')) / 1000; tot += us
    print(f"{sys.argv[2]}: {r[k][:28]:28s} grid {r[g]:16s} {us:9.1f} us")
print(f"{sys.argv[2]}: total {tot:.1f} us")
PY
}
prof base28 1x32768-trunc --shape 1,32768
prof base28 1x32768-exact --shape 1,32768 --exact
prof base32 1x32768-trunc --shape 1,32768
prof base32 1x32768-exact --shape 1,32768 --exact
prof base32 4x8192 --shape 4,8192
save

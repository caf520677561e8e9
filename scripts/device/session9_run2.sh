#!/usr/bin/env bash
# Session 9, second device run (run 44): gdn_cumsum with gcd(HV, 32) heads a block (b08e3db).
#   1. correctness: smalls (H=1,HV=2,K=V=64) and gated (H=2,HV=4,K=V=128, in-kernel gate + L2 norm: the
#      cumsum's per-head A_log / dt_bias tiles) default cases; compute-sanitizer memcheck on smalls;
#   2. ncu per-kernel times of one (16,32) 4x8192 call (the cumsum was 27 µs, 51 on (16,64));
#   3. timing beside FLA 0.6.0: (16,32) 4x8192, 8x4096, (16,64) 4x8192 at the defaults and the inverse
#      variants ih2 (inverse_heads=2), ic2s2 (inverse_chunks=2, inverse_stages=2: q/k of the next chunk in
#      flight, 2 blocks an SM).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r2; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 120 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
g smalls cases --timeout 60
g gated cases --timeout 60
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smalls \
  --set "$(cat devpkg/gdn/smalls/settings)" --varlen 100,700,40 --no-split --timeout 90 > $w/san.log 2>&1
echo "smalls memcheck varlen: exit $? ($(grep -E 'ERROR SUMMARY' $w/san.log | tail -1))" | tee -a $w/gdn.log
grep -E "FAIL|passed" $w/gdn.log | cut -c1-200; save
P=devpkg/gdn/h16hv32
timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -o /tmp/t -f devpkg/qla_gpu_gdn $P \
  --set "$(cat $P/settings)" --shape 4,8192 --timeout 90 > $w/ncu-run.log 2>&1
ncu -i /tmp/t.ncu-rep --csv --page raw > $w/kernel-times-h16hv32.csv 2>&1
python3 - $w/kernel-times-h16hv32.csv <<'PY' | tee -a $w/gdn.log
import csv, sys
r = list(csv.reader(open(sys.argv[1]))); h = r[0]
for row in r[2:]: print("ncu (16,32) 4x8192", row[h.index('Kernel Name')], row[h.index('gpu__time_duration.sum')], "ms")
PY
save
for c in h16hv32 p32ih2 p32ic2s2; do
  g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100
  g $c 8x4096 --shape 8,4096 --bench --gate logsigmoid --timeout 100
done
for c in h16hv64 p64ih2 p64ic2s2; do g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 100; done
grep -E "FAIL|ms a call" $w/gdn.log | cut -c1-230; save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 FLA_ERR_MAX_TOKENS=0 timeout 150 python3 devpkg/fla_gdn_shapes.py $w \
  16,32,4,8192 16,32,8,4096 16,64,4,8192 2>&1 | tee $w/fla.log | grep peer_graph_ms | cut -c1-250
save

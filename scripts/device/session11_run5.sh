#!/usr/bin/env bash
# Session 11, run 65: gdn_chunk_inverse's merges with f16 operands (inverse_f16=1: one gemm a product
# instead of bf16 hi + lo; SASS 2736 -> 2248 instructions, 168 -> 159 registers). Checks: small and
# gated default cases, memcheck on small; (16,32) 4x8192 and (2,8) 1x32768 against the default build in
# the same run, ncu durations of (16,32) 4x8192's kernels; FLA 0.6.0 last.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s11r5; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 90 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in smallf gatedf; do g $c cases --timeout 80; done
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smallf \
  --set "$(cat devpkg/gdn/smallf/settings)" --varlen 100,300,40 --timeout 100 > $w/san-memcheck.log 2>&1
echo "gdn smallf memcheck: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-memcheck.log | tail -1)) varlen 100,300,40" >> $w/gdn.log
save
for r in 1 2; do for c in h32f h32; do g $c 4x8192-$r --shape 4,8192 --bench --timeout 80; done; done
for c in h28f h28; do g $c 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 80; done
save
prof() { local c=$1 tag=$2; shift 2
  timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:"gdn_(cumsum|chunk)" \
    --csv --print-units base devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" "$@" --timeout 100 \
    > $w/ncu-$c-$tag.csv 2> $w/ncu-$c-$tag.err
  python3 - "$w/ncu-$c-$tag.csv" "$c $tag" <<'PY' | tee -a $w/gdn.log
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr = rows[0]; k = hdr.index("Kernel Name"); v = hdr.index("Metric Value")
for r in rows[1:]:
    print(f"ncu {sys.argv[2]}: {r[k][:28]:28s} {float(r[v].replace(',', '')) / 1000:9.1f} us")
PY
}
prof h32f 4x8192 --shape 4,8192; prof h32 4x8192 --shape 4,8192
grep -E "FAIL|passed|memcheck|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site FLA_ERR_MAX_TOKENS=0 timeout 120 python3 devpkg/fla_gdn_shapes.py $w 16,32,4,8192 2,8,1,32768 2>&1 | tail -2 | cut -c1-160 | tee -a $w/gdn.log
save

#!/usr/bin/env bash
# Runs on the GPU machine from the repo root with devpkg/ (pack_gdn.sh with the bench configs) and .whl
# carried: every fixed-length forward shape of BENCHMARKS.md through qla::gdn::ChunkForward (checked
# against the GPU float64 reference, timed plainly and as a graph), then flash-linear-attention on the
# same shapes in one process. Writes $OUT/gdn-<config>-<B>x<T>.json, $OUT/fla-*.json and $OUT/gdn.log;
# collect_gdn.py (here) merges them. At most 8 files come back, so the JSON rows are folded into two files.
# GATE=logsigmoid (default: FLA's gates in fla_gdn_shapes.py, so the ratios compare like inputs) or mixed
# (zero-decay heads: on split shapes those heads take the exact mode's full runs).
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}
work=/tmp/bench && rm -rf $work && mkdir -p $work
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gdn.log"
shapes=${SHAPES:-"2,8,1,32768 2,8,1,8192 2,8,1,2048 2,8,8,1024 4,16,1,32768 8,32,1,32768 16,64,1,32768 16,64,2,16384
  16,64,4,8192 16,32,1,32768 16,32,1,8192 16,32,4,8192 16,32,8,4096 16,32,1,131072 16,48,1,32768 16,16,1,32768 16,16,1,2048"}
for s in $shapes; do
  IFS=, read -r H HV B T <<<"$s"
  cfg=$pkg/gdn/h${H}hv${HV}
  $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --shape $B,$T --gate ${GATE:-logsigmoid} --bench --json "$work/gdn-h${H}hv${HV}-${B}x${T}.json" 2>&1 \
    | sed 's/ seed=[0-9]*//' | tee -a "$out/gdn.log"
  # PROGRESS=FILE.tgz: what is done so far, so that a run cut short still brings its rows back.
  [ -n "${PROGRESS:-}" ] && tar czf "$PROGRESS" -C "$work" . "$out/gdn.log" 2>/dev/null
done
# The varlen mix of BENCHMARKS.md: 16 sequences of 256 to 16384 tokens, 65792 in all, (16, 32).
mix=16384,8192,8192,4096,4096,4096,4096,2048,2048,2048,2048,4096,2048,1024,1024,256
if [ -z "${SHAPES:-}" ]; then
  $pkg/qla_gpu_gdn $pkg/gdn/h16hv32 --set "$(cat $pkg/gdn/h16hv32/settings)" --varlen $mix --gate ${GATE:-logsigmoid} --bench \
    --json "$work/gdn-h16hv32-varlen.json" 2>&1 | sed 's/ seed=[0-9]*//' | tee -a "$out/gdn.log"
  shapes_fla="$shapes 16,32,varlen:$mix"
else
  shapes_fla="$shapes"
fi
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 420 python3 $pkg/fla_gdn_shapes.py $work $(echo $shapes_fla) 2>&1 | tee -a "$out/gdn.log"
fi
python3 - "$work" "$out" <<'PY'
import glob, json, os, sys
work, out = sys.argv[1:]
ours = [dict(r, config=os.path.basename(f)[4:-5].rsplit("-", 1)[0]) for f in sorted(glob.glob(work + "/gdn-*.json")) for r in json.load(open(f))]
json.dump(ours, open(out + "/gdn-bench.json", "w"), indent=1)
json.dump([json.load(open(f)) for f in sorted(glob.glob(work + "/fla-*.json"))], open(out + "/fla-bench.json", "w"), indent=1)
PY
grep -E "PASS|FAIL" "$out/gdn.log"

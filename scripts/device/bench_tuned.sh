#!/usr/bin/env bash
# Runs on the GPU machine with devpkg/ from pack_tuned.py and .whl carried: every tuned package
# (devpkg/gdn/t-*) on its own shape, checked against the GPU float64 reference and timed, logsigmoid
# gates; then flash-linear-attention on the same shapes (FLA=1). OURS=0 skips our runs, ONLY="t-16-32-4x8192 …"
# takes those packages alone (FLA takes ~30 s a shape: 17 shapes and ours do not fit one 10-minute command).
# Everything in $OUT/out.tgz.
set -uo pipefail
pkg=devpkg
export LD_LIBRARY_PATH=$PWD/$pkg/lib:${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/out}; work=/tmp/qla-tuned; rm -rf $work; mkdir -p "$out" "$work"
log=$work/gdn.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$log"
fla=""
for cfg in $pkg/gdn/t-*; do
  name=$(basename $cfg); IFS=, read -r B T < $cfg/shape
  IFS=- read -r _ H HV _ <<<"$name"
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && continue
  fla="$fla $H,$HV,$B,$T"
  [ "${OURS:-1}" = 0 ] && continue
  timeout 200 $pkg/qla_gpu_gdn $cfg --set "$(cat $cfg/settings)" --json "$work/gdn-$name.json" --shape $B,$T --bench \
    --gate logsigmoid --timeout 150 2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$name /" | tee -a "$log"
  tar czf "$out/out.tgz" -C "$work" .
done
if [ -n "${FLA:-}" ] && [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  FLA_ERR_MAX_TOKENS=0 PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout ${FLA_TIMEOUT:-400} \
    python3 $pkg/fla_gdn_shapes.py "$work" $fla 2>&1 | tee -a "$log"
fi
tar czf "$out/out.tgz" -C "$work" .

#!/usr/bin/env bash
# Session 9, run 51: the forward's gate-row broadcasts as warp shuffles (#qla.strided<threads = 32,
# replicated>: no shared memory, no block barrier). new* / smalls / gated / roles built with the change,
# base* from the commit before it. Checks: smalls, gated and roles (warp-specialized) default cases;
# compute-sanitizer memcheck and synccheck on smalls; (16,32) 1x32768 (the split's runs carry the change).
# A/B on (16,32) and (16,64) 4x8192, interleaved (no FLA: same-run ratios are in runs 43-46).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s9r8; rm -rf $w; mkdir -p $w $out
save() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $w/gdn.log
g() { local c=$1 tag=$2; shift 2
  timeout 40 devpkg/qla_gpu_gdn devpkg/gdn/$c --set "$(cat devpkg/gdn/$c/settings)" --json $w/gdn-$tag-$c.json "$@" \
    2>&1 | sed 's/ seed=[0-9]*//' | sed "s/^/$c $tag /" >> $w/gdn.log; }
for c in smalls gated roles; do g $c cases --timeout 35; done
for tool in memcheck synccheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 devpkg/qla_gpu_gdn devpkg/gdn/smalls \
    --set "$(cat devpkg/gdn/smalls/settings)" --varlen 100,700,40 --timeout 35 > $w/san-$tool.log 2>&1
  echo "gdn smalls $tool: exit $? ($(grep -E 'ERROR SUMMARY' $w/san-$tool.log | tail -1)) varlen 100,700,40" >> $w/gdn.log
done
save
g new32 1x32768 --shape 1,32768 --bench --gate logsigmoid --timeout 35
for r in 1 2; do for c in base32 new32; do g $c 4x8192-$r --shape 4,8192 --bench --gate logsigmoid --timeout 35; done; done
for c in base64 new64; do g $c 4x8192 --shape 4,8192 --bench --gate logsigmoid --timeout 35; done
grep -E "FAIL|passed|check:|ms a call" $w/gdn.log | sed -E 's/vs GPU float64 reference, unwritten 0, //' | cut -c1-190
save

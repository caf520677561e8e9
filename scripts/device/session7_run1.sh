#!/usr/bin/env bash
# Session 7, first device run (one machine start, two commands):
#   PART=tune: qlac tune gdn over the 17 shapes from a database without GDN entries (devpkg/db_start.json:
#              the GEMM's tuned entries) — does the threaded check bring it under 3 minutes?
#   PART=rest: (a) qlac load gdn three times in fresh processes (cold disk cache, then warm: issue 6's
#              < 20 ms bar); (b) the GDN GPU test on (16,32) (check, load-time line); (c) ncu of the wide
#              state kernel on (16,32) 4x8192; (d) 1M-token sequences on (2,8) and (4,16) (issue 5).
# Everything lands in $OUT/out.tgz.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/devpkg/lib:${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64
out=${OUT:-/tmp/out}; w=/tmp/s7; mkdir -p $w $out
pack() { tar czf $out/out.tgz -C $w .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader | tee $w/gpu.txt
if [ "${PART:-rest}" = tune ]; then
  DB_START=devpkg/db_start.json TUNE_TIMEOUT=330 OUT=$w/tune bash devpkg/tune_gdn.sh > $w/tune-summary.log 2>&1
  pack; exit 0
fi
xz -dc devpkg/qlac.xz > /tmp/qlac && chmod +x /tmp/qlac
P=devpkg/gdn/h16hv32; S="$(cat $P/settings),initial_state=1,final_state=1"
export QLA_CACHE_DIR=/tmp/qla-cache; rm -rf $QLA_CACHE_DIR
for i in 1 2 3; do /tmp/qlac load gdn --set "$S" >> $w/load.log 2>&1; done
/tmp/qlac load gdn --set "$S" --repeat 3 >> $w/load.log 2>&1
cat $w/load.log; pack
timeout 200 devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --bench --json $w/check-h16hv32.json > $w/check.log 2>&1
echo "exit $?" >> $w/check.log; tail -5 $w/check.log; pack
timeout 150 ncu --clock-control none -k regex:gdn_chunk_forward -c 1 --set full --import-source no -o /tmp/fwd -f \
  devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 4,8192 --no-split > $w/ncu-run.log 2>&1
ncu -i /tmp/fwd.ncu-rep --page details > $w/forward-details.txt 2>&1
ncu -i /tmp/fwd.ncu-rep --page source --csv --print-source sass > $w/forward-sass.csv 2>&1
xz -9 -T4 $w/forward-sass.csv; pack
for P in devpkg/gdn/h2hv8 devpkg/gdn/h4hv16; do
  for T in 262144 1048576; do
    /usr/bin/time -v timeout 200 devpkg/qla_gpu_gdn $P --set "$(cat $P/settings)" --shape 1,$T --bench --gate logsigmoid \
      --timeout 190 --json $w/long-$(basename $P)-$T.json > $w/long-$(basename $P)-$T.log 2>&1
    echo "exit $?" >> $w/long-$(basename $P)-$T.log; grep -E "PASS|FAIL|Maximum resident|exit" $w/long-$(basename $P)-$T.log
    pack
  done
done

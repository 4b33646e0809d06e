#!/usr/bin/env bash
# session 11 call 2: KHR kernel register statistics per tiling; SM clock and power while
# 8192^3 f16 sums run with GPU timestamps and then with the wall clock
set -u
source tools/device/env.sh
S=4096x4096x4096,8192x8192x8192
for t in 2x4x4x2x1 2x4x4x4x1 2x2x4x4x1 2x4x2x4x1; do
  echo "== khr $t"; COOPGEMM_COOPMAT2=0 COOPGEMM_COOPMAT_TILING=$t RUST_LOG=coopgemm=info COOPGEMM_PIPELINE_STATS=1 timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16,f16acc16 --shapes 4096x4096x4096 --json $OUT/khr-$t.json 2>&1 | grep -E "^coopmat|rror|pipeline" | cut -c1-260
done
export COOPGEMM_CACHE=/tmp/cgcache-clock
for mode in timestamps wall; do
  arg=""; [ $mode = wall ] && arg=--wall-clock
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv,noheader -lms 100 > $OUT/smi-$mode.csv 2>&1 &
  smi=$!
  echo "== $mode"; timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16acc16 --shapes $S --runs 30 $arg --json $OUT/clock-$mode.json 2>&1 | grep -E "^coopmat|rror" | cut -c1-200
  kill $smi; wait $smi 2>/dev/null
  sort -t, -k2 $OUT/smi-$mode.csv | awk -F, '{print $2}' | uniq -c | sort -k1 -n -r | head -5
done
cd $OUT && tar czf s11c2.tgz *.json *.csv && rm -f *.json *.csv

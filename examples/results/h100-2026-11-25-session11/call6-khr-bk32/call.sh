#!/usr/bin/env bash
# session 11 call 6: the KHR kernel's 2x4x4x2 tiling with BK 32 (two K steps per stage), one
# or two prefetch stages, against BK 16; two rounds
set -u
source tools/device/env.sh
export COOPGEMM_COOPMAT2=0 COOPGEMM_CACHE=/tmp/cgcache-khr6
for round in 1 2; do
for t in 2x4x4x2x1x2 2x4x4x2x2 2x4x4x2x2x2 2x4x2x2x1x2 2x4x2x2x2x2; do
  echo "== $t round $round"; COOPGEMM_COOPMAT_TILING=$t RUST_LOG=coopgemm=info COOPGEMM_PIPELINE_STATS=1 timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16,f16acc16 --shapes 4096x4096x4096,8192x8192x8192 --json $OUT/khr-$t-$round.json 2>&1 | grep -E "^coopmat|rror|pipeline" | sed 's/Binary Size.*//; s/.*coopmat: pipeline //' | cut -c1-160
done
done
cd $OUT && tar czf s11c6.tgz *.json && rm -f *.json

#!/usr/bin/env bash
# session 11 call 3: KHR kernel, one or two prefetch stages per tiling; correctness with two
set -u
source tools/device/env.sh
export COOPGEMM_COOPMAT2=0
for t in 2x4x4x4x1x2 2x4x4x2x1x2; do
  echo "== tests $t"; COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_COOPMAT_TILING=$t timeout 120 $B/correctness 2>&1 | grep -E "test result|FAIL|panick" | head -5
  COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_COOPMAT_TILING=$t timeout 120 $B/guard 2>&1 | grep -E "test result|FAIL|panick" | head -5
done
for round in 1 2; do
for t in 2x4x4x4x1 2x4x4x4x1x2 2x4x4x2x1 2x4x4x2x1x2 2x2x4x4x1 2x2x4x4x1x2 2x4x2x4x1x2; do
  echo "== khr $t round $round"; COOPGEMM_COOPMAT_TILING=$t RUST_LOG=coopgemm=info COOPGEMM_PIPELINE_STATS=1 timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16,f16acc16 --shapes 4096x4096x4096,8192x8192x8192 --json $OUT/khr-$t-$round.json 2>&1 | grep -E "^coopmat|rror|pipeline" | sed 's/Binary Size.*//' | cut -c1-200
done
done
cd $OUT && tar czf s11c3.tgz *.json && rm -f *.json

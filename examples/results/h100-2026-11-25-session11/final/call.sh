#!/usr/bin/env bash
# session 11 call 4: the whole H100 test matrix, the KHR kernel's prefetch stages for bf16 and
# i8, then the README's bench rows with cuBLAS
set -u
source tools/device/env.sh
bash tools/device/tests.sh
echo "== KHR prefetch stages, bf16 and i8"
for t in 2x4x4x2x1 2x4x4x2x1x2; do
  COOPGEMM_COOPMAT2=0 COOPGEMM_COOPMAT_TILING=$t timeout 100 $B/bench --no-tune --backends coopmat --dtypes bf16 --shapes 4096x4096x4096,8192x8192x8192 --json $OUT/khr-bf16-$t.json 2>&1 | grep -E "^coopmat|rror" | cut -c1-200
done
for t in 2x4x8x2x1 2x4x8x2x1x2; do
  COOPGEMM_COOPMAT2=0 COOPGEMM_COOPMAT_TILING=$t timeout 100 $B/bench --no-tune --backends coopmat --dtypes i8 --shapes 4096x4096x4096,8192x8192x8192 --json $OUT/khr-i8-$t.json 2>&1 | grep -E "^coopmat|rror" | cut -c1-200
done
( cd $OUT && tar czf khr-prefetch.tgz khr-*.json && rm -f khr-*.json )
bash tools/device/bench.sh

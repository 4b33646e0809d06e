#!/usr/bin/env bash
# session 11 call 5: the H100 test matrix at the final commit (i8 on the KHR kernel now with
# two prefetch stages by default), and the KHR kernel's default i8 / f16 configurations
set -u
source tools/device/env.sh
bash tools/device/tests.sh
export COOPGEMM_CACHE=/tmp/cgcache-khr
COOPGEMM_COOPMAT2=0 timeout 100 $B/bench --no-tune --backends coopmat --dtypes i8,f16,bf16 --shapes 4096x4096x4096,8192x8192x8192 --json $OUT/bench-khr-default.json 2>&1 | grep -E "^coopmat|rror" | cut -c1-200

# The few-row suite's coopmat lane alone, on the build of call 3 (staged as there).
source tools/device/env.sh; export COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_CACHE_DIR=/tmp/t9
RUST_LOG=coopgemm=debug timeout 160 $B/skinny few_rows_guarded::coopmat --test-threads=1 --nocapture > $OUT/skinny-debug.log 2>&1
gzip $OUT/skinny-debug.log

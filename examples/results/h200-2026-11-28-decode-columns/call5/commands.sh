source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
for t in decode selection; do echo "-- $t"; timeout 90 $B/$t 2>&1 | grep -E "test result|panicked|FAILED"; done > $OUT/tests.txt 2>&1
cat $OUT/tests.txt

source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn
for s in prepared split_k; do echo "== $s"; COOPGEMM_EXPECT_COOPMAT=1 timeout 150 $B/$s --test-threads=1 > $OUT/$s-tests.txt 2>&1; grep -E "checked|test result|panicked|FAILED" $OUT/$s-tests.txt; done
S=16x4096x14336,16x14336x4096,32x4096x14336,16x4096x4096,1x4096x14336
for r in 1 2; do for v in old new; do bin=$B/bench; [ $v = old ] && bin=$B/bench-old
for p in 1 8; do echo "-- round $r $v prepared $p"; timeout 100 $bin --no-tune -q --backends coopmat --b-layouts column --shapes $S --dtypes f16 --wall-clock --prepared $p --json $OUT/host-$v-p$p-r$r.json 2>&1 | grep -E "^coopmat|rror" | cut -c1-120; done; done; done
( cd $OUT && tar czf host.tgz host-*.json && rm -f host-*.json )

source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 150 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "rror" | cut -c1-150; }
echo "== tests"
for t in decode skinny random guard selection; do echo "-- $t"; timeout 150 $B/$t 2>&1 | grep -E "test result|panicked|FAILED"; done
S=""; for m in 4 5 8 12 16; do for nk in 4096x14336 14336x4096; do S="$S,${m}x$nk"; done; done; S=${S#,}
b plan "" --backends coopmat --b-layouts row,column --shapes $S --dtypes i8,f16,bf16
b decode "COOPGEMM_DECODE_ROWS=16" --backends coopmat --b-layouts row,column --shapes $S --dtypes i8,f16,bf16
b off "COOPGEMM_DECODE_ROWS=0" --backends coopmat --b-layouts row,column --shapes $S --dtypes i8
(cd $OUT && tar czf bench.tgz *.json && rm *.json)

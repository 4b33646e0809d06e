source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
R=8x4096x14336,12x4096x14336,16x4096x14336,16x14336x4096,16x4096x4096,4x4096x14336
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 120 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
b final X=1 --backends coopmat --b-layouts row,column --shapes $R --dtypes i8,f16
b final-old COOPGEMM_DECODE_ROWS=0 --backends coopmat --b-layouts row,column --shapes $R --dtypes i8
b final-forced COOPGEMM_DECODE_ROWS=16 --backends coopmat --b-layouts row,column --shapes 16x4096x14336,16x14336x4096,1x4096x14336 --dtypes f16,bf16
(cd $OUT && tar czf bench.tgz *.json && rm *.json)
echo "== tests"; bash tools/device/tests.sh 2>&1 | tail -80 > $OUT/tests-summary.txt; cat $OUT/tests-summary.txt

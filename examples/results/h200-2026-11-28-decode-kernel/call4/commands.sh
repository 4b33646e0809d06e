source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
S=16x4096x14336,16x14336x4096,16x4096x4096,8x4096x14336
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 100 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
for t in 32x32x8x1 32x32x8x2 32x32x8x3 32x32x8x4 16x32x8x2 16x32x8x4 32x64x4x2 16x64x4x3 32x16x8x4 64x16x8x3; do b cfg-$t "COOPGEMM_DECODE_ROWS=16 COOPGEMM_DECODE_CONFIG=$t" --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8; done
b old COOPGEMM_DECODE_ROWS=0 --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8
(cd $OUT && tar czf bench.tgz *.json && rm *.json)
echo "== tests"; timeout 100 $B/decode 2>&1 | grep -E "test result|panicked"

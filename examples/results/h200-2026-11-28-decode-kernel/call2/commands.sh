source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
R=2x4096x14336,4x4096x14336,8x4096x14336,12x4096x14336,16x4096x14336,4x14336x4096,8x14336x4096,16x14336x4096,4x4096x4096,16x4096x4096
S=16x4096x14336,16x14336x4096,16x4096x4096
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 120 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
b rows-old COOPGEMM_DECODE_ROWS=0 --backends coopmat --b-layouts row,column --shapes $R --dtypes f16,i8
b rows-d3232 "COOPGEMM_DECODE_ROWS=16 COOPGEMM_DECODE_CONFIG=32x32x8" --backends coopmat --b-layouts row,column --shapes $R --dtypes f16,i8
for t in 64x32x4 64x16x8 32x16x8 32x32x4 48x32x4 32x64x8 64x64x4 32x128x4; do b cfg-$t COOPGEMM_DECODE_CONFIG=$t --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8; done
b rows-old2 COOPGEMM_DECODE_ROWS=0 --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8
tar czf $OUT/call2.tgz -C $OUT $(cd $OUT && ls *.json)

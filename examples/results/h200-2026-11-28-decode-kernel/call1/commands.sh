source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
D=1x4096x4096,4x4096x4096,16x4096x4096,1x14336x4096,16x14336x4096,1x4096x14336,4x4096x14336,8x4096x14336,16x4096x14336,32x4096x14336,64x4096x4096
S=16x4096x14336,16x14336x4096,16x4096x4096
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 120 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
b new X=1 --backends coopmat --b-layouts row,column --shapes $D --dtypes f16
b old COOPGEMM_DECODE_ROWS=0 --backends coopmat --b-layouts row,column --shapes $D --dtypes f16
b all16 COOPGEMM_DECODE_ROWS=16 --backends coopmat --b-layouts row,column --shapes 1x4096x14336,1x14336x4096,1x4096x4096 --dtypes f16
for t in 16x128x4 32x128x4 32x64x4 16x32x8 16x64x4 16x256x2 32x32x8; do b cfg-$t COOPGEMM_DECODE_CONFIG=$t --backends coopmat --b-layouts row,column --shapes $S --dtypes f16; done
b types-new X=1 --backends coopmat --b-layouts row,column --shapes 16x4096x14336,16x14336x4096 --dtypes bf16,i8
b types-old COOPGEMM_DECODE_ROWS=0 --backends coopmat --b-layouts row,column --shapes 16x4096x14336,16x14336x4096 --dtypes bf16,i8
b new2 X=1 --backends coopmat --b-layouts row,column --shapes $S --dtypes f16
echo "== skinny.py"; timeout 120 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1; head -30 $OUT/skinny.txt
echo "== tests"; timeout 200 $B/decode 2>&1 | grep -E "cases|test result|panicked" | head -30 > $OUT/tests-decode.txt; cat $OUT/tests-decode.txt

source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn
D=1x4096x4096,16x4096x4096,1x14336x4096,16x14336x4096,1x4096x14336,16x4096x14336,32x4096x14336,64x4096x4096
b() { n=$1; shift; echo "-- $n"; timeout 150 $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
b decode --backends coopmat --b-layouts row,column --shapes $D --dtypes f16
b types --backends coopmat --b-layouts row,column --shapes 1x4096x14336,16x4096x14336,16x14336x4096 --dtypes bf16,i8
b prepared --backends coopmat --b-layouts column --shapes 1x4096x14336,16x4096x14336,1x4096x4096 --dtypes f16 --wall-clock --prepared
b prefill --backends coopmat --b-layouts column --shapes 4096x512x14336,512x4096x4096,4096x4096x512,4096x4096x4096,8192x8192x8192 --dtypes f16,f16acc16
b prefill-wall --backends coopmat --b-layouts column --shapes 4096x512x14336,4096x4096x4096,8192x8192x8192 --dtypes f16,f16acc16 --wall-clock
b wgsl --backends coopmat,wgsl-coopmat --shapes 4096x4096x4096 --dtypes f16
echo "== skinny.py"; timeout 120 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1; cat $OUT/skinny.txt | head -30
echo "== cublas.py"; timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|H200|H100" $OUT/cublas.txt

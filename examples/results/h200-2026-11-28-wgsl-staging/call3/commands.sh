source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
b() { n=$1; bin=$2; envs=$3; shift 3; echo "-- $n"; timeout 200 env $envs $B/$bin -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl|simt)|rror" | cut -c1-150; }
S=1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096
for round in 1 2; do
  b scalar-$round bench-scalar X=1 --no-tune --backends wgsl-coopmat --shapes $S --dtypes f16,f16acc16
  b vector-$round bench X=1 --no-tune --backends wgsl-coopmat --shapes $S --dtypes f16,f16acc16
done
b tuned bench COOPGEMM_CACHE_DIR=/tmp/tune --backends wgsl-coopmat --shapes 4096x4096x4096,512x4096x4096,4096x4096x512 --dtypes f16
b khr bench COOPGEMM_COOPMAT2=0 --no-tune --backends coopmat --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16,f16acc16
echo "== cublas.py"; timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|H200|H100" $OUT/cublas.txt | head -8
cd $OUT && tar czf exp3.tgz *.json cublas.txt && rm -f *.json

source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
b() { n=$1; bin=$2; envs=$3; shift 3; echo "-- $n"; timeout 100 env $envs $B/$bin --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-140; }
W="--backends wgsl-coopmat --shapes 4096x4096x4096 --dtypes f16"

bash .ci/validation-layer unpack .device/vvl /tmp/vvl >/dev/null && source /tmp/vvl/layer.env
#COOPGEMM_EXPECT_WGSL_COOPMAT=1 WGPU_VALIDATION=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device timeout 150 $VVL_RUN $B/wgsl_coopmat --test-threads=4 2>&1 | grep -E "test result|panicked|VALIDATION" | head -5
#COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 150 $B/correctness --test-threads=8 2>&1 | grep -E "test result|panicked|FAIL" | head -5
for bin in bench bench-scalar bench-noload bench-nobarrier; do
  for c in c16-128x128x32-w4x2 c16-128x128x16-w2x2 c16-64x128x32-w2x4; do b wgsl-$bin-$c $bin COOPGEMM_WGSL_COOPMAT_CONFIG=$c $W; done
done
b khr bench COOPGEMM_COOPMAT2=0 --backends coopmat --shapes 4096x4096x4096 --dtypes f16
b cm2 bench X=1 --backends coopmat --shapes 4096x4096x4096 --dtypes f16
P="--backends coopmat --b-layouts column --dtypes f16"
b prefill-default bench X=1 $P --shapes 512x4096x4096,4096x4096x512,4096x512x14336
for t in 64x128x64x8 128x64x64x8 64x64x64x8 128x256x32x8 256x128x32x8 128x128x32x8; do b prefill-$t bench COOPGEMM_COOPMAT2_TILE=$t $P --shapes 512x4096x4096,4096x4096x512,4096x512x14336; done
for s in 2 3; do b prefill-split$s bench COOPGEMM_SPLIT_K=$s $P --shapes 512x4096x4096,4096x512x14336; done
cd $OUT && tar czf exp1.tgz *.json && rm *.json

source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
S=16x4096x14336,16x14336x4096,16x4096x4096,8x4096x14336
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 100 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
for t in 32x32x8x1 32x32x8x2 16x32x8x2 32x64x8x2 32x16x8x2; do b cfg-$t "COOPGEMM_DECODE_ROWS=16 COOPGEMM_DECODE_CONFIG=$t" --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8; done
(cd $OUT && tar czf bench.tgz *.json && rm *.json)
echo "== tests"; timeout 100 $B/decode 2>&1 | grep -E "test result|panicked"
bash .ci/validation-layer unpack .device/vvl /tmp/vvl >/dev/null && source /tmp/vvl/layer.env
WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device timeout 150 $VVL_RUN $B/decode --test-threads=4 2>&1 | grep -E "test result|panicked|VALIDATION" | head
COOPGEMM_COOPMAT2=0 timeout 100 $B/decode 2>&1 | grep -E "test result|panicked"

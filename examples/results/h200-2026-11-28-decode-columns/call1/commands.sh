source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 100 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
net() { n=$1; envs=$2; echo "-- $n $envs"; timeout 120 env $envs $B/networks --nets mlp64,mlp32 --rows 1048576 --kernels coopvec --samples 5 --no-layer-by-layer --json $OUT/$n.json 2>&1 | grep -E "mlp|rror" | cut -c1-160; }
echo "== tests"; timeout 120 env COOPGEMM_EXP_DECODE_DIRECT=1 $B/decode 2>&1 | grep -E "test result|panicked"
timeout 100 $B/guard 2>&1 | grep -E "test result|panicked"
S=16x4096x14336,16x14336x4096,16x4096x4096,8x4096x14336
for r in 1 2; do
  b dec-plan-r$r "" --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8
  b dec-staged-r$r "COOPGEMM_DECODE_ROWS=16" --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8
  b dec-direct-r$r "COOPGEMM_DECODE_ROWS=16 COOPGEMM_EXP_DECODE_DIRECT=1" --backends coopmat --b-layouts row,column --shapes $S --dtypes f16,i8
done
for t in 16x32x8 16x32x16 32x32x12 16x64x8; do
  b cfg-direct-$t "COOPGEMM_DECODE_ROWS=16 COOPGEMM_EXP_DECODE_DIRECT=1 COOPGEMM_DECODE_CONFIG=$t" --backends coopmat --b-layouts row,column --shapes 16x4096x14336,16x14336x4096 --dtypes f16,i8
done
W=4096x4096x4096,1x4096x14336,16x4096x14336,1x4096x4096
for r in 1 2; do
  b wall-zero-r$r "" --backends coopmat --b-layouts column --dtypes f16 --shapes $W --wall-clock
  b wall-one-r$r "COOPGEMM_EXP_TOUCH_ONE=1" --backends coopmat --b-layouts column --dtypes f16 --shapes $W --wall-clock
  net net-zero-r$r ""
  net net-one-r$r "COOPGEMM_EXP_TOUCH_ONE=1"
done
python3 .device/anchors/skinny.py 2>&1 | tail -20 > $OUT/skinny.txt
(cd $OUT && tar czf bench.tgz *.json && rm *.json)
bash .ci/validation-layer unpack .device/vvl /tmp/vvl >/dev/null && source /tmp/vvl/layer.env
WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device COOPGEMM_EXP_DECODE_DIRECT=1 timeout 150 $VVL_RUN $B/decode --test-threads=4 2>&1 | grep -E "test result|panicked|VALIDATION" | head

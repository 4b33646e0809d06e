# bench: the committed selection (octs for f16 summed in f32, B row-major, 128-row tiles; quads elsewhere)
source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
b() { n=$1; bin=$2; envs=$3; shift 3; echo "-- $n"; timeout 200 env $envs $B/$bin -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl|simt)|rror" | cut -c1-150; }
bash .ci/validation-layer unpack .device/vvl /tmp/vvl >/dev/null && source /tmp/vvl/layer.env
COOPGEMM_EXPECT_WGSL_COOPMAT=1 WGPU_VALIDATION=1 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device timeout 150 $VVL_RUN $B/wgsl_coopmat --test-threads=4 > $OUT/vvl-wgsl.log 2>&1; echo "vvl wgsl_coopmat: $(grep 'test result' $OUT/vvl-wgsl.log) $(grep -c VALIDATION $OUT/vvl-wgsl.log) validation messages"
for t in correctness guard; do COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 200 $B/$t --test-threads=8 > $OUT/$t.log 2>&1; echo "$t: $(grep 'test result' $OUT/$t.log)"; done
S=1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096
b wgsl-row bench X=1 --no-tune --backends wgsl-coopmat --shapes $S --dtypes f16,f16acc16
b wgsl-column bench X=1 --no-tune --backends wgsl-coopmat --shapes 4096x4096x4096,512x4096x4096 --dtypes f16,f16acc16 --b-layouts column
b khr bench COOPGEMM_COOPMAT2=0 --no-tune --backends coopmat --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16,f16acc16
cd $OUT && tar czf final.tgz *.json *.log && rm -f *.json *.log

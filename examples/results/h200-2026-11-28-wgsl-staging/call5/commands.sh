# bench-vec: quads (2c5c88f); bench-octs: octs for every aligned f16 GEMM; bench: octs with odd invocations writing their high quad first (dropped)
source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
b() { n=$1; bin=$2; envs=$3; shift 3; echo "-- $n"; timeout 200 env $envs $B/$bin -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl|simt)|rror" | cut -c1-150; }
bash .ci/validation-layer unpack .device/vvl /tmp/vvl >/dev/null && source /tmp/vvl/layer.env
COOPGEMM_EXPECT_WGSL_COOPMAT=1 WGPU_VALIDATION=1 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device timeout 150 $VVL_RUN $B/wgsl_coopmat --test-threads=4 > $OUT/vvl-wgsl.log 2>&1; echo "vvl wgsl_coopmat: $(grep 'test result' $OUT/vvl-wgsl.log) $(grep -c VALIDATION $OUT/vvl-wgsl.log) validation messages"
for t in correctness guard; do COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 200 $B/$t --test-threads=8 > $OUT/$t.log 2>&1; echo "$t: $(grep 'test result' $OUT/$t.log)"; done
S=2048x2048x2048,4096x4096x4096,512x4096x4096,4096x4096x512,64x4096x4096
for bin in bench-vec bench-octs bench; do
  b $bin-row $bin X=1 --no-tune --backends wgsl-coopmat --shapes $S --dtypes f16,f16acc16
  b $bin-column $bin X=1 --no-tune --backends wgsl-coopmat --shapes $S --dtypes f16,f16acc16 --b-layouts column
done
b khr bench COOPGEMM_COOPMAT2=0 --no-tune --backends coopmat --shapes 4096x4096x4096 --dtypes f16,f16acc16
cd $OUT && tar czf exp5.tgz *.json *.log && rm -f *.json *.log

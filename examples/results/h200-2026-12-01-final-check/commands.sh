source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/c0 COOPGEMM_EXPECT_COOPMAT=1
for t in mlp prepared; do timeout 200 $B/$t --test-threads=4 > $OUT/$t-tests.txt 2>&1; echo "$t exit $? $(grep -E 'test result' $OUT/$t-tests.txt | tail -1)"; done
bash .ci/validation-layer unpack .device/vvl /tmp/vvl > /dev/null && source /tmp/vvl/layer.env
export WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device COOPGEMM_EXPECT_VALIDATION=1
echo "vvl: sid's layer $VVL_VERSION"
for t in validation prepared mlp; do
  COOPGEMM_CACHE_DIR=/tmp/c4 timeout 250 $VVL_RUN $B/$t --test-threads=4 > $OUT/vvl-$t.log 2>&1; echo "vvl $t exit $? $(grep -E 'test result' $OUT/vvl-$t.log | tail -1)"
  echo "  validation messages: $(grep -c 'VALIDATION' $OUT/vvl-$t.log)"; grep -m3 'VALIDATION' $OUT/vvl-$t.log | cut -c1-300
done
unset WGPU_VALIDATION WGPU_DEBUG COOPGEMM_EXPECT_VALIDATION
timeout 100 $B/networks --nets mlp64,mlp32 --rows 1048576,4194304 --kernels coopvec --no-layer-by-layer --samples 5 --prepared --per-submission 8 --json $OUT/prep8.json 2>&1 | grep -vE "^\[" | cut -c1-160

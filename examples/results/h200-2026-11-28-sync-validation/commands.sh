source tools/device/env.sh
bash .ci/validation-layer unpack .device/vvl /tmp/vvl && source /tmp/vvl/layer.env
export COOPGEMM_EXPECT_COOPMAT=1 WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device
echo "vvl: sid's layer $VVL_VERSION"
for t in prepared split_k mlp; do
  COOPGEMM_CACHE_DIR=/tmp/c4 timeout 250 $VVL_RUN $B/$t --test-threads=4 > $OUT/vvl-$t.log 2>&1; echo "$t exit $? $(grep -E 'test result' $OUT/vvl-$t.log | tail -1)"
  echo "  validation messages: $(grep -c 'VALIDATION' $OUT/vvl-$t.log)"; grep -m3 'VALIDATION' $OUT/vvl-$t.log | cut -c1-300
done
for t in validation prepared; do
  COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_CACHE_DIR=/tmp/c4 timeout 200 $VVL_RUN $B/$t --test-threads=4 > $OUT/vvl-$t.log 2>&1; echo "$t exit $? $(grep -E 'test result' $OUT/vvl-$t.log | tail -1)"
  echo "  validation messages: $(grep -c 'VALIDATION' $OUT/vvl-$t.log)"; grep -m3 'VALIDATION' $OUT/vvl-$t.log | cut -c1-300
done

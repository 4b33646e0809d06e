source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 150 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
echo "== tests"; timeout 120 $B/decode 2>&1 | grep -E "test result|panicked"
S=""; for m in 4 6 8 12 16; do for nk in 4096x14336 4096x11008 4096x4096 14336x4096 11008x4096 8192x8192 2048x8192 8192x2048; do S="$S,${m}x$nk"; done; done; S=${S#,}
for r in 1 2; do
  b cols-new-r$r "" --backends coopmat --b-layouts column --shapes $S --dtypes i8
  b cols-off-r$r "COOPGEMM_DECODE_ROWS=0" --backends coopmat --b-layouts column --shapes $S --dtypes i8
  b cols-all-r$r "COOPGEMM_DECODE_ROWS=16" --backends coopmat --b-layouts column --shapes $S --dtypes i8
done
b default-i8 "" --backends coopmat --dtypes i8 --b-layouts row,column
(cd $OUT && tar czf bench.tgz *.json && rm *.json)
bash .ci/validation-layer unpack .device/vvl /tmp/vvl >/dev/null && source /tmp/vvl/layer.env
WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device timeout 150 $VVL_RUN $B/decode --test-threads=4 2>&1 | grep -E "test result|panicked|VALIDATION" | head

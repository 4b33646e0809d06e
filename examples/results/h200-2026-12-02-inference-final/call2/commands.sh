#!/usr/bin/env bash
# Call 2: prepared split GEMMs batched (their parts in one pair of command buffers, their
# reductions in one more) against the binaries of call 1 (bench-old), host time of one
# prepared GEMM per submission against Context::run (alternating, two rounds), and the
# prepared and split suites on the GPU, also under sid's validation layer with
# synchronization validation.
set -u
source tools/device/env.sh
R=$OUT/r; mkdir -p $R
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
for t in prepared split_k; do timeout 200 $B/$t --test-threads=4 > $R/$t-tests.txt 2>&1; echo "$t exit $? $(grep -E 'test result' $R/$t-tests.txt | tail -1)"; done
S=16x4096x4096,16x14336x4096,16x4096x14336,64x4096x4096,1x4096x14336,1x4096x4096
b() { n=$1; bin=$2; shift 2; echo "-- $n"; timeout 150 $B/$bin --no-tune -q --backends coopmat --b-layouts column --shapes $S --dtypes f16 --wall-clock --json $R/$n.json "$@" 2>&1 | grep -E "^coopmat|rror" | cut -c1-130; }
for r in 1 2; do
  b run-old-r$r bench-old
  b prep1-old-r$r bench-old --prepared 1
  b prep8-old-r$r bench-old --prepared 8
  b prep8-new-r$r bench --prepared 8
  b prep1-new-r$r bench --prepared 1
  b run-new-r$r bench
done
bash .ci/validation-layer unpack .device/vvl /tmp/vvl > /dev/null && source /tmp/vvl/layer.env
export WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1 VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device COOPGEMM_EXPECT_VALIDATION=1
echo "vvl: sid's layer $VVL_VERSION"
for t in validation prepared split_k; do
  COOPGEMM_CACHE_DIR=/tmp/c4 timeout 200 $VVL_RUN $B/$t --test-threads=4 > $R/vvl-$t.log 2>&1; echo "vvl $t exit $? $(grep -E 'test result' $R/vvl-$t.log | tail -1)"
  echo "  validation messages: $(grep -c 'VALIDATION' $R/vvl-$t.log)"; grep -m3 'VALIDATION' $R/vvl-$t.log | cut -c1-300
done
( cd $OUT && tar czf call2.tgz r && rm -rf r )

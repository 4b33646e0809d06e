#!/usr/bin/env bash
# H100: every test binary on both ash kernels (coopmat2, and the KHR kernel with
# COOPGEMM_COOPMAT2=0), wgsl-coopmat expected, and one lane under Debian sid's Khronos
# validation layer (1.4.363 or newer) with synchronization validation, which
# tools/device/fetch-validation-layer.sh staged in .device/vvl/ (unpacked and run by
# .ci/validation-layer; every message counts). One message is muted there by its ID:
# WARNING-vkGetDeviceProcAddr-device (vkGetDeviceProcAddr asked for
# vkGetPhysicalDeviceVideoEncodeQualityLevelPropertiesKHR). It is raised inside the
# loader's vkCreateDevice, below coopgemm's one call, with no coopgemm, wgpu or ash frame
# between (backtrace: examples/results/h100-2026-11-26-decode/validation-backtrace.log;
# docs/testing.md). The lane vvl-unfiltered runs the validation suite without the filter
# and prints how often it appears. Logs go to $OUT/logs.tgz; each lane prints
# "<lane> exit <status> <libtest summary>".
set -u
source "$(dirname "$0")/env.sh"
bash .ci/validation-layer unpack .device/vvl /tmp/vvl && source /tmp/vvl/layer.env
export COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=${COOPGEMM_RANDOM_CASES:-40}
lane() { # label env... binary args
  local label=$1; shift
  ( env "$@" > $OUT/$label.log 2>&1; echo "$label exit $? $(grep -E 'test result' $OUT/$label.log | tail -1)"; grep -E "cases on" $OUT/$label.log | sort | uniq -c | head -8 )
}
( lane guard-cm2 COOPGEMM_CACHE_DIR=/tmp/c1 timeout 300 $B/guard --test-threads=5 ) &
( lane guard-khr COOPGEMM_CACHE_DIR=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 200 $B/guard --test-threads=5
  for t in correctness random epilogue split_k packing staging selection disk_cache skinny decode; do lane khr-$t COOPGEMM_CACHE_DIR=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 150 $B/$t --test-threads=8; done ) &
( lane unit timeout 100 $B/coopgemm-unit
  for t in wgsl_coopmat correctness random epilogue numerics resources selection timing errors split_k packing staging disk_cache spirv mlp skinny decode; do lane all-$t COOPGEMM_CACHE_DIR=/tmp/c3 COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 200 $B/$t --test-threads=8; done ) &
( export WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1
  echo "vvl: sid's layer $VVL_VERSION"
  for t in validation correctness split_k resources epilogue skinny decode; do lane vvl-$t VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device COOPGEMM_CACHE_DIR=/tmp/c4 timeout 200 $VVL_RUN $B/$t --test-threads=4; done
  lane vvl-unfiltered COOPGEMM_CACHE_DIR=/tmp/c4 timeout 100 $VVL_RUN $B/validation
  echo "vvl-unfiltered: $(grep -c '^\[WARN wgpu_hal::vulkan::instance\] VALIDATION \[WARNING-vkGetDeviceProcAddr-device' $OUT/vvl-unfiltered.log) x WARNING-vkGetDeviceProcAddr-device, $(grep -c '^\[\(WARN\|ERROR\) wgpu_hal::vulkan::instance\] VALIDATION' $OUT/vvl-unfiltered.log) validation messages in all" ) &
wait
( cd $OUT && tar czf logs.tgz *.log && rm *.log )

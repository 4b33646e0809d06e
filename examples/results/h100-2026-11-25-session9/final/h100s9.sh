#!/usr/bin/env bash
# H100, session 9: every test binary on both ash kernels, wgsl-coopmat expected, one lane under
# the current validation layer.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
mkdir -p /tmp/vvl && dpkg -x .device/vvl/*.deb /tmp/vvl
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=40
run() { # label env... -- binary
  local label=$1; shift
  ( env "$@" > $OUT/$label.log 2>&1; echo "$label exit $? $(grep -E 'test result' $OUT/$label.log | tail -1)"; grep -E "cases on" $OUT/$label.log | sort | uniq -c | head -8 )
}
( run guard-cm2 COOPGEMM_CACHE=/tmp/c1 timeout 300 $B/guard --test-threads=5 ) &
( run guard-khr COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 200 $B/guard --test-threads=5
  for t in correctness random epilogue split_k packing selection disk_cache; do run khr-$t COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 150 $B/$t --test-threads=8; done ) &
( run unit timeout 100 $B/coopgemm-unit
  for t in wgsl_coopmat correctness random epilogue numerics resources selection timing errors split_k packing disk_cache spirv; do run all-$t COOPGEMM_CACHE=/tmp/c3 COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 200 $B/$t --test-threads=8; done ) &
( export VK_LAYER_PATH=/tmp/vvl/usr/share/vulkan/explicit_layer.d LD_LIBRARY_PATH=/tmp/vvl/usr/lib/x86_64-linux-gnu
  export WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_LAYER_1_4_309=1 COOPGEMM_AUTOTUNE=0
  for t in validation correctness split_k resources epilogue; do run vvl-$t COOPGEMM_CACHE=/tmp/c4 timeout 200 $B/$t --test-threads=4; done ) &
wait
( cd $OUT && tar czf logs.tgz *.log && rm *.log )

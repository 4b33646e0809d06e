#!/usr/bin/env bash
# H100, session 9, call 1: coopmat2 int8 (new s8_s32 variant): device list, correctness on
# both kernels, i8 bench coopmat2 vs KHR, an i8 tile sweep.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
timeout 60 $B/info > $OUT/info.txt 2>&1; grep -E "granularity.*(i8|u8)|max dimension" $OUT/info.txt
echo "== tests touching i8 (coopmat2 default)"
for t in correctness random guard; do
  COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=60 timeout 200 $B/$t --test-threads=8 > $OUT/t-$t.log 2>&1; echo "$t exit $? $(grep 'test result' $OUT/t-$t.log | tail -1)"
done
echo "== i8 bench: coopmat2 (default) then KHR"
timeout 100 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x512x14336 --dtypes i8 --backends coopmat --json $OUT/bench-i8-cm2.json 2>&1 | f
COOPGEMM_COOPMAT2=0 timeout 100 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192 --dtypes i8 --backends coopmat --json $OUT/bench-i8-khr.json 2>&1 | f
echo "== i8 coopmat2 tile sweep"
for t in 128x256x64x8 128x256x64x16 128x256x128x8 128x128x128x8 128x128x64x16 256x128x64x8 128x256x32x16 128x256x64x8x128 128x128x128x8x128; do
  echo "-- $t"; COOPGEMM_COOPMAT2_TILE=$t timeout 60 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192 --dtypes i8 --backends coopmat --json $OUT/sweep-$t.json 2>&1 | f
done
( cd $OUT && tar czf logs.tgz *.log sweep-*.json && rm -f *.log sweep-*.json )

#!/usr/bin/env bash
# H100, session 8: KHR tilings for i8 (and f16 on the KHR kernel), repeated and interleaved;
# the 512x4096x4096 recheck.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|WARN" | cut -c1-200; }
b() { timeout 90 $B/bench --no-tune --backends coopmat "$@" 2>&1 | f; }
echo "== i8 tilings, three rounds"
for round in 1 2 3; do
  for t in default 2x4x8x2x1 4x2x4x4x1 2x4x4x4x1 4x2x8x2x1; do
    echo "-- $round $t"; [ $t = default ] && unset COOPGEMM_COOPMAT_TILING || export COOPGEMM_COOPMAT_TILING=$t
    b --shapes 4096x4096x4096,8192x8192x8192 --dtypes i8
  done
done
unset COOPGEMM_COOPMAT_TILING
echo "== f16 on the KHR kernel"
for round in 1 2; do
  for t in default 2x4x8x2x1; do
    echo "-- $round $t"; [ $t = default ] && unset COOPGEMM_COOPMAT_TILING || export COOPGEMM_COOPMAT_TILING=$t
    COOPGEMM_COOPMAT2=0 b --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16,bf16,f16acc16
  done
done
unset COOPGEMM_COOPMAT_TILING
echo "== 512x4096x4096 recheck"
for round in 1 2 3; do b --shapes 512x4096x4096 --dtypes f16,f16acc16; done

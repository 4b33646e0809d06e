#!/usr/bin/env bash
# H100, session 7: coopmat2 tile / K-unroll sweep (forced with COOPGEMM_COOPMAT2_TILE), the LLM
# shape with wall-clock timing, and KHR i8 tilings (COOPGEMM_COOPMAT_TILING).
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|WARN"; }
b() { local name=$1; shift; timeout 60 $B/bench --no-tune --backends coopmat --json $OUT/$name.json "$@" 2>&1 | f; }
echo "== LLM shape 4096x512x14336, wall clock"
for t in 128x128x64x8 128x128x32x8 128x128x64x16 64x128x64x8 128x64x64x8 64x64x64x8 64x128x32x8 256x128x32x8 128x256x32x8; do
  echo "-- $t"; COOPGEMM_COOPMAT2_TILE=$t b llm-$t --wall-clock --shapes 4096x512x14336 --dtypes f16,f16acc16
done
echo "== K unroll at 4096^3 / 8192^3"
for t in 128x256x32x16 128x256x32x4 256x128x32x8 256x128x32x16; do
  echo "-- $t"; COOPGEMM_COOPMAT2_TILE=$t b big-$t --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16
done
for t in 128x256x64x16 128x256x64x4; do
  echo "-- $t"; COOPGEMM_COOPMAT2_TILE=$t b big16-$t --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16acc16
done
echo "== i8 KHR tilings"
for t in 2x4x4x2x1 2x4x4x2x2 2x2x4x4x1 4x2x2x4x1 2x4x2x4x1 2x4x4x4x1; do
  echo "-- $t"; COOPGEMM_COOPMAT_TILING=$t b i8-$t --shapes 8192x8192x8192 --dtypes i8
done

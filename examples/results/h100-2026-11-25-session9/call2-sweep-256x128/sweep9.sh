#!/usr/bin/env bash
# H100, session 9, call 2: coopmat2 256x128 tiles for i8, f16 and f16 sums.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
s() { local t=$1; shift; echo "-- $t $*"; COOPGEMM_COOPMAT2_TILE=$t timeout 60 $B/bench --no-tune --backends coopmat --json $OUT/sweep-$t-$1.json "$@" 2>&1 | f; }
for t in 256x128x64x16 256x128x128x8 256x128x32x16 256x64x64x8 256x128x64x4; do s $t --dtypes i8 --shapes 4096x4096x4096,8192x8192x8192; done
s 256x128x64x8 --dtypes i8 --shapes 512x4096x4096,4096x512x14336,4096x4096x512
s 128x128x128x8 --dtypes i8 --shapes 4096x4096x512
for t in 256x128x32x16 256x128x64x8; do s $t --dtypes f16,f16acc16,bf16 --shapes 4096x4096x4096,8192x8192x8192; done
s 128x256x32x16 --dtypes f16,bf16 --shapes 4096x4096x4096,8192x8192x8192
s 128x256x64x8 --dtypes f16acc16 --shapes 4096x4096x4096,8192x8192x8192
( cd $OUT && tar czf sweeps.tgz sweep-*.json && rm -f sweep-*.json )

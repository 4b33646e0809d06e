#!/usr/bin/env bash
# H100, session 9, call 9: coopmat2 BK 16 tiles (f16, bf16) and 256x256 with f16 sums.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
s() { local t=$1; shift; echo "-- $t $*"; COOPGEMM_COOPMAT2_TILE=$t timeout 60 $B/bench --no-tune --backends coopmat --json $OUT/sweep-$t-$2.json "$@" 2>&1 | f; }
for t in 128x256x16x16 128x256x16x32 128x256x32x16; do s $t --dtypes f16,bf16 --shapes 4096x4096x4096,8192x8192x8192; done
for t in 256x256x32x8 256x256x16x16 256x256x64x8 128x256x64x8; do s $t --dtypes f16acc16 --shapes 4096x4096x4096,8192x8192x8192; done
( cd $OUT && tar czf call9.tgz *.json && rm -f *.json )

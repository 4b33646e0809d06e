#!/usr/bin/env bash
# H100, session 9, call 5: K-contiguous (column-major) B on coopmat2 for 2-byte inputs; i8 tiles with column B.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
s() { local t=$1; shift; echo "-- $t $*"; COOPGEMM_COOPMAT2_TILE=$t timeout 90 $B/bench --no-tune --backends coopmat --json $OUT/sweep-$t-$2.json "$@" 2>&1 | f; }
for t in 128x256x32x16 128x128x64x16 256x128x32x16; do s $t --dtypes f16,bf16 --b-layouts column --shapes 4096x4096x4096,8192x8192x8192; done
for t in 128x256x64x8 128x128x64x16 128x128x128x8; do s $t --dtypes f16acc16 --b-layouts column --shapes 4096x4096x4096,8192x8192x8192; done
for t in 128x128x128x16 128x128x256x4 256x128x128x4 128x256x128x4 128x128x64x16 64x128x128x8; do s $t --dtypes i8 --b-layouts column --shapes 4096x4096x4096,8192x8192x8192; done
echo "-- i8 col small shapes, heuristic"; timeout 90 $B/bench --no-tune --backends coopmat --b-layouts column --dtypes i8 --shapes 4096x4096x512,64x4096x4096,1024x1024x1024 --json $OUT/small.json 2>&1 | f
( cd $OUT && tar czf call5.tgz *.json && rm -f *.json )

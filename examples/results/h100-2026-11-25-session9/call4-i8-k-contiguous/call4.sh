#!/usr/bin/env bash
# H100, session 9, call 4: i8 with K-contiguous B (column-major) and packed B.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
s() { local t=$1; shift; echo "-- $t $*"; COOPGEMM_COOPMAT2_TILE=$t timeout 90 $B/bench --no-tune --backends coopmat --json $OUT/sweep-$t-$1$2.json "$@" 2>&1 | f; }
for t in 256x128x64x8 128x256x64x8 256x128x128x8 128x128x128x8; do s $t --b-layouts column,packed --dtypes i8 --shapes 4096x4096x4096,8192x8192x8192; done
echo "-- KHR column"; COOPGEMM_COOPMAT2=0 timeout 90 $B/bench --no-tune --backends coopmat --b-layouts column --dtypes i8 --shapes 4096x4096x4096,8192x8192x8192 --json $OUT/khr-col.json 2>&1 | f
echo "-- default all layouts i8 LLM"; timeout 90 $B/bench --no-tune --backends coopmat --b-layouts row,column --dtypes i8 --shapes 4096x512x14336,512x4096x4096 --json $OUT/llm-col.json 2>&1 | f
( cd $OUT && tar czf call4.tgz *.json && rm -f *.json )

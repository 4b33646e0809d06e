#!/usr/bin/env bash
# H100, session 8: coopmat2 with 128-invocation workgroups (two workgroups per SM where the
# registers allow), forced with COOPGEMM_COOPMAT2_TILE=BMxBNxBKxUNROLLxINVOCATIONS.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
export COOPGEMM_PIPELINE_STATS=1 RUST_LOG=coopgemm=info
f() { grep -E "^(coopmat|simt|wgsl)|rror|WARN|regist|no coopmat2 shape" | grep -v "^\s*$" | cut -c1-220; }
b() { local name=$1; shift; timeout 90 $B/bench --no-tune --backends coopmat --json $OUT/$name.json "$@" 2>&1 | f; }
echo "== big, f32 sums"
for t in default 128x128x32x16x128 128x128x64x8x128 128x128x64x16x128 64x128x64x8x128 128x256x32x16x128; do
  echo "-- $t"; [ $t = default ] && unset COOPGEMM_COOPMAT2_TILE || export COOPGEMM_COOPMAT2_TILE=$t
  b big-$t --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16
done
echo "== big, f16 sums"
for t in default 128x128x64x8x128 128x128x32x16x128 128x256x64x8x128 128x256x32x16x128; do
  echo "-- $t"; [ $t = default ] && unset COOPGEMM_COOPMAT2_TILE || export COOPGEMM_COOPMAT2_TILE=$t
  b big16-$t --shapes 4096x4096x4096,8192x8192x8192 --dtypes f16acc16
done
echo "== LLM shape 4096x512x14336, wall clock"
for t in default 64x128x64x16x128 128x64x64x16x128 128x128x64x16x128 64x64x64x16x128 64x128x32x16x128; do
  echo "-- $t"; [ $t = default ] && unset COOPGEMM_COOPMAT2_TILE || export COOPGEMM_COOPMAT2_TILE=$t
  b llm-$t --wall-clock --shapes 4096x512x14336 --dtypes f16,f16acc16
done
unset COOPGEMM_COOPMAT2_TILE

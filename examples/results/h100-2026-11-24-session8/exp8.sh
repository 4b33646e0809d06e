#!/usr/bin/env bash
# H100, session 8: what the per-GEMM wall-clock gap is made of (touch pass variants).
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror|WARN" | cut -c1-200; }
for round in 1 2; do
for t in one zero skip; do
  echo "-- $round touch=$t"
  COOPGEMM_EXP_TOUCH=$t timeout 120 $B/bench --no-tune --backends coopmat --wall-clock --shapes 4096x512x14336,4096x4096x4096,256x256x256,1024x1024x1024 --dtypes f16,f16acc16 2>&1 | f
done
done
echo "-- timestamps"
timeout 120 $B/bench --no-tune --backends coopmat --shapes 4096x512x14336,4096x4096x4096,256x256x256,1024x1024x1024 --dtypes f16,f16acc16 2>&1 | f
echo "-- simt wall"
timeout 120 $B/bench --no-tune --backends simt --wall-clock --shapes 256x256x256,1024x1024x1024 --dtypes f32 2>&1 | f
echo "-- simt timestamps"
timeout 120 $B/bench --no-tune --backends simt --shapes 256x256x256,1024x1024x1024 --dtypes f32 2>&1 | f

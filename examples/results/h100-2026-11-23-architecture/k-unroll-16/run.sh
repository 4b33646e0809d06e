#!/usr/bin/env bash
# H100, session 7: coopmat2 K unroll 16 (default for long K) -- correctness with unroll 16
# forced on every test shape, then the README's tensor-core rows, then cuBLAS.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
echo "== unroll 16 forced: correctness, guard, random"
for t in 128x128x32x16 128x256x64x16; do
  for b in correctness guard random; do
    COOPGEMM_COOPMAT2_TILE=$t COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=40 COOPGEMM_CACHE=/tmp/u16 timeout 150 $B/$b --test-threads=8 > $OUT/u16-$t-$b.log 2>&1
    echo "$t $b exit $? $(grep 'test result' $OUT/u16-$t-$b.log | tail -1)"
  done
done
f() { grep -E "^(coopmat|simt|wgsl)|rror"; }
echo "== tensor cores, heuristic (no tuning)"
timeout 200 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096 --dtypes f16,bf16,f16acc16 --backends coopmat --json $OUT/bench-tc.json 2>&1 | f
echo "== wall clock"
timeout 100 $B/bench --no-tune --wall-clock --shapes 4096x512x14336,4096x4096x4096,8192x8192x8192 --dtypes f16,f16acc16 --backends coopmat --json $OUT/bench-wall.json 2>&1 | f
echo "== tuned (Context::tune, 60 s cap)"
RUST_LOG=coopgemm::autotune=info timeout 150 $B/bench --shapes 4096x4096x4096,4096x512x14336 --dtypes f16,f16acc16 --backends coopmat --json $OUT/bench-tuned.json 2>&1 | grep -E "^coopmat|autotune" | cut -c1-300
echo "== cuBLAS"
timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|bf16" $OUT/cublas.txt

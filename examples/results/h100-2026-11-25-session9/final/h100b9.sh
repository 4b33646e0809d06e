#!/usr/bin/env bash
# H100, session 9: the README's tensor-core rows (heuristic configurations), wall clock
# (one submission per GEMM, with host_submit_ms), i8 on coopmat2 from row-major, column-major
# and packed B, i8 on the KHR kernel, the KHR kernel, SIMT and wgsl-coopmat, then cuBLAS.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror" | cut -c1-200; }
echo "== tensor cores, heuristic (no tuning)"
timeout 200 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096 --dtypes f16,bf16,f16acc16 --backends coopmat --json $OUT/bench-tc.json 2>&1 | f
echo "== wall clock, one submission per sample"
timeout 100 $B/bench --no-tune --wall-clock --shapes 4096x512x14336,4096x4096x4096,8192x8192x8192,64x4096x4096 --dtypes f16,f16acc16 --backends coopmat --json $OUT/bench-wall.json 2>&1 | f
echo "== i8, B row-major, column-major, packed"
timeout 100 $B/bench --no-tune --dtypes i8 --backends coopmat --b-layouts row,column,packed --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,4096x512x14336,64x4096x4096 --json $OUT/bench-i8.json 2>&1 | f
COOPGEMM_COOPMAT2=0 timeout 100 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192 --dtypes i8 --backends coopmat --json $OUT/bench-i8-khr.json 2>&1 | f
echo "== KHR kernel"
COOPGEMM_COOPMAT2=0 timeout 100 $B/bench --no-tune --shapes 4096x4096x4096 --dtypes f16,f16acc16 --backends coopmat --json $OUT/bench-khr.json 2>&1 | f
echo "== SIMT, wgsl-coopmat"
timeout 100 $B/bench --no-tune --shapes 4096x4096x4096 --dtypes f32 --backends simt --json $OUT/bench-simt.json 2>&1 | f
timeout 100 $B/bench --no-tune --shapes 4096x4096x4096 --dtypes f16 --backends wgsl-coopmat --json $OUT/bench-wgsl.json 2>&1 | f
echo "== cuBLAS"
timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|bf16|fp32" $OUT/cublas.txt | head -20

#!/usr/bin/env bash
# H100: the README's tensor-core rows (heuristic configurations, as a first GEMM gets them),
# wall clock for the LLM shape, i8, SIMT f32 check, wgsl-coopmat vs the KHR kernel, cuBLAS.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
echo "== coverage (cases per backend)"
COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_EXPECT_WGSL_COOPMAT=1 COOPGEMM_CACHE=/tmp/cov timeout 120 $B/correctness --nocapture --test-threads=8 2>&1 | grep "cases on" | sort | uniq -c
COOPGEMM_COOPMAT2=0 COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_CACHE=/tmp/cov2 timeout 120 $B/correctness --nocapture --test-threads=8 2>&1 | grep "cases on" | sort | uniq -c
f() { grep -E "^(coopmat|simt|wgsl)|rror"; }
echo "== tensor cores, heuristic (no tuning)"
timeout 200 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096 --dtypes f16,bf16,f16acc16 --backends coopmat --json $OUT/bench-tc.json 2>&1 | f
echo "== wall clock"
timeout 100 $B/bench --no-tune --wall-clock --shapes 4096x512x14336,4096x4096x4096,8192x8192x8192 --dtypes f16,f16acc16 --backends coopmat --json $OUT/bench-wall.json 2>&1 | f
echo "== i8 (KHR) and SIMT f32"
timeout 60 $B/bench --no-tune --shapes 4096x4096x4096,8192x8192x8192 --dtypes i8 --backends coopmat --json $OUT/bench-i8.json 2>&1 | f
timeout 60 $B/bench --no-tune --shapes 4096x4096x4096 --dtypes f32 --backends simt --json $OUT/bench-simt.json 2>&1 | f
echo "== KHR vs wgsl-coopmat"
COOPGEMM_COOPMAT2=0 timeout 120 $B/bench --no-tune --shapes 4096x4096x4096 --dtypes f16,f16acc16 --backends coopmat,wgsl-coopmat --json $OUT/bench-wgsl.json 2>&1 | f
echo "== tuned (Context::tune, 60 s cap) 4096^3 f16 coopmat"
RUST_LOG=coopgemm::autotune=info timeout 150 $B/bench --shapes 4096x4096x4096 --dtypes f16 --backends coopmat,wgsl-coopmat --json $OUT/bench-tuned.json 2>&1 | grep -E "^(coopmat|wgsl)|autotune" | cut -c1-400
echo "== cuBLAS"
timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; tail -14 $OUT/cublas.txt

#!/usr/bin/env bash
# H100: the README's performance rows with the heuristic's configurations (--no-tune), then
# PyTorch cuBLAS in the same call (.device/anchors/cublas.py, from ../shared/anchors/).
# Writes bench-*.json and cublas.txt to $OUT (bench.tgz).
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
f() { grep -E "^(coopmat|simt|wgsl)|rror" | cut -c1-200; }
bench() { local name=$1 limit=$2; shift 2; timeout "$limit" $B/bench --no-tune --json $OUT/bench-$name.json "$@" 2>&1 | f; }
echo "== tensor cores (GPU timestamps)"
bench tc 200 --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096 --dtypes f16,bf16,f16acc16 --backends coopmat
echo "== wall clock (back to back, submit to completion; host_submit_ms)"
bench wall 100 --wall-clock --shapes 4096x512x14336,4096x4096x4096,8192x8192x8192,64x4096x4096 --dtypes f16,f16acc16 --backends coopmat
echo "== i8 from row-major, column-major and packed B; the KHR kernel"
bench i8 100 --dtypes i8 --backends coopmat --b-layouts row,column,packed --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,4096x512x14336,64x4096x4096
COOPGEMM_COOPMAT2=0 bench i8-khr 100 --shapes 4096x4096x4096,8192x8192x8192 --dtypes i8 --backends coopmat
COOPGEMM_COOPMAT2=0 bench khr 100 --shapes 4096x4096x4096 --dtypes f16,f16acc16 --backends coopmat
echo "== SIMT, wgsl-coopmat"
bench simt 100 --shapes 4096x4096x4096 --dtypes f32 --backends simt
bench wgsl 100 --shapes 4096x4096x4096 --dtypes f16 --backends wgsl-coopmat
echo "== cuBLAS"
timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|bf16|fp32" $OUT/cublas.txt | head -20
( cd $OUT && tar czf bench.tgz *.json && rm -f *.json )

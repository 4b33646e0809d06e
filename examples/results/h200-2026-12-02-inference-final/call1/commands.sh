#!/usr/bin/env bash
# Issue 29's shapes in one device call: decode and prefill GPU time, the wall clock of
# Context::run and of prepared GEMMs (one and eight per submission), bf16 and i8 weights,
# wgsl-coopmat against the KHR kernel, and cuBLAS (skinny.py, cublas.py) in the same call.
# Everything is packed into one tar at the end (only a few files come back from $OUT).
set -u
source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn
R=$OUT/r; mkdir -p $R
D=1x4096x4096,16x4096x4096,64x4096x4096,1x14336x4096,16x14336x4096,1x4096x14336,16x4096x14336
P=512x4096x4096,4096x512x14336,4096x4096x512,4096x4096x4096,8192x8192x8192
b() { n=$1; shift; echo "-- $n"; timeout 200 $B/bench --no-tune -q --json $R/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl)|rror" | cut -c1-150; }
echo "== skinny.py"; timeout 120 python3 .device/anchors/skinny.py > $R/skinny.txt 2>&1; head -30 $R/skinny.txt
b decode --backends coopmat --b-layouts row,column --shapes $D --dtypes f16
b types --backends coopmat --b-layouts row,column --shapes 1x4096x14336,16x4096x14336,16x14336x4096 --dtypes bf16,i8
b decode-wall --backends coopmat --b-layouts row,column --shapes $D --dtypes f16 --wall-clock
b decode-prep1 --backends coopmat --b-layouts row,column --shapes $D --dtypes f16 --wall-clock --prepared 1
b decode-prep8 --backends coopmat --b-layouts row,column --shapes $D --dtypes f16 --wall-clock --prepared 8
b prefill --backends coopmat --b-layouts column --shapes $P --dtypes f16,f16acc16
b prefill-wall --backends coopmat --b-layouts column --shapes $P --dtypes f16,f16acc16 --wall-clock
b prefill-prep8 --backends coopmat --b-layouts column --shapes $P --dtypes f16,f16acc16 --wall-clock --prepared 8
b wgsl --backends wgsl-coopmat --shapes 4096x4096x4096 --dtypes f16,f16acc16
COOPGEMM_COOPMAT2=0 b khr --backends coopmat --shapes 4096x4096x4096 --dtypes f16,f16acc16
echo "== cublas.py"; timeout 150 python3 .device/anchors/cublas.py > $R/cublas.txt 2>&1; grep -E "fp16|H200|H100" $R/cublas.txt | head
echo "== skinny.py again"; timeout 120 python3 .device/anchors/skinny.py > $R/skinny2.txt 2>&1; head -30 $R/skinny2.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $R/gpu.txt 2>&1
( cd $OUT && tar czf final.tgz r && rm -rf r )

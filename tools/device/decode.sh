#!/usr/bin/env bash
# H100: the inference shapes of skinny.py (decode: few rows times a weight matrix; prefill)
# on the coopmat backend, with B row-major and column-major (torch.nn.Linear's weights):
# GPU timestamps for f16, bf16 and i8, then the wall clock, then the same shapes with the
# skinny kernel off (COOPGEMM_SKINNY_ROWS=0: the kernels they ran on before) and with it
# forced up to 64 rows, and row-major B without split-K (COOPGEMM_SPLIT_K=0), then cuBLAS (.device/anchors/skinny.py) in the same call.
# Writes decode-*.json and skinny.txt to $OUT (decode.tgz). Heuristic configurations (--no-tune).
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
DECODE=1x4096x4096,16x4096x4096,1x14336x4096,16x14336x4096,1x4096x14336,16x4096x14336
WIDER=32x4096x4096,64x4096x4096,32x4096x14336,64x4096x14336
f() { grep -E "^(coopmat|simt|wgsl)|rror" | cut -c1-200; }
bench() { local name=$1 limit=$2; shift 2; echo "-- $name"; timeout "$limit" $B/bench --no-tune --quiet --json $OUT/decode-$name.json --backends coopmat --b-layouts row,column "$@" 2>&1 | f; }
bench gpu 150 --shapes $DECODE,$WIDER --dtypes f16
bench gpu-bf16-i8 100 --shapes 1x4096x14336,16x4096x14336,1x4096x4096 --dtypes bf16,i8
bench wall 100 --wall-clock --shapes $DECODE --dtypes f16
COOPGEMM_SKINNY_ROWS=0 bench before 150 --shapes $DECODE,$WIDER --dtypes f16
COOPGEMM_SPLIT_K=0 bench no-split 100 --shapes $DECODE --dtypes f16 --b-layouts row
COOPGEMM_SKINNY_ROWS=64 bench wider 100 --shapes $WIDER --dtypes f16
echo "== cuBLAS"
timeout 150 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1; head -30 $OUT/skinny.txt
( cd $OUT && tar czf decode.tgz *.json && rm -f *.json )

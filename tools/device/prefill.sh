#!/usr/bin/env bash
# H100: GEMMs that fill the GPU with one partial wave of tiles (M = 64 decode batches, the
# prefill shapes of skinny.py/cublas.py) on the coopmat backend, f16 with B column-major:
# the heuristic's plan, then split along K into 2, 4 and 8 slices (COOPGEMM_SPLIT_K), GPU
# timestamps, then cuBLAS (.device/anchors/skinny.py) in the same call. Stage with
#   ../shared/device/prepare.sh --example bench
# Writes prefill-*.json and skinny.txt to $OUT. Heuristic configurations (--no-tune).
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
SHAPES=64x4096x4096,64x4096x14336,512x4096x4096,4096x4096x512,4096x512x14336
for split in default 2 4 8; do
    echo "-- split $split"
    if [ $split = default ]; then unset COOPGEMM_SPLIT_K; else export COOPGEMM_SPLIT_K=$split; fi
    timeout 120 $B/bench --no-tune --quiet --json $OUT/prefill-$split.json --backends coopmat \
        --b-layouts column --shapes $SHAPES --dtypes f16 2>&1 | grep -E "^coopmat|rror" | cut -c1-160
done
unset COOPGEMM_SPLIT_K
echo "== cuBLAS"
timeout 150 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1; grep -E "col (64|512|4096)x" $OUT/skinny.txt

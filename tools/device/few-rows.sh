#!/usr/bin/env bash
# H100: tensor cores for GEMMs of 16 and 32 rows. The skinny kernel (the default) against
# the cooperative-matrix kernels on tiles of 16 or 32 rows, forced, split along K: the KHR
# kernel (COOPGEMM_COOPMAT2=0, COOPGEMM_COOPMAT_TILING) and the coopmat2 kernel
# (COOPGEMM_COOPMAT2_TILE). f16, B column-major, GPU timestamps, --no-tune. Stage with
#   ../shared/device/prepare.sh --example bench
# Writes few-rows-*.json to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
SHAPES=16x4096x14336,16x4096x4096,32x4096x14336
run() {
    local name=$1; shift
    echo "-- $name"
    env "$@" timeout 60 $B/bench --no-tune --quiet --json $OUT/few-rows-$name.json --backends coopmat \
        --b-layouts column --shapes $SHAPES --dtypes f16 2>&1 | grep -E "^coopmat|rror" | cut -c1-150
}
run skinny
for split in 4 8 16; do
    run khr16x128-s$split COOPGEMM_SKINNY_ROWS=0 COOPGEMM_COOPMAT2=0 COOPGEMM_COOPMAT_TILING=1x4x1x2x4x2 COOPGEMM_SPLIT_K=$split
    run khr16x64-s$split COOPGEMM_SKINNY_ROWS=0 COOPGEMM_COOPMAT2=0 COOPGEMM_COOPMAT_TILING=1x4x1x1x4x2 COOPGEMM_SPLIT_K=$split
    run cm2-32x128-s$split COOPGEMM_SKINNY_ROWS=0 COOPGEMM_COOPMAT2_TILE=32x128x64x8 COOPGEMM_SPLIT_K=$split
done

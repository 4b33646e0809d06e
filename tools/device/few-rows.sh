#!/usr/bin/env bash
# H100: tensor cores for GEMMs of 8 to 64 rows. The default plan against the skinny kernel
# and the coopmat2 kernel on forced tiles (TILES, default 32x128x64x8), each split along K
# into each of SPLITS (default 2 4 8; COOPGEMM_SKINNY_ROWS, COOPGEMM_COOPMAT2_TILE,
# COOPGEMM_SPLIT_K). f16, B column-major and row-major, GPU timestamps, --no-tune. SHAPES
# overrides the shapes; FORCED_ONLY=1 skips the default and skinny runs. Stage with
#   ../shared/device/prepare.sh --example bench
# Writes few-rows-*.json to $OUT (one file per run).
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
: "${SHAPES:=8x4096x4096,8x4096x14336,12x4096x14336,16x4096x4096,16x4096x14336,24x4096x14336,32x4096x4096,32x4096x14336,32x14336x4096}"
run() {
    local name=$1; shift
    echo "-- $name"
    env "$@" timeout 90 $B/bench --no-tune --quiet --json $OUT/few-rows-$name.json --backends coopmat \
        --b-layouts column,row --shapes $SHAPES --dtypes f16 2>&1 | grep -E "^coopmat|rror" | cut -c1-150
}
if [ "${FORCED_ONLY:-0}" != 1 ]; then
    run default
    run skinny COOPGEMM_SKINNY_ROWS=64
fi
for tile in ${TILES:-32x128x64x8}; do
    for split in ${SPLITS:-2 4 8}; do
        run cm2-$tile-s$split COOPGEMM_SKINNY_ROWS=0 COOPGEMM_COOPMAT2_TILE=$tile COOPGEMM_SPLIT_K=$split
    done
done

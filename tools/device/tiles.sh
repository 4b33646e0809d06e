#!/usr/bin/env bash
# H100: the same bench cases once per forced coopmat2 tile, then once with the heuristic's
# choice, for tile sweeps:
#   bash tools/device/tiles.sh NAME "256x256x32x8 128x256x64x16" --shapes ... --dtypes ... [bench args]
# Writes $OUT/bench-NAME-<tile>.json and $OUT/bench-NAME-heuristic.json (--no-tune).
set -u
source "$(dirname "$0")/env.sh"
name=$1 tiles=$2; shift 2
export COOPGEMM_CACHE_DIR=/tmp/cgcache-tiles
for tile in $tiles heuristic; do
  echo "== $name: $tile"
  if [ "$tile" = heuristic ]; then unset COOPGEMM_COOPMAT2_TILE; else export COOPGEMM_COOPMAT2_TILE=$tile; fi
  timeout 200 $B/bench --no-tune --backends coopmat --json $OUT/bench-$name-$tile.json "$@" 2>&1 \
    | grep -E "^coopmat|rror" | cut -c1-200
done

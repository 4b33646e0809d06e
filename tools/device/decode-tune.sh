#!/usr/bin/env bash
# H100: what tuning picks among the skinny kernel's configurations for the decode shapes
# (bench without --no-tune: every candidate of each shape class measured), to check the
# heuristic's first choice. Writes decode-tuned.json to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgtune
timeout "${1:-200}" $B/bench --quiet --json $OUT/decode-tuned.json --backends coopmat --b-layouts row,column \
  --shapes ${SHAPES:-1x4096x14336,16x4096x14336,1x14336x4096,16x14336x4096,1x4096x4096,16x4096x4096} --dtypes f16 2>&1 \
  | grep -E "^coopmat|rror" | cut -c1-200

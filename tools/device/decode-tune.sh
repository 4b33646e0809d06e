#!/usr/bin/env bash
# H100: what tuning picks among the skinny kernel's configurations for the decode shapes
# (bench without --no-tune: every candidate of each shape class measured), to check the
# heuristic's first choice. SHAPES, DTYPES (default f16), LAYOUTS (default row,column) and
# NAME (default tuned) choose the cases; COOPGEMM_SPLIT_K forces a split, whose partial
# GEMMs are then tuned. Writes decode-$NAME.json and, with every candidate's time
# (RUST_LOG=coopgemm=info), decode-$NAME.log to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgtune-${NAME:-tuned} RUST_LOG=${RUST_LOG:-coopgemm=info}
timeout "${1:-200}" $B/bench --quiet --json $OUT/decode-${NAME:-tuned}.json --backends coopmat --b-layouts ${LAYOUTS:-row,column} \
  --shapes ${SHAPES:-1x4096x14336,16x4096x14336,1x14336x4096,16x14336x4096,1x4096x4096,16x4096x4096} --dtypes ${DTYPES:-f16} 2>&1 \
  | tee $OUT/decode-${NAME:-tuned}.log | grep -E "^coopmat|rror" | cut -c1-200

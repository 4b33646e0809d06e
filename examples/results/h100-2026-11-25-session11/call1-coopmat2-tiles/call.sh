#!/usr/bin/env bash
# session 11 call 1: coopmat2 tiles with more accumulator rows/columns, BK 48; register stats
set -u
source tools/device/env.sh
export RUST_LOG=coopgemm=info COOPGEMM_PIPELINE_STATS=1
S=4096x4096x4096,8192x8192x8192
for t in 160x256x32x16 192x256x32x16 128x320x32x16 128x384x32x16 192x192x32x16 256x160x32x16; do
  echo "== f16 $t"; COOPGEMM_COOPMAT2_TILE=$t timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16 --shapes $S --json $OUT/f32s-$t.json 2>&1 | grep -E "^coopmat|rror|pipeline" | cut -c1-220
done
for t in 256x256x48x8 256x320x32x8 320x256x32x8 256x384x32x8 288x256x32x8; do
  echo "== f16acc16 $t"; COOPGEMM_COOPMAT2_TILE=$t timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16acc16 --shapes $S --json $OUT/f16s-$t.json 2>&1 | grep -E "^coopmat|rror|pipeline" | cut -c1-220
done
echo "== heuristic"; timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16,f16acc16 --shapes $S --json $OUT/heuristic.json 2>&1 | grep -E "^coopmat|rror|pipeline" | cut -c1-220
timeout 150 python3 .device/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|bf16" $OUT/cublas.txt | head
cd $OUT && tar czf s11c1.tgz *.json cublas.txt && rm -f *.json

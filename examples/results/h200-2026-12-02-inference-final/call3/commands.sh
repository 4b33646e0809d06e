#!/usr/bin/env bash
# Call 3: 64 rows at 4096x4096 (0.8x cuBLAS with the planned 64x128x64 tile split in 4):
# coopmat2 tiles, unrolls and splits forced, and the KHR kernel, GPU timestamps, f16 in,
# f32 sums, B column- and row-major; cuBLAS (skinny.py) in the same call.
set -u
source tools/device/env.sh
R=$OUT/r; mkdir -p $R
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn
S=64x4096x4096,64x14336x4096
b() { n=$1; shift; echo "-- $n"; env "$@" timeout 60 $B/bench --no-tune -q --backends coopmat --b-layouts column,row --shapes $S --dtypes f16 --json $R/$n.json 2>&1 | grep -E "^coopmat|rror" | cut -c1-140; }
b planned COOPGEMM_NONE=1
for t in 64x128x64x8 64x128x64x16 64x64x64x8 64x64x64x16 32x64x64x8 64x256x32x8; do
  for s in 0 2 4 8; do b t$t-s$s COOPGEMM_COOPMAT2_TILE=$t COOPGEMM_SPLIT_K=$s; done
done
b khr COOPGEMM_COOPMAT2=0
b khr-s4 COOPGEMM_COOPMAT2=0 COOPGEMM_SPLIT_K=4
echo "== skinny.py"; timeout 120 python3 .device/anchors/skinny.py > $R/skinny.txt 2>&1; grep -E "64x" $R/skinny.txt
( cd $OUT && tar czf call3.tgz r && rm -rf r )

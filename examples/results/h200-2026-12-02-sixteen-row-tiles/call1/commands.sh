#!/usr/bin/env bash
# Experiment: f16 / i8 decode at 16 rows on coopmat2 tiles of 16 rows, and the swapped
# product (C^T = W x A^T: the weights as the A operand, 16 columns).
set -u
source tools/device/env.sh  # from the repository root; staged with ../shared/device/prepare.sh --example bench
export COOPGEMM_CACHE_DIR=/tmp/cgcache
mkdir -p $OUT/runs
n=0
run() { # name, env..., -- bench args
  local name=$1; shift; n=$((n+1))
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "-- $name ${envs[*]}"
  env "${envs[@]}" timeout 60 $B/bench --no-tune --quiet --backends coopmat --json $OUT/runs/$n-$name.json "$@" 2>&1 | grep -E "^coopmat|rror" | cut -c1-220
}
S16=16x4096x14336,16x14336x4096
SW=4096x16x14336,14336x16x4096
run base X=1 -- --shapes $S16 --dtypes f16 --b-layouts column,row
run base-i8 X=1 -- --shapes $S16 --dtypes i8 --b-layouts column,row
for t in 16x64x64x8x64 16x128x64x8x64 16x64x64x8x32 16x32x64x8x32 16x64x128x8x64; do
  for s in 4 8 16; do
    run t16 COOPGEMM_COOPMAT2_TILE=$t COOPGEMM_SPLIT_K=$s -- --shapes $S16 --dtypes f16 --b-layouts column,row
  done
done
run swbase X=1 -- --shapes $SW --dtypes f16 --b-layouts column
for t in 128x16x64x8x128 64x16x64x8x64 64x16x128x8x64 128x16x128x8x128 256x32x64x8x256 32x16x64x8x32; do
  for s in 2 4 8 16; do
    run sw COOPGEMM_COOPMAT2_TILE=$t COOPGEMM_SPLIT_K=$s -- --shapes $SW --dtypes f16 --b-layouts column
  done
done
for t in 128x16x128x8x128 64x16x128x8x64 128x16x256x8x128; do
  for s in 2 4 8; do
    run sw-i8 COOPGEMM_COOPMAT2_TILE=$t COOPGEMM_SPLIT_K=$s -- --shapes $SW --dtypes i8 --b-layouts column
  done
done
echo "== cuBLAS"
timeout 150 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1; grep -E "^ *(16|1) " $OUT/skinny.txt | head; head -40 $OUT/skinny.txt
python3 - $OUT/runs $OUT/exp16.json <<'PY'
import json, os, sys
recs = []
for name in sorted(os.listdir(sys.argv[1]), key=lambda s: int(s.split('-')[0])):
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["run"] = name[:-5]; recs.append(r)
json.dump(recs, open(sys.argv[2], "w"), indent=1)
for r in recs:
    print(f'{r["run"]:>12} {r["m"]}x{r["n"]}x{r["k"]} {r.get("dtype", r.get("types",""))} {r["b_layout"]:6} {r["median_ms"]*1000:8.1f} us  {r["config"]}')
PY
rm -rf $OUT/runs

#!/usr/bin/env bash
# Experiment 2: 16-row coopmat2 tiles (64 invocations) across row counts, splits, i8, bf16.
set -u
source tools/device/env.sh  # from the repository root; staged with ../shared/device/prepare.sh --example bench
export COOPGEMM_CACHE_DIR=/tmp/cgcache
mkdir -p $OUT/runs
n=0
run() {
  local name=$1; shift; n=$((n+1))
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  echo "-- $name ${envs[*]}"
  env "${envs[@]}" timeout 90 $B/bench --no-tune --quiet --backends coopmat --b-layouts column,row --json $OUT/runs/$n-$name.json "$@" 2>&1 | grep -E "rror" | cut -c1-220
}
F=4x4096x14336,8x4096x14336,12x4096x14336,16x4096x14336,8x14336x4096,12x14336x4096,16x14336x4096,16x4096x4096
I=8x4096x14336,16x4096x14336,8x14336x4096,16x14336x4096
run base X=1 -- --shapes $F --dtypes f16
for s in 2 4 8; do run t16 COOPGEMM_COOPMAT2_TILE=16x64x64x8x64 COOPGEMM_SPLIT_K=$s -- --shapes $F --dtypes f16; done
run t16k32 COOPGEMM_COOPMAT2_TILE=16x64x32x8x64 COOPGEMM_SPLIT_K=8 -- --shapes $F --dtypes f16
run base-i8 X=1 -- --shapes $I --dtypes i8
for t in 16x64x128x8x64 16x128x128x8x64; do for s in 2 4 8; do
  run t16-i8 COOPGEMM_COOPMAT2_TILE=$t COOPGEMM_SPLIT_K=$s -- --shapes $I --dtypes i8; done; done
run base-bf16 X=1 -- --shapes 16x4096x14336,16x14336x4096 --dtypes bf16
run t16-bf16 COOPGEMM_COOPMAT2_TILE=16x64x64x8x64 COOPGEMM_SPLIT_K=8 -- --shapes 16x4096x14336 --dtypes bf16
run t16-bf16 COOPGEMM_COOPMAT2_TILE=16x64x64x8x64 COOPGEMM_SPLIT_K=2 -- --shapes 16x14336x4096 --dtypes bf16
python3 - $OUT/runs $OUT/exp16b.json <<'PY'
import json, os, sys, collections
recs = []
for name in sorted(os.listdir(sys.argv[1]), key=lambda s: int(s.split('-')[0])):
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["run"] = name[:-5]; recs.append(r)
json.dump(recs, open(sys.argv[2], "w"), indent=1)
by = collections.defaultdict(list)
for r in recs:
    by[(r["dtype"], r["m"], r["n"], r["k"], r["b_layout"])].append(r)
for key in sorted(by):
    print(*key)
    for r in sorted(by[key], key=lambda r: r["median_ms"]):
        print(f'   {r["median_ms"]*1000:7.1f} us {r["config"]:50} {r["run"]} {"" if r["verified"] else "UNVERIFIED"}')
PY
rm -rf $OUT/runs

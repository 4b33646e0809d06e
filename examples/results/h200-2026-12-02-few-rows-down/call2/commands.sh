#!/usr/bin/env bash
# Call 2: the planned build (f16/bf16 of 5-11 rows on the 16-row tile, i8 of 16 rows on
# 16x64x128) against main's bench (4c31893) in the same call; the i8 16-row tile's K unroll
# and split by force; then the suites the plans touch, on the planned build.
set -u
source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cb
mkdir -p $OUT/runs
n=0
run() { # name binary env... -- bench args
  local name=$1 bin=$2; shift 2; n=$((n+1)); local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 100 $bin --no-tune --quiet --backends coopmat --json $OUT/runs/$(printf %02d $n)-$name.json "$@" 2>&1 | grep -E "rror" | cut -c1-200; }
F=5x4096x14336,8x4096x14336,9x4096x14336,5x14336x4096,8x14336x4096,9x14336x4096,5x4096x4096,8x4096x4096,9x4096x4096
I=16x4096x14336,16x14336x4096,16x4096x4096,16x8192x4096,16x8192x8192
for pass in 1 2; do
  run f16-old .device/old/bench X=1 -- --shapes $F --dtypes f16 --b-layouts column,row
  run f16-new $B/bench X=1 -- --shapes $F --dtypes f16 --b-layouts column,row
  run i8-old .device/old/bench X=1 -- --shapes $I --dtypes i8 --b-layouts column,row
  run i8-new $B/bench X=1 -- --shapes $I --dtypes i8 --b-layouts column,row
done
run bf16-old .device/old/bench X=1 -- --shapes 8x4096x14336,9x14336x4096 --dtypes bf16 --b-layouts column,row
run bf16-new $B/bench X=1 -- --shapes 8x4096x14336,9x14336x4096 --dtypes bf16 --b-layouts column,row
for u in 4 8 16; do
  T=COOPGEMM_COOPMAT2_TILE=16x64x128x${u}x64
  run i8-u$u-s8 $B/bench $T COOPGEMM_SPLIT_K=8 -- --shapes 16x4096x14336 --dtypes i8 --b-layouts column
  for s in 1 2 4; do
    run i8-u$u-s$s $B/bench $T COOPGEMM_SPLIT_K=$s -- --shapes 16x14336x4096,16x4096x4096,16x8192x4096 --dtypes i8 --b-layouts column
  done
done
python3 - $OUT/runs $OUT/call2.json <<'PY'
import json, os, sys, collections
recs = []
for name in sorted(os.listdir(sys.argv[1])):
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["run"] = name[:-5]; recs.append(r)
json.dump(recs, open(sys.argv[2], "w"), indent=1)
by = collections.defaultdict(list)
for r in recs:
    by[(r["dtype"], r["m"], r["n"], r["k"], r["b_layout"])].append(r)
for key in sorted(by):
    print(*key)
    for r in sorted(by[key], key=lambda r: r["median_ms"]):
        print(f'   {r["median_ms"]*1000:7.1f} us {r["config"]:46} {r["run"]} {"" if r["verified"] else "UNVERIFIED"}')
PY
rm -rf $OUT/runs
echo "== suites (planned build)"
export COOPGEMM_EXPECT_COOPMAT=1
lane() { local label=$1; shift; ( s=$(date +%s); env "$@" > $OUT/$label.log 2>&1; echo "$label exit $? $(( $(date +%s)-s )) s $(grep -E 'test result' $OUT/$label.log | tail -1)"; grep -E "cases of few|cases on|panicked|FAILED" $OUT/$label.log | head -12 ) & }
lane skinny COOPGEMM_CACHE_DIR=/tmp/t1 timeout 280 $B/skinny --test-threads=3
lane decode COOPGEMM_CACHE_DIR=/tmp/t2 timeout 200 $B/decode --test-threads=3
lane selection COOPGEMM_CACHE_DIR=/tmp/t3 timeout 200 $B/selection --test-threads=3
lane split_k COOPGEMM_CACHE_DIR=/tmp/t4 timeout 200 $B/split_k --test-threads=3
lane guard COOPGEMM_CACHE_DIR=/tmp/t5 timeout 250 $B/guard --test-threads=3
wait
( cd $OUT && tar czf logs.tgz *.log && rm *.log )

#!/usr/bin/env bash
# Call 2 (the build with K unroll 2 on the few-row tiles, FEW_ROWS_K_UNROLL):
#  A. first-use pipeline builds of the few-row plans (cold_start, no coopgemm cache, a fresh
#     NVIDIA shader cache per run), the new default against unroll 8 forced (the old default);
#  B. GPU time of each few-row tile per K unroll (1, 2, 4, 8 forced) and the plan, two passes;
#  C. the suites the plans touch: decode, split_k, selection.
set -u
source tools/device/env.sh
mkdir -p $OUT/cold $OUT/unroll $OUT/tests
cold() { # name tile args...
  local name=$1 tile=$2; shift 2
  export __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcache-$name; rm -rf $__GL_SHADER_DISK_CACHE_PATH; mkdir -p $__GL_SHADER_DISK_CACHE_PATH
  if [ -n "$tile" ]; then export COOPGEMM_COOPMAT2_TILE=$tile; else unset COOPGEMM_COOPMAT2_TILE; fi
  timeout 120 $B/cold_start "$@" --backend coopmat --no-cache > $OUT/cold/$name.txt 2>&1
  echo "$name: $(grep -oE '"kernel":"[^"]*"|"pipeline_build_ms":[0-9.]*|"verified":[a-z]*' $OUT/cold/$name.txt | tr '\n' ' ')"
}
for s in "f16 16 4096 14336 16x64x64" "f16 16 14336 4096 16x64x64" "f16 32 4096 14336 32x64x64" "f16 64 4096 14336 64x128x64" \
         "i8 16 4096 14336 16x64x128" "i8 16 14336 4096 16x64x128" "i8 32 4096 14336 32x32x128"; do
  set -- $s
  cold $1-$2x$3x$4-plan "" $2 $3 $4 --types $1 --b-column-major
  cold $1-$2x$3x$4-u8 $5x8 $2 $3 $4 --types $1 --b-column-major
done
unset __GL_SHADER_DISK_CACHE_PATH COOPGEMM_COOPMAT2_TILE
export COOPGEMM_CACHE_DIR=/tmp/cb
bench() { # name tile dtype layouts shapes
  if [ -n "$2" ]; then export COOPGEMM_COOPMAT2_TILE=$2; else unset COOPGEMM_COOPMAT2_TILE; fi
  timeout 100 $B/bench --no-tune -q --backends coopmat --dtypes $3 --b-layouts $4 --shapes $5 --json $OUT/unroll/$1.json > /dev/null 2>$OUT/unroll/$1.err || echo "$1 failed"
}
F16=16x4096x14336,16x14336x4096,12x4096x14336,9x4096x4096
F32=32x4096x14336,24x14336x4096
F64=64x4096x14336,48x4096x4096
I32=32x4096x14336,24x4096x4096
for pass in 1 2; do
  for u in 1 2 4 8; do
    bench f16-16-u$u-p$pass 16x64x64x${u}x64 f16 column,row $F16
    bench f16-32-u$u-p$pass 32x64x64x${u} f16 column,row $F32
    bench f16-64-u$u-p$pass 64x128x64x${u} f16 column $F64
    bench i8-32-u$u-p$pass 32x32x128x${u} i8 column $I32
  done
  bench f16-plan-p$pass "" f16 column,row $F16,$F32,$F64
  bench i8-plan-p$pass "" i8 column 16x4096x14336,16x14336x4096,16x8192x4096,16x8192x8192,$I32
done
unset COOPGEMM_COOPMAT2_TILE
python3 - $OUT/unroll > $OUT/unroll-table.txt <<'PY'
import glob, json, os, sys, collections
by = collections.defaultdict(list)
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    run = os.path.basename(path)[:-5]
    for r in json.load(open(path)):
        by[(r["dtype"], r["m"], r["n"], r["k"], r["b_layout"])].append((run, r["config"], r["median_ms"] * 1e3, r["verified"]))
for key, runs in sorted(by.items()):
    print("==", *key)
    for run, config, us, ok in sorted(runs, key=lambda x: x[2]):
        print(f"  {run:16} {us:7.1f} us  {config}{'' if ok else '  NOT VERIFIED'}")
PY
export COOPGEMM_EXPECT_COOPMAT=1
for t in decode split_k selection; do
  COOPGEMM_CACHE_DIR=/tmp/ct timeout 200 $B/$t --test-threads=8 > $OUT/tests/$t.log 2>&1; echo "$t exit $? $(grep -E 'test result' $OUT/tests/$t.log | tail -1)"
done
( cd $OUT && tar czf call2.tgz cold unroll tests unroll-table.txt && rm -rf cold unroll tests )
cat $OUT/unroll-table.txt

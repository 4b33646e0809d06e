#!/usr/bin/env bash
# Call 3 (the final build: K unroll 4 on the 16-row few-row tiles, SIXTEEN_ROW_K_UNROLL):
# first-use builds of the 16-row plans, their GPU time, then the suites that run them
# (skinny: the guarded few-row cases; guard; decode, split_k, selection).
set -u
source tools/device/env.sh
mkdir -p $OUT/cold $OUT/runs $OUT/tests
cold() { # name args...
  local name=$1; shift
  export __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcache-$name; rm -rf $__GL_SHADER_DISK_CACHE_PATH; mkdir -p $__GL_SHADER_DISK_CACHE_PATH
  timeout 120 $B/cold_start "$@" --backend coopmat --no-cache > $OUT/cold/$name.txt 2>&1
  echo "$name: $(grep -oE '"kernel":"[^"]*"|"pipeline_build_ms":[0-9.]*|"verified":[a-z]*' $OUT/cold/$name.txt | tr '\n' ' ')"
}
cold f16-16x4096x14336 16 4096 14336 --types f16 --b-column-major
cold f16-12x4096x14336 12 4096 14336 --types f16
cold i8-16x4096x14336 16 4096 14336 --types i8 --b-column-major
cold i8-16x14336x4096 16 14336 4096 --types i8 --b-column-major
unset __GL_SHADER_DISK_CACHE_PATH
export COOPGEMM_EXPECT_COOPMAT=1
( COOPGEMM_CACHE_DIR=/tmp/t1 timeout 330 $B/skinny --test-threads=8 > $OUT/tests/skinny.log 2>&1; echo "skinny exit $? $(grep -E 'test result' $OUT/tests/skinny.log | tail -1)" ) &
( COOPGEMM_CACHE_DIR=/tmp/t2 timeout 300 $B/guard --test-threads=5 > $OUT/tests/guard.log 2>&1; echo "guard exit $? $(grep -E 'test result' $OUT/tests/guard.log | tail -1)"
  for t in decode split_k selection; do
    COOPGEMM_CACHE_DIR=/tmp/t2 timeout 200 $B/$t --test-threads=8 > $OUT/tests/$t.log 2>&1; echo "$t exit $? $(grep -E 'test result' $OUT/tests/$t.log | tail -1)"
  done ) &
wait
export COOPGEMM_CACHE_DIR=/tmp/cb
timeout 100 $B/bench --no-tune -q --backends coopmat --dtypes f16,bf16 --b-layouts column,row \
  --shapes 9x4096x4096,12x4096x14336,16x4096x14336,16x14336x4096 --json $OUT/runs/f16.json > /dev/null 2>&1 || echo "f16 bench failed"
timeout 100 $B/bench --no-tune -q --backends coopmat --dtypes i8 --b-layouts column \
  --shapes 16x4096x14336,16x14336x4096,16x8192x4096,16x8192x8192,16x4096x4096 --json $OUT/runs/i8.json > /dev/null 2>&1 || echo "i8 bench failed"
python3 - $OUT/runs <<'PY'
import glob, json, sys
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    for r in json.load(open(path)):
        print(f"{r['dtype']:5} {r['m']}x{r['n']}x{r['k']} {r['b_layout']:6} {r['median_ms']*1e3:7.1f} us  {r['config']}{'' if r['verified'] else '  NOT VERIFIED'}")
PY
( cd $OUT && tar czf call3.tgz cold runs tests && rm -rf cold runs tests )

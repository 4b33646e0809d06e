#!/usr/bin/env bash
# Call 3: the final build's plans for i8 of 16 rows (B column-major), then the few-row and
# decode suites on it (the suites whose plans changed).
set -u
source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cb
timeout 60 $B/bench --no-tune --quiet --backends coopmat --dtypes i8 --b-layouts column --shapes 16x4096x4096,16x4096x14336,16x14336x4096 --json $OUT/call3-i8.json 2>&1 | grep -E "rror"
python3 -c 'import json,sys; [print(r["m"],r["n"],r["k"],r["b_layout"],round(r["median_ms"]*1000,1),r["config"],r["verified"]) for r in json.load(open(sys.argv[1]))]' $OUT/call3-i8.json
export COOPGEMM_EXPECT_COOPMAT=1
lane() { local label=$1; shift; ( s=$(date +%s); env "$@" > $OUT/$label.log 2>&1; echo "$label exit $? $(( $(date +%s)-s )) s $(grep -E 'test result' $OUT/$label.log | tail -1)"; grep -E "cases of few|panicked|FAILED" $OUT/$label.log | head -12 ) & }
lane skinny COOPGEMM_CACHE_DIR=/tmp/t1 timeout 340 $B/skinny --test-threads=6 --nocapture
lane decode COOPGEMM_CACHE_DIR=/tmp/t2 timeout 200 $B/decode --test-threads=3
wait
( cd $OUT && gzip *.log )

#!/usr/bin/env bash
# Call 4: the final build: i8 of 16 rows (B column-major) planned, and the decode suite.
set -u
source tools/device/env.sh
export COOPGEMM_CACHE_DIR=/tmp/cb COOPGEMM_EXPECT_COOPMAT=1
timeout 60 $B/bench --no-tune --quiet --backends coopmat --dtypes i8 --b-layouts column --shapes 16x4096x4096,16x4096x14336,16x14336x4096 --json $OUT/call4-i8.json 2>&1 | grep -E "rror"
python3 -c 'import json,sys; [print(r["m"],r["n"],r["k"],r["b_layout"],round(r["median_ms"]*1000,1),r["config"],r["verified"]) for r in json.load(open(sys.argv[1]))]' $OUT/call4-i8.json

( timeout 60 $B/decode --test-threads=3 > $OUT/decode.log 2>&1; echo "decode exit $? $(grep 'test result' $OUT/decode.log)"; grep -A3 panicked $OUT/decode.log | head -5 )

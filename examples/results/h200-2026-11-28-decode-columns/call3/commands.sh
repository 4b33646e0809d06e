source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
b() { n=$1; envs=$2; shift 2; echo "-- $n $envs"; timeout 150 env $envs $B/bench --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "rror" | cut -c1-150; }
echo "== tests"; timeout 120 $B/decode 2>&1 | grep -E "test result|panicked"
C=""; for m in 5 7 13 15; do for nk in 4096x14336 14336x4096 8192x2048 2048x8192; do C="$C,${m}x$nk"; done; done; C=${C#,}
R=""; for m in 4 5 6 7; do for nk in 4096x14336 14336x4096 4096x4096 8192x2048; do R="$R,${m}x$nk"; done; done; R=${R#,}
for v in "new|" "off|COOPGEMM_DECODE_ROWS=0" "all|COOPGEMM_DECODE_ROWS=16"; do
  b col-${v%%|*} "${v#*|}" --backends coopmat --b-layouts column --shapes $C --dtypes i8
  b row-${v%%|*} "${v#*|}" --backends coopmat --b-layouts row --shapes $R --dtypes i8
done
b col-new-r2 "" --backends coopmat --b-layouts column --shapes $C --dtypes i8
b col-off-r2 "COOPGEMM_DECODE_ROWS=0" --backends coopmat --b-layouts column --shapes $C --dtypes i8
(cd $OUT && tar czf bench.tgz *.json && rm *.json)

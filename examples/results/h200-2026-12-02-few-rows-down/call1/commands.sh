#!/usr/bin/env bash
# tests/diag_tile.rs was this folder's diag_tile.rs.txt (staged with --test diag_tile; not kept in the suites,
# and kept as .txt here so that the package, which ships examples/**/*.rs, leaves it out).
# Call 1: the full few-row suite on main (4c31893); the i8 stall of the 16-row tile case by
# case (tests/diag_tile.rs) on forced tiles; f16 GEMMs of 5 to 11 rows on the 16-row tile.
set -u
source tools/device/env.sh
export COOPGEMM_EXPECT_COOPMAT=1
echo "== skinny suite (main)"
s=$(date +%s); COOPGEMM_CACHE_DIR=/tmp/c1 timeout 200 $B/skinny --test-threads=2 > $OUT/skinny-main.log 2>&1; echo "rc=$? $(( $(date +%s)-s )) s"; grep -E "test result|cases of few|FAILED|panicked" $OUT/skinny-main.log | head -30
echo "== i8 diag"
for t in 16x64x128x1x64 16x64x128x8x64 16x64x64x8x64; do
  s=$(date +%s); COOPGEMM_COOPMAT2_TILE=$t DIAG_ROWS=16 COOPGEMM_CACHE_DIR=/tmp/d-$t timeout 50 $B/diag_tile --nocapture > $OUT/diag-$t.log 2>&1; echo "$t rc=$? $(( $(date +%s)-s )) s"
  grep -E "pass|plan" $OUT/diag-$t.log | cut -c1-200 | head -24; tail -2 $OUT/diag-$t.log | cut -c1-300
done
echo "== f16 5-11 rows"
mkdir -p $OUT/runs
run() { local name=$1; shift; local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" timeout 100 $B/bench --no-tune --quiet --backends coopmat --b-layouts column,row --dtypes f16 --json $OUT/runs/$name.json "$@" 2>&1 | grep -E "rror" | cut -c1-200; }
rows="5 6 7 8 9 10 11"
shapes() { local s=""; for m in $rows; do s="$s,${m}x$1"; done; echo ${s#,}; }
export COOPGEMM_CACHE_DIR=/tmp/cb
run base X=1 -- --shapes $(shapes 4096x14336),$(shapes 14336x4096),$(shapes 4096x4096)
run t16-a COOPGEMM_COOPMAT2_TILE=16x64x64x8x64 COOPGEMM_SPLIT_K=8 -- --shapes $(shapes 4096x14336)
run t16-b COOPGEMM_COOPMAT2_TILE=16x64x64x8x64 COOPGEMM_SPLIT_K=2 -- --shapes $(shapes 14336x4096)
run t16-c COOPGEMM_COOPMAT2_TILE=16x64x64x8x64 COOPGEMM_SPLIT_K=4 -- --shapes $(shapes 4096x4096)
python3 - $OUT/runs $OUT/rows5to11.json <<'PY'
import json, os, sys, collections
recs = []
for name in sorted(os.listdir(sys.argv[1])):
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["run"] = name[:-5]; recs.append(r)
json.dump(recs, open(sys.argv[2], "w"), indent=1)
by = collections.defaultdict(dict)
for r in recs:
    by[(r["n"], r["k"], r["b_layout"], r["m"])]["base" if r["run"] == "base" else "t16"] = r
for key in sorted(by):
    d = by[key]
    b, t = d.get("base"), d.get("t16")
    f = lambda r: f'{r["median_ms"]*1000:6.1f} {r["config"]:42} {"" if r["verified"] else "UNVERIFIED"}' if r else "-"
    print(*key, "|", f(b), "|", f(t))
PY
rm -rf $OUT/runs

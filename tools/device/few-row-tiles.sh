#!/usr/bin/env bash
# H100: the planner's few-row tiles against an earlier build's, in one call. OLD names the
# earlier bench binary (default .device/old/bench, copied there by hand before staging);
# both run the same GEMMs of 12 to 64 rows (f16, B column- and row-major, GPU timestamps,
# --no-tune) ROUNDS times, alternating, then cuBLAS (.device/anchors/skinny.py). Stage with
#   ../shared/device/prepare.sh --example bench
# Writes few-row-tiles.json (every record, with "build": "old"/"new" and "round") and
# skinny.txt to $OUT and prints a table of medians over the rounds.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
: "${OLD:=.device/old/bench}"
: "${ROUNDS:=2}"
: "${SHAPES:=12x4096x14336,16x4096x14336,16x14336x4096,16x4096x4096,16x8192x4096,24x4096x14336,32x4096x14336,32x4096x4096,32x14336x4096,32x8192x4096,64x4096x14336}"
mkdir -p $OUT/runs
for round in $(seq 1 $ROUNDS); do
    for build in old new; do
        binary=$B/bench; [ $build = old ] && binary=$OLD
        timeout 200 $binary --no-tune --quiet --json $OUT/runs/$build-$round.json --backends coopmat \
            --b-layouts column,row --shapes $SHAPES --dtypes f16 > /dev/null 2>&1 || echo "$build round $round failed"
    done
done
timeout 150 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1
python3 - "$OUT/runs" "$OUT/few-row-tiles.json" <<'PY'
import collections, json, os, statistics, sys
records = []
for name in sorted(os.listdir(sys.argv[1])):
    build, round_ = name[:-5].split("-")
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["build"], r["round"] = build, int(round_)
        records.append(r)
json.dump(records, open(sys.argv[2], "w"), indent=1)
times, configs = collections.defaultdict(list), {}
for r in records:
    key = (r["m"], r["n"], r["k"], r["b_layout"], r["build"])
    times[key].append(r["median_ms"] * 1000)
    configs[key] = r["config"]
print(f"{'shape':>16} {'B':6} {'old us':>8} {'new us':>8} {'new/old':>8}  new config")
for (m, n, k, layout, build) in sorted(times):
    if build != "new":
        continue
    old = statistics.median(times[(m, n, k, layout, "old")])
    new = statistics.median(times[(m, n, k, layout, "new")])
    print(f"{m}x{n}x{k:>6} {layout:6} {old:8.1f} {new:8.1f} {new / old:8.3f}  {configs[(m, n, k, layout, 'new')]}")
PY
rm -rf $OUT/runs

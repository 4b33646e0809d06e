#!/usr/bin/env bash
# H100: GEMMs of 12 to 64 rows per input type. For DTYPES (default f16,bf16) the default
# plan ("plan") against each of BASELINES (space-separated NAME:VAR=VALUE[,VAR=VALUE...];
# default "skinny32:COOPGEMM_SKINNY_ROWS=32", the plan without few-row tiles: the skinny
# kernel up to 32 rows and the large tiles above), ROUNDS times alternating; then 8-bit
# weights on the coopmat2 kernel's forced I8_TILES (unsplit; empty: none) against their
# default plan; then cuBLAS (.device/anchors/skinny.py, f16). B column- and row-major, GPU
# timestamps, --no-tune.
# Stage with
#   ../shared/device/prepare.sh --example bench
# Writes few-rows-types.json (every record, with "run" and "round") and skinny.txt to $OUT
# and prints a table of medians over the rounds, with B's bytes per second.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
: "${ROUNDS:=2}"
: "${DTYPES:=f16,bf16}"
: "${SHAPES:=12x4096x14336,16x4096x4096,16x4096x14336,16x14336x4096,32x4096x14336,48x4096x14336,64x4096x4096}"
: "${I8_SHAPES:=16x4096x4096,16x4096x14336,16x14336x4096,32x4096x14336}"
: "${BASELINES:=skinny32:COOPGEMM_SKINNY_ROWS=32}"
I8_TILES=${I8_TILES-32x64x64x8 32x32x128x8 32x64x128x8}
mkdir -p $OUT/runs
bench() {
    local name=$1 dtypes=$2 shapes=$3; shift 3
    env "$@" timeout 200 $B/bench --no-tune --quiet --json $OUT/runs/$name.json --backends coopmat \
        --b-layouts column,row --shapes $shapes --dtypes $dtypes > /dev/null 2>&1 || echo "$name failed"
}
for round in $(seq 1 $ROUNDS); do
    bench plan-$round "$DTYPES" "$SHAPES"
    for baseline in $BASELINES; do
        vars=${baseline#*:}
        bench "${baseline%%:*}-$round" "$DTYPES" "$SHAPES" ${vars//,/ }
    done
done
[ -z "$I8_TILES" ] || bench plan-i8 i8 "$I8_SHAPES"
for tile in $I8_TILES; do
    bench "cm2_$tile-i8" i8 "$I8_SHAPES" COOPGEMM_SKINNY_ROWS=0 COOPGEMM_COOPMAT2_TILE=$tile
done
timeout 150 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1
python3 - "$OUT/runs" "$OUT/few-rows-types.json" <<'PY'
import collections, json, os, statistics, sys
records = []
for name in sorted(os.listdir(sys.argv[1])):
    run, round_ = name[:-5].rsplit("-", 1)
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["run"], r["round"] = run, round_
        records.append(r)
json.dump(records, open(sys.argv[2], "w"), indent=1)
size = {"f16": 2, "bf16": 2, "i8": 1}
times, configs = collections.defaultdict(list), {}
for r in records:
    key = (r["dtype"], r["m"], r["n"], r["k"], r["b_layout"], r["run"])
    times[key].append(r["median_ms"] * 1000)
    configs[key] = r["config"]
print(f"{'dtype':5} {'shape':>16} {'B':6} {'run':22} {'us':>7} {'B TB/s':>7}  config")
for key in sorted(times):
    dtype, m, n, k, layout, run = key
    us = statistics.median(times[key])
    print(f"{dtype:5} {f'{m}x{n}x{k}':>16} {layout:6} {run:22} {us:7.1f} "
          f"{n * k * size.get(dtype, 4) / us / 1e6:7.2f}  {configs[key]}")
PY

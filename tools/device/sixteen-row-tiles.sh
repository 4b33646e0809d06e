#!/usr/bin/env bash
# H200/H100: the coopmat2 kernel's 16-row few-row tiles (f16, bf16, i8) against an earlier
# build's plans in one call, cuBLAS (.device/anchors/skinny.py) in the same call, then the
# few-row test suites on the committed build (plain, and skinny/decode under sid's
# validation layer with synchronization validation, staged by fetch-validation-layer.sh).
# OLD names the earlier bench binary (default .device/old/bench, copied there by hand before
# staging). Stage with
#   ../shared/device/prepare.sh --test skinny --test decode --test selection --test split_k --test guard --test validation --example bench
# Writes sixteen-row-tiles.json (every record, with "build" and "round"), skinny.txt and
# the test logs (logs/) to $OUT, and prints a table of medians.
set -u
source "$(dirname "$0")/env.sh"
: "${OLD:=.device/old/bench}"
F16=12x4096x14336,16x4096x14336,12x14336x4096,16x14336x4096,16x4096x4096,16x8192x4096,24x4096x14336,32x4096x14336,64x4096x4096
BF16=16x4096x14336,16x14336x4096
I8=16x4096x14336,16x14336x4096,16x4096x4096,17x4096x14336
mkdir -p $OUT/runs $OUT/logs
bench() { # build round name args...
    local build=$1 round=$2 name=$3; shift 3
    local binary=$B/bench; [ $build = old ] && binary=$OLD
    COOPGEMM_CACHE_DIR=/tmp/cg-$build timeout 150 $binary --no-tune --quiet --backends coopmat \
        --json $OUT/runs/$build-$round-$name.json "$@" > /dev/null 2>> $OUT/logs/bench.err \
        || echo "$build $round $name failed"
}
for round in 1 2; do
    for build in old new; do
        bench $build $round f16 --b-layouts column,row --shapes $F16 --dtypes f16
    done
done
for build in old new; do
    bench $build 1 bf16 --b-layouts column,row --shapes $BF16 --dtypes bf16
    bench $build 1 i8 --b-layouts column,row --shapes $I8 --dtypes i8
    bench $build 1 square --b-layouts column --shapes 4096x4096x4096 --dtypes f16
done
COOPGEMM_SPLIT_K=2 bench new 1 i8-split2 --b-layouts column --shapes 16x14336x4096 --dtypes i8
timeout 120 python3 .device/anchors/skinny.py > $OUT/skinny.txt 2>&1
python3 - "$OUT/runs" "$OUT/sixteen-row-tiles.json" <<'PY'
import collections, json, os, statistics, sys
records = []
for name in sorted(os.listdir(sys.argv[1])):
    build, round_, case = name[:-5].split("-", 2)
    for r in json.load(open(os.path.join(sys.argv[1], name))):
        r["build"], r["round"], r["case"] = build, int(round_), case
        records.append(r)
json.dump(records, open(sys.argv[2], "w"), indent=1)
times, configs = collections.defaultdict(list), {}
for r in records:
    key = (r["dtype"], r["m"], r["n"], r["k"], r["b_layout"], r["case"])
    times[key + (r["build"],)].append(r["median_ms"] * 1000)
    configs[key + (r["build"],)] = (r["config"], r["verified"])
print(f"{'types':5} {'shape':>14} {'B':6} {'old us':>7} {'new us':>7} {'new/old':>7}  old config -> new config")
for key in sorted({k[:-1] for k in times}):
    old = times.get(key + ("old",)); new = times.get(key + ("new",))
    o = statistics.median(old) if old else float("nan"); n = statistics.median(new) if new else float("nan")
    oc = configs.get(key + ("old",), ("-", True)); nc = configs.get(key + ("new",), ("-", True))
    flag = "" if oc[1] and nc[1] else "  UNVERIFIED"
    print(f"{key[0]:5} {key[1]}x{key[2]}x{key[3]:<6} {key[4]:6} {o:7.1f} {n:7.1f} {n / o:7.3f}  {oc[0]} -> {nc[0]} [{key[5]}]{flag}")
PY
rm -rf $OUT/runs
echo "== tests"
bash .ci/validation-layer unpack .device/vvl /tmp/vvl > /dev/null && source /tmp/vvl/layer.env
export COOPGEMM_EXPECT_COOPMAT=1
lane() { # label env... binary args
    local label=$1; shift
    env "$@" > $OUT/logs/$label.log 2>&1
    echo "$label exit $? $(grep -E 'test result' $OUT/logs/$label.log | tail -1)"
}
( lane guard COOPGEMM_CACHE_DIR=/tmp/t1 timeout 240 $B/guard --test-threads=5 ) &
( for t in skinny decode selection split_k; do lane $t COOPGEMM_CACHE_DIR=/tmp/t2 timeout 150 $B/$t --test-threads=6; done ) &
( export WGPU_VALIDATION=1 WGPU_DEBUG=1 COOPGEMM_EXPECT_VALIDATION=1 COOPGEMM_AUTOTUNE=0 VK_LAYER_VALIDATE_SYNC=1
  for t in validation skinny decode; do lane vvl-$t VK_LAYER_MESSAGE_ID_FILTER=WARNING-vkGetDeviceProcAddr-device COOPGEMM_CACHE_DIR=/tmp/t3 timeout 200 $VVL_RUN $B/$t --test-threads=4; done ) &
wait

#!/usr/bin/env bash
# H100: the host time a caller waits per GEMM, Context::run against a GEMM prepared once
# (Context::prepare_gemm / run_prepared, one and eight per submission), on decode shapes and
# 4096^3 (or SHAPES; B column-major, or LAYOUTS: one layout per run), each also on GPU
# timestamps (what the kernels take). First the prepared-GEMM suite on real cooperative
# matrices (SUITE=0 skips it). Stage with
#   ../shared/device/prepare.sh --test prepared --test skinny --example bench
# Writes host-<mode>.json and prepared-tests.txt to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn
if [ "${SUITE:-1}" != 0 ]; then
    echo "== prepared GEMM suite"
    COOPGEMM_EXPECT_COOPMAT=1 timeout 120 $B/prepared --test-threads=1 > $OUT/prepared-tests.txt 2>&1
    grep -E "checked|test result|panicked" $OUT/prepared-tests.txt
fi
shapes=${SHAPES:-1x4096x14336,1x14336x4096,1x4096x4096,16x4096x4096,16x4096x14336,4096x4096x4096}
for mode in gpu wall prepared batch; do
    case $mode in
        gpu) flags= ;;
        wall) flags=--wall-clock ;;
        prepared) flags="--wall-clock --prepared" ;;
        batch) flags="--wall-clock --prepared 8" ;;
    esac
    echo "== $mode"
    timeout 200 $B/bench --shapes $shapes --dtypes f16,f16acc16 --backends coopmat --b-layouts ${LAYOUTS:-column} \
        --no-tune --runs 20 -q $flags --json $OUT/host-$mode.json 2>&1 | grep -vE "^\[|^wrote" | cut -c1-150
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
rows = {}
for mode in ("gpu", "wall", "prepared", "batch"):
    for r in json.load(open(f"{out}/host-{mode}.json")):
        rows.setdefault((r["dtype"], r["m"], r["n"], r["k"]), {})[mode] = r
print(f"{'dtype':9} {'shape':16} {'gpu us':>8} {'wall us':>8} {'prep us':>8} {'x8 us':>8} {'host us':>8} {'prep host':>9} {'x8 host':>8}")
for (dtype, m, n, k), modes in rows.items():
    us = lambda mode, key="median_ms": (modes.get(mode) or {}).get(key) or float("nan")
    print(f"{dtype:9} {m}x{n}x{k:<10} {us('gpu')*1e3:8.1f} {us('wall')*1e3:8.1f} {us('prepared')*1e3:8.1f}"
          f" {us('batch')*1e3:8.1f} {us('wall','host_submit_ms')*1e3:8.1f}"
          f" {us('prepared','host_submit_ms')*1e3:9.1f} {us('batch','host_submit_ms')*1e3:8.1f}")
PY

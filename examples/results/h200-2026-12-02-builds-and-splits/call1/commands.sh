#!/usr/bin/env bash
# Call 1 (binaries of main 0956bc3 plus cold_start's --b-column-major):
#  A. first-use pipeline builds of the 16-row few-row tiles per K unroll (cold_start, no
#     coopgemm cache, a fresh NVIDIA shader cache per run);
#  B. their GPU time per K unroll, two passes;
#  C. one row with B row-major (128 skinny blocks at N = 4096): skinny configurations
#     times splits along K (tools/device/skinny-sweep.sh).
set -u
source tools/device/env.sh
mkdir -p $OUT/cold $OUT/unroll
cold() { # name tile args...
  local name=$1 tile=$2; shift 2
  export __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcache-$name; rm -rf $__GL_SHADER_DISK_CACHE_PATH; mkdir -p $__GL_SHADER_DISK_CACHE_PATH
  if [ -n "$tile" ]; then export COOPGEMM_COOPMAT2_TILE=$tile; else unset COOPGEMM_COOPMAT2_TILE; fi
  timeout 120 $B/cold_start "$@" --backend coopmat --no-cache > $OUT/cold/$name.txt 2>&1
  grep -E "pipeline build|verified|MISMATCH|error" $OUT/cold/$name.txt | tr '\n' ' ' | sed "s/^/$name: /"; echo
}
for u in 1 2 4 8 16; do
  cold i8-4096x14336-u$u 16x64x128x${u}x64 16 4096 14336 --types i8 --b-column-major
  cold i8-14336x4096-u$u 16x64x128x${u}x64 16 14336 4096 --types i8 --b-column-major
done
for u in 2 4 8 16; do
  cold f16-4096x14336-u$u 16x64x64x${u}x64 16 4096 14336 --types f16 --b-column-major
done
cold i8-heuristic-4096x14336 "" 16 4096 14336 --types i8 --b-column-major
cold f16-heuristic-4096x14336 "" 16 4096 14336 --types f16 --b-column-major
cold f16-4096cube "" 4096 4096 4096 --types f16 --b-column-major
cold i8-4096cube "" 4096 4096 4096 --types i8 --b-column-major
unset __GL_SHADER_DISK_CACHE_PATH COOPGEMM_COOPMAT2_TILE
export COOPGEMM_CACHE_DIR=/tmp/cb
for pass in 1 2; do
  for u in 1 2 4 8 16; do
    COOPGEMM_COOPMAT2_TILE=16x64x128x${u}x64 timeout 100 $B/bench --no-tune -q --backends coopmat --dtypes i8 --b-layouts column \
      --shapes 16x4096x14336,16x14336x4096,16x8192x4096,16x8192x8192 --json $OUT/unroll/i8-u$u-p$pass.json > /dev/null 2>&1 || echo "i8 u$u failed"
  done
  for u in 2 4 8 16; do
    COOPGEMM_COOPMAT2_TILE=16x64x64x${u}x64 timeout 100 $B/bench --no-tune -q --backends coopmat --dtypes f16 --b-layouts column,row \
      --shapes 16x4096x14336,16x14336x4096,12x4096x14336 --json $OUT/unroll/f16-u$u-p$pass.json > /dev/null 2>&1 || echo "f16 u$u failed"
  done
done
python3 - $OUT/unroll <<'PY'
import glob, json, os, sys, collections
by = collections.defaultdict(list)
for path in sorted(glob.glob(sys.argv[1] + "/*.json")):
    run = os.path.basename(path)[:-5]
    for r in json.load(open(path)):
        by[(r["dtype"], r["m"], r["n"], r["k"], r["b_layout"])].append((run, r["config"], r["median_ms"] * 1e3, r["verified"]))
for key, runs in sorted(by.items()):
    print("==", *key)
    for run, config, us, ok in runs:
        print(f"  {run:14} {us:7.1f} us  {config}{'' if ok else '  NOT VERIFIED'}")
PY
CONFIGS="1x32x32x4 1x16x32x2 1x16x32x4 1x16x16x4 1x8x32x2" SPLITS="0 2 4" SHAPES=1x4096x14336,1x4096x4096,4x4096x14336 DTYPES=f16 LAYOUTS=row \
  bash tools/device/skinny-sweep.sh f16-row
CONFIGS="1x16x32x2 1x16x32x4 1x64x32x2" SPLITS="0 2 4" SHAPES=1x4096x14336,1x4096x4096 DTYPES=i8 LAYOUTS=row \
  bash tools/device/skinny-sweep.sh i8-row
SPLITS="0 2 4" CONFIGS="1x4x4x2" SHAPES=1x4096x14336,1x14336x4096 DTYPES=f16,bf16 LAYOUTS=column \
  bash tools/device/skinny-sweep.sh col

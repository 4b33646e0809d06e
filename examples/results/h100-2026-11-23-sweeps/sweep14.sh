#!/usr/bin/env bash
# H100 sweep (branch sweeps14): configurations forced through environment overrides, --no-tune,
# no code change. 1) coopmat2 K unroll / tiles at 4096^3 and 8192^3 (f16, f16acc16);
# 2) the LLM shape 4096x512x14336 with --wall-clock; 3) i8 on the KHR kernel, tilings;
# cuBLAS (cublas.py and cublas_extra.py) first, in the same call.
# Usage on the GPU machine: bash <this folder>/sweep14.sh  (bin.tar.xz, gl/, anchors/ beside it)
set -u
D="$(cd "$(dirname "$0")" && pwd)"
START=$(date +%s); BUDGET=${BUDGET:-230}
B=$D/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' $D/bin.tar.xz $D
for f in $D/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache PYTHONUNBUFFERED=1
T=/tmp/sw; mkdir -p $T
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
left() { [ $(( $(date +%s) - START )) -lt $BUDGET ]; }
# b GROUP NAME ENVVAR VALUE bench-args...   (VALUE "-" = heuristic, no override)
b() {
  local g=$1 name=$2 var=$3 val=$4; shift 4
  left || { echo "-- SKIP $g $name (time)"; return; }
  echo "-- $g $name ($var=$val) t=$(( $(date +%s) - START ))s"
  if [ "$val" = "-" ]; then
    timeout 45 $B/bench --no-tune --backends coopmat --json $T/$g--$name.json "$@" 2>&1 | grep -E "^coopmat|rror|WARN|warn"
  else
    env $var=$val timeout 45 $B/bench --no-tune --backends coopmat --json $T/$g--$name.json "$@" 2>&1 | grep -E "^coopmat|rror|WARN|warn"
  fi
  echo "$var=$val" > $T/$g--$name.override
}
echo "== cuBLAS"
timeout 100 python3 $D/anchors/cublas.py > $OUT/cublas.txt 2>&1; grep -E "fp16|bf16" $OUT/cublas.txt | grep -E "4096x4096x4096|8192"
timeout 40 python3 $D/cublas_extra.py > $OUT/cublas-extra.txt 2>&1; cat $OUT/cublas-extra.txt
BIG="--shapes 4096x4096x4096,8192x8192x8192"
T2=COOPGEMM_COOPMAT2_TILE
echo "== 1. coopmat2 big shapes"
b big f16-heuristic $T2 - $BIG --dtypes f16
for t in 128x256x32x8 128x256x32x32 128x256x32x4 256x128x32x16 128x128x32x16; do b big f16-$t $T2 $t $BIG --dtypes f16; done
b big f16acc16-heuristic $T2 - $BIG --dtypes f16acc16
for t in 128x256x32x16 128x256x32x8 128x256x64x32; do b big f16acc16-$t $T2 $t $BIG --dtypes f16acc16; done
echo "== 2. LLM shape, wall clock"
LLM="--wall-clock --shapes 4096x512x14336 --dtypes f16,f16acc16"
b llm heuristic $T2 - $LLM
for t in 128x128x32x16 128x128x32x8 128x64x32x16 64x128x64x16 128x128x64x32 64x256x64x16 256x64x64x16 64x256x32x16 128x256x32x16; do b llm $t $T2 $t $LLM; done
echo "== 3. i8, KHR kernel"
b i8 heuristic COOPGEMM_COOPMAT_TILING - $BIG --dtypes i8
for t in 4x4x4x4x1 4x2x4x4x1 2x4x8x2x1 4x4x4x2x1 4x4x2x4x1 2x2x4x4x2 4x4x2x2x2; do b i8 $t COOPGEMM_COOPMAT_TILING $t $BIG --dtypes i8; done
echo "== merge t=$(( $(date +%s) - START ))s"
python3 - "$T" "$OUT" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
groups = {}
for name in sorted(os.listdir(src)):
    if not name.endswith(".json"): continue
    g, label = name[:-5].split("--", 1)
    try: recs = json.load(open(os.path.join(src, name)))
    except Exception as e: print("unreadable", name, e); continue
    ov = open(os.path.join(src, name[:-5] + ".override")).read().strip() if os.path.exists(os.path.join(src, name[:-5] + ".override")) else ""
    for r in recs:
        r["sweep_label"] = label
        r["override"] = None if ov.endswith("=-") else ov
        groups.setdefault(g, []).append(r)
for g, recs in groups.items():
    with open(os.path.join(out, f"sweep-{g}.json"), "w") as f:
        f.write("[\n" + ",\n".join("  " + json.dumps(r) for r in recs) + "\n]\n")
    for r in recs:
        print(f"{g:4s} {r['sweep_label']:28s} {r['dtype']:9s} {r['m']}x{r['n']}x{r['k']:<6} {r['config']:48s} {r['gflops']/1e3:7.1f} {r['timing']} ok={r['verified']}")
PY
echo "== done t=$(( $(date +%s) - START ))s"; sleep 1

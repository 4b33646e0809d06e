#!/usr/bin/env bash
# H100: the skinny kernel's configurations forced one at a time (COOPGEMM_SKINNY_CONFIG,
# BMxBNxSUBGROUPSxK_UNROLL), each unsplit and split along K (COOPGEMM_SPLIT_K), on GPU
# timestamps with the heuristic's plan last, then a table of microseconds per case:
#   CONFIGS="1x8x8x2 1x64x8x2" SPLITS="0 4 8" SHAPES=1x4096x14336 DTYPES=f16 LAYOUTS=row \
#     bash tools/device/skinny-sweep.sh [NAME]
# A configuration not valid for a case's layout of B runs the heuristic's (its record says
# which ran). Writes $OUT/skinny-NAME.tgz (one JSON per configuration and split).
set -u
source "$(dirname "$0")/env.sh"
name=${1:-sweep}
export COOPGEMM_CACHE_DIR=/tmp/cgcache-skinny
dir=$OUT/skinny-$name; mkdir -p $dir
for config in ${CONFIGS:-1x8x8x2 1x64x8x2} heuristic; do
  for split in ${SPLITS:-0 4}; do
    if [ "$config" = heuristic ]; then unset COOPGEMM_SKINNY_CONFIG; else export COOPGEMM_SKINNY_CONFIG=$config; fi
    if [ "$split" = auto ]; then unset COOPGEMM_SPLIT_K; else export COOPGEMM_SPLIT_K=$split; fi
    timeout 60 $B/bench --no-tune -q --backends coopmat --b-layouts ${LAYOUTS:-row} --shapes ${SHAPES:-1x4096x14336} \
      --dtypes ${DTYPES:-f16} --json $dir/$config-s$split.json > /dev/null 2>$dir/$config-s$split.err \
      || { echo "$config split $split failed:"; tail -3 $dir/$config-s$split.err; }
  done
done
unset COOPGEMM_SKINNY_CONFIG COOPGEMM_SPLIT_K
python3 - "$dir" <<'PY'
import glob, json, os, sys
rows = {}
for path in sorted(glob.glob(f"{sys.argv[1]}/*.json")):
    run = os.path.basename(path)[:-5]
    for r in json.load(open(path)):
        case = f"{r['dtype']} {r['m']}x{r['n']}x{r['k']} {r['b_layout']}"
        bytes_b = r['n'] * r['k'] * (1 if r['dtype'] == 'i8' else 2 if r['dtype'] != 'f32' else 4)
        us = r['median_ms'] * 1e3
        rows.setdefault(case, []).append((us, run, r['config'], bytes_b / us / 1e6, r['verified']))
for case, runs in rows.items():
    print(f"== {case}")
    for us, run, config, tbs, ok in sorted(runs):
        print(f"  {us:8.1f} us {tbs:5.2f} TB/s  {run:18} {config}{'' if ok else '  NOT VERIFIED'}")
PY
( cd $OUT && tar czf skinny-$name.tgz skinny-$name && rm -rf skinny-$name )

#!/usr/bin/env bash
# H100, session 9, call 7: per-GEMM host time of Context::run (host_submit_ms) against the wall clock.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_CACHE=/tmp/cgcache
timeout 100 $B/bench --no-tune --wall-clock --backends coopmat --dtypes f16 --shapes 4096x512x14336,4096x4096x4096,1024x1024x1024,256x256x256,64x4096x4096 --json $OUT/wall-cm.json 2>&1 | grep -E "^coopmat"
timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16 --shapes 1024x1024x1024,256x256x256 --json $OUT/gpu-cm.json 2>&1 | grep -E "^coopmat"
timeout 100 $B/bench --no-tune --wall-clock --backends simt --dtypes f32 --shapes 1024x1024x1024,256x256x256 --json $OUT/wall-simt.json 2>&1 | grep -E "^simt"
python3 - $OUT/wall-cm.json $OUT/wall-simt.json <<'P'
import json, sys
for f in sys.argv[1:]:
    for r in json.load(open(f)):
        print(r["backend"], r["m"], r["n"], r["k"], "wall ms", r["median_ms"], "host_submit ms", r["host_submit_ms"])
P

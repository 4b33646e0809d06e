#!/usr/bin/env bash
# H100, session 9, call 10: coopmat2 256x256x32 for f16 sums: every coopmat2 test case with
# the tile forced (all types), then the heuristic (256x256x32 first for f16 sums) benched.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
run() { local label=$1; shift; ( env "$@" > $OUT/$label.log 2>&1; echo "$label exit $? $(grep -E 'test result' $OUT/$label.log | tail -1)" ); }
export COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=40
( for t in guard correctness random; do run forced-$t COOPGEMM_CACHE=/tmp/c1 COOPGEMM_COOPMAT2_TILE=256x256x32x8 timeout 150 $B/$t --test-threads=8; done ) &
( for t in epilogue split_k packing; do run forced-$t COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2_TILE=256x256x32x8 timeout 150 $B/$t --test-threads=8; done
  for t in guard packing; do run default-$t COOPGEMM_CACHE=/tmp/c3 timeout 150 $B/$t --test-threads=8; done ) &
wait
export COOPGEMM_CACHE=/tmp/cgcache
echo "== f16 sums, heuristic"
timeout 100 $B/bench --no-tune --backends coopmat --dtypes f16acc16 --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,64x4096x4096 --json $OUT/bench-acc16.json 2>&1 | f
timeout 100 $B/bench --no-tune --wall-clock --backends coopmat --dtypes f16acc16 --shapes 4096x4096x4096,8192x8192x8192,4096x512x14336 --json $OUT/bench-acc16-wall.json 2>&1 | f
echo "== unroll 16, and 4096x4096x512 with the old tile"
COOPGEMM_COOPMAT2_TILE=256x256x32x16 timeout 60 $B/bench --no-tune --backends coopmat --dtypes f16acc16 --shapes 4096x4096x4096,8192x8192x8192,4096x4096x512 --json $OUT/u16.json 2>&1 | f
COOPGEMM_COOPMAT2_TILE=128x256x64x8 timeout 60 $B/bench --no-tune --backends coopmat --dtypes f16acc16 --shapes 4096x4096x512 --json $OUT/old-512.json 2>&1 | f
( cd $OUT && tar czf call10.tgz *.log *.json && rm -f *.log *.json )

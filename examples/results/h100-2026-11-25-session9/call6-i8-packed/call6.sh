#!/usr/bin/env bash
# H100, session 9, call 6: i8 K-contiguous packing and tiles: tests, then i8 bench row/column/packed.
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1
f() { grep -E "^(coopmat|simt|wgsl)|rror|panick" | cut -c1-220; }
run() { local label=$1; shift; ( env "$@" > $OUT/$label.log 2>&1; echo "$label exit $? $(grep -E 'test result' $OUT/$label.log | tail -1)" ); }
export COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=60
( for t in packing correctness random guard split_k; do run cm2-$t COOPGEMM_CACHE=/tmp/c1 timeout 200 $B/$t --test-threads=8; done ) &
( for t in packing correctness; do run khr-$t COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 200 $B/$t --test-threads=8; done ) &
wait
grep -h "packed B on" $OUT/cm2-packing.log | head
export COOPGEMM_CACHE=/tmp/cgcache
echo "== i8 row/column/packed"
timeout 150 $B/bench --no-tune --backends coopmat --b-layouts row,column,packed --dtypes i8 --shapes 4096x4096x4096,8192x8192x8192,512x4096x4096,4096x4096x512,4096x512x14336,64x4096x4096 --json $OUT/bench-i8-layouts.json 2>&1 | f
echo "== i8 wall clock"
timeout 100 $B/bench --no-tune --wall-clock --backends coopmat --b-layouts column --dtypes i8 --shapes 4096x512x14336,8192x8192x8192 --json $OUT/bench-i8-wall.json 2>&1 | f
( cd $OUT && tar czf logs6.tgz *.log && rm -f *.log )

#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_EXPECT_COOPMAT=1
for round in 1 2; do
COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2=0 RUST_LOG=debug timeout 40 $B/disk_cache --test-threads=8 --nocapture > $OUT/a$round.log 2>&1 &
COOPGEMM_CACHE=/tmp/c3 RUST_LOG=debug timeout 40 $B/disk_cache --test-threads=8 --nocapture > $OUT/b$round.log 2>&1 &
sleep 20
for p in $(pgrep -f "bin/disk_cache"); do
  echo "== pid $p $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-80)"
  for t in /proc/$p/task/*; do echo "$(cat $t/comm) sys=$(cut -d' ' -f1 $t/syscall) wchan=$(cat $t/wchan)"; done | sort | uniq -c
done
cat /proc/locks | head
wait
done
for f in $OUT/*.log; do echo "== $f"; grep -E "^test |result" $f; tail -3 $f | cut -c1-300; done

#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_EXPECT_COOPMAT=1
pair() {
  COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 30 $B/disk_cache --test-threads=8 > $OUT/a.log 2>&1 & 
  COOPGEMM_CACHE=/tmp/c3 timeout 30 $B/disk_cache --test-threads=8 > $OUT/b.log 2>&1 &
}
echo "== with the driver's shader disk cache off"
export __GL_SHADER_DISK_CACHE=0
for round in 1 2 3 4; do s=$(date +%s); pair; wait; echo "round $round $(( $(date +%s) - s )) s: $(grep -h 'test result' $OUT/a.log $OUT/b.log | wc -l) of 2 finished"; done
unset __GL_SHADER_DISK_CACHE
echo "== default, which files are locked"
for round in 1 2; do
pair; sleep 12
awk '{print $6}' /proc/locks | while IFS=: read maj min ino; do echo "inode $ino: $(find / -xdev -inum $ino 2>/dev/null | head -2)"; done
wait; echo "round $round: $(grep -h 'test result' $OUT/a.log $OUT/b.log | wc -l) of 2 finished"
done

#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1 COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_RANDOM_CASES=40
for round in 1 2 3; do
s=$(date +%s)
( COOPGEMM_CACHE=/tmp/c2 COOPGEMM_COOPMAT2=0 timeout 60 $B/disk_cache --test-threads=8 > $OUT/a$round.log 2>&1; echo "khr exit $? $(( $(date +%s) - s )) s" ) &
( COOPGEMM_CACHE=/tmp/c3 COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 60 $B/disk_cache --test-threads=8 > $OUT/b$round.log 2>&1; echo "all exit $? $(( $(date +%s) - s )) s" ) &
( COOPGEMM_CACHE=/tmp/c4 timeout 60 $B/resources --test-threads=8 > $OUT/c$round.log 2>&1; echo "res exit $? $(( $(date +%s) - s )) s" ) &
wait
done
grep -h "running for over" $OUT/*.log | sort | uniq -c

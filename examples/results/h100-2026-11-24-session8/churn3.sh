#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1
t() { local label=$1; shift; timeout 40 "$@" > $OUT/$label.txt 2>&1; echo "$label exit $?: $(tail -1 $OUT/$label.txt | cut -c1-160)"; }
for r in 1 2 3; do t default-$r $B/context_churn 8 5; done
for r in 1 2 3 4; do t serial-$r $B/context_churn 8 5 serial-open; done

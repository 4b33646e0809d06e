#!/usr/bin/env bash
# H100, session 9, final call: every test binary (both ash kernels, wgsl-coopmat, the
# 1.4.309 validation-layer lane), then the bench set and cuBLAS in the same call.
set -u
cd "$(dirname "$0")/.."
bash .device/h100s9.sh
echo "=== bench"
bash .device/h100b9.sh
( cd $OUT && tar czf bench.tgz *.json && rm -f *.json )

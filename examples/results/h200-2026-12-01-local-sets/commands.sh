#!/usr/bin/env bash
# GPU machine: weight sets grouped inside the cooperative-vector kernel against the
# library's pre-pass. The network suite on real cooperative vectors and matrices, then the
# networks benchmark with 16 weight sets on coopvec, alternating this build (`networks`)
# and the one before (`networks-old`, staged with COOPGEMM_DEVICE_EXTRA), then this build's
# runs prepared once, eight per run_prepared. Stage with
#   COOPGEMM_DEVICE_EXTRA=/path/to/networks-old ../shared/device/prepare.sh --test mlp --example networks
# Writes mlp-tests.txt, new1.json, old1.json, new2.json, prep8.json to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache COOPGEMM_EXPECT_COOPMAT=1
echo "== mlp tests"
timeout 200 $B/mlp --test-threads=1 > $OUT/mlp-tests.txt 2>&1
grep -E "test result|panicked|FAILED" $OUT/mlp-tests.txt | head -5
nets=(--rows 1048576,4194304 --kernels coopvec --no-layer-by-layer --samples 5 --sets 16)
for run in new1:networks old1:networks-old new2:networks prep8:networks; do
    name=${run%%:*} binary=${run#*:}
    extra=(); [ $name = prep8 ] && extra=(--prepared --per-submission 8)
    echo "== $name ($binary)"
    timeout 150 $B/$binary "${nets[@]}" "${extra[@]}" --json $OUT/$name.json "$@" 2>&1 | grep -vE "^\[" | cut -c1-160
done

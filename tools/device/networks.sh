#!/usr/bin/env bash
# H100: fused small-MLP inference. The network test suite on every network kernel (real
# cooperative vectors and matrices), the prepared-GEMM and split-K suites, then the networks
# benchmark (each kernel and the layer-by-layer path, GPU timestamps and wall clock; extra
# arguments go to it), the picture at 1920x1080 on every kernel, and PyTorch in the same call
# (.device/anchors/mlp_torch.py; MLP_TORCH_COMPILE=1 in the environment adds torch.compile,
# which takes minutes). Stage with
#   ../shared/device/prepare.sh --test mlp --test prepared --test split_k --example networks --example picture
# Writes networks.json, *-tests.txt, picture.txt and mlp_torch.txt to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache COOPGEMM_EXPECT_COOPMAT=1
for suite in mlp prepared split_k; do
    echo "== $suite tests"
    timeout 150 $B/$suite --test-threads=1 > $OUT/$suite-tests.txt 2>&1
    grep -E "test result|panicked|FAILED" $OUT/$suite-tests.txt | head -5
done
echo "== networks benchmark"
timeout 300 $B/networks --json $OUT/networks.json "$@" 2>&1 | grep -vE "^\[" | cut -c1-200
echo "== picture"
timeout 60 $B/picture --width 1920 --height 1080 --out /tmp/picture.png > $OUT/picture.txt 2>&1; tail -6 $OUT/picture.txt
echo "== PyTorch"
timeout 400 python3 .device/anchors/mlp_torch.py > $OUT/mlp_torch.txt 2>&1; cut -c1-200 $OUT/mlp_torch.txt

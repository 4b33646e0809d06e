#!/usr/bin/env bash
# H100: fused small-MLP inference. The network test suite on both network kernels (real
# cooperative matrices), then the networks benchmark (each kernel and the layer-by-layer
# path) and PyTorch in the same call (.device/anchors/mlp_torch.py; MLP_TORCH_COMPILE=1 in
# the environment adds torch.compile, which takes minutes). Stage with
#   ../shared/device/prepare.sh --test mlp --example networks
# Writes networks.json, mlp-tests.txt and mlp_torch.txt to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache
echo "== network tests (both kernels)"
timeout 200 $B/mlp --nocapture > $OUT/mlp-tests.txt 2>&1
grep -E "^test |test result|cases on|unavailable|panicked" $OUT/mlp-tests.txt | head -40
echo "== networks benchmark"
timeout 240 $B/networks --json $OUT/networks.json "$@" 2>&1 | grep -vE "^\[" | cut -c1-220
echo "== PyTorch"
timeout 400 python3 .device/anchors/mlp_torch.py > $OUT/mlp_torch.txt 2>&1; cat $OUT/mlp_torch.txt | cut -c1-200

#!/usr/bin/env bash
# GPU machine: network runs prepared once (Context::prepare_mlp) against recorded ones. The
# network and prepared-GEMM suites on real cooperative vectors and matrices, then the
# networks benchmark three ways, alternating: recorded runs one per submission, prepared
# runs one per run_prepared, prepared runs eight per run_prepared (wall clock of
# back-to-back runs and GPU time), then PyTorch in the same call (.device/anchors/mlp_torch.py;
# MLP_TORCH_COMPILE=1 in the environment adds torch.compile, which takes minutes). Stage with
#   ../shared/device/prepare.sh --test mlp --test prepared --example networks
# Writes *-tests.txt, rec1.json, prep1.json, prep8.json and mlp_torch.txt to $OUT; extra
# arguments go to every networks run.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache COOPGEMM_EXPECT_COOPMAT=1
for suite in mlp prepared; do
    echo "== $suite tests"
    timeout 200 $B/$suite --test-threads=1 > $OUT/$suite-tests.txt 2>&1
    grep -E "test result|panicked|FAILED" $OUT/$suite-tests.txt | head -5
done
nets=(--rows 1048576,4194304 --kernels coopvec,coopmat-rows,coopmat --no-layer-by-layer --samples 5)
for mode in rec1 prep1 prep8; do
    case $mode in
        rec1) launch=() ;;
        prep1) launch=(--prepared) ;;
        prep8) launch=(--prepared --per-submission 8) ;;
    esac
    echo "== networks, $mode"
    timeout 150 $B/networks "${nets[@]}" "${launch[@]}" --json $OUT/$mode.json "$@" 2>&1 | grep -vE "^\[" | cut -c1-160
done
echo "== PyTorch"
timeout 330 python3 .device/anchors/mlp_torch.py > $OUT/mlp_torch.txt 2>&1; grep -vE "^ |Autotune|AUTOTUNE|strides|dtypes|^\{|SingleProcess|Warning|warn" $OUT/mlp_torch.txt | cut -c1-200

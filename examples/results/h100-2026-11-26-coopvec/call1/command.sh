#!/usr/bin/env bash
# H100, coopvec: the network suite on every kernel (real cooperative matrices and vectors),
# then the networks benchmark for coopmat and coopvec, then PyTorch, in one call.
set -u
D=.device-coopvec
export COOPGEMM_EXPECT_COOPMAT=1 COOPGEMM_CACHE_DIR=/tmp/cgcache
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== mlp tests (all kernels)"
RUST_LOG=warn timeout 240 bash $D/run.sh $D/bin/mlp --test-threads=1 --nocapture > $OUT/mlp-tests.txt 2>&1; echo "exit $?"
grep -E "^test |test result|cases on|unavailable|panicked|^backend|^adapter|outside tolerance" $OUT/mlp-tests.txt | cut -c1-600 | head -60
echo "== networks"
COOPGEMM_PIPELINE_STATS=1 RUST_LOG=info timeout 200 bash $D/run.sh $D/bin/networks --nets mlp64,mlp128,mlp32 --rows 1048576,4194304 --kernels coopmat,coopvec --no-layer-by-layer --json $OUT/networks.json > $OUT/networks.txt 2>&1; echo "exit $?"
grep -vE "^\[" $OUT/networks.txt | cut -c1-300
grep -E "pipeline mlp_co" $OUT/networks.txt | cut -c1-500 | head -12
echo "== torch"
timeout 200 python3 $D/anchors/mlp_torch.py > $OUT/mlp_torch.txt 2>&1; cat $OUT/mlp_torch.txt

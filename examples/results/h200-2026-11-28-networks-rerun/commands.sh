source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
timeout 150 python3 .device/anchors/mlp_torch.py > $OUT/mlp_torch.txt 2>&1
for r in 1 2 3; do timeout 60 $B/networks --nets mlp128,mlp64 --rows 1048576 --kernels coopvec --samples 5 --no-layer-by-layer --json $OUT/net-r$r.json 2>&1 | grep -E "mlp|rror" | cut -c1-140; done
cat $OUT/mlp_torch.txt | tail -12

source tools/device/env.sh; export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn COOPGEMM_EXPECT_COOPMAT=1
b() { n=$1; bin=$2; shift 2; echo "-- $n"; timeout 100 $B/$bin --no-tune -q --json $OUT/$n.json "$@" 2>&1 | grep -E "^(coopmat|wgsl|simt)|rror" | cut -c1-150; }
for round in 1 2; do
  b old-wgsl-$round bench-old --backends wgsl-coopmat --shapes 4096x4096x4096,2048x2048x2048 --dtypes f16,f16acc16 --b-layouts row,column
  b new-wgsl-$round bench --backends wgsl-coopmat --shapes 4096x4096x4096,2048x2048x2048 --dtypes f16,f16acc16 --b-layouts row,column
  b old-simt-$round bench-old --backends simt --shapes 4096x4096x4096,64x4096x4096 --dtypes f32,f16
  b new-simt-$round bench --backends simt --shapes 4096x4096x4096,64x4096x4096 --dtypes f32,f16
done
(cd $OUT && tar czf bench.tgz *.json && rm *.json)
echo "== tests"; COOPGEMM_EXPECT_WGSL_COOPMAT=1 timeout 100 $B/wgsl_coopmat 2>&1 | grep -E "test result|panicked"; timeout 120 $B/correctness --test-threads=8 2>&1 | grep -E "test result|panicked"

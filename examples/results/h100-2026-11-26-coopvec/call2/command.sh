#!/usr/bin/env bash
# H100, coopvec call 2: the same timings again without pipeline statistics, each case run
# twice with the kernel order swapped, what else runs on the GPU before and after, PyTorch.
set -u
D=.device-coopvec
export COOPGEMM_CACHE_DIR=/tmp/cgcache RUST_LOG=warn
q() { nvidia-smi --query-gpu=name,driver_version,utilization.gpu,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader; nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader; }
echo "== GPU before"; q
n=0
for order in coopvec,coopmat coopmat,coopvec; do
  for case in "mlp64 1048576" "mlp128 1048576" "mlp32 4194304" "mlp64,mlp128 4194304"; do
    set -- $case; n=$((n+1))
    timeout 100 bash $D/run.sh $D/bin/networks --nets $1 --rows $2 --kernels $order --no-layer-by-layer --json /tmp/networks-$n.json 2>&1 | grep -E "^mlp" | tee -a $OUT/networks.txt
  done
done
cat /tmp/networks-*.json > $OUT/networks.json
echo "== GPU after"; q
echo "== torch"
timeout 200 python3 $D/anchors/mlp_torch.py > $OUT/mlp_torch.txt 2>&1; cat $OUT/mlp_torch.txt
echo "== GPU end"; q

#!/usr/bin/env bash
# H100: why networks at 2^22 rows swing. Logs nvidia-smi's clocks, P-state, power and
# throttle reasons every 100 ms while the networks benchmark runs mlp64 and mlp128 at 2^22
# rows, each kernel order twice in separate processes, lines stamped with the time. Stage with
#   ../shared/device/prepare.sh --example networks
# Writes clocks.csv, diag-*.json and diag.txt to $OUT.
set -u
source "$(dirname "$0")/env.sh"
export COOPGEMM_CACHE_DIR=/tmp/cgcache COOPGEMM_EXPECT_COOPMAT=1
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu,clocks_event_reasons.active \
    --format=csv -lms 100 > $OUT/clocks.csv 2>&1 &
smi=$!
stamp() { while IFS= read -r line; do echo "$(date +%H:%M:%S.%3N) $line"; done; }
n=0
for order in coopvec,coopmat coopmat,coopvec; do
    for net in mlp64 mlp128; do
        n=$((n + 1))
        echo "$(date +%H:%M:%S.%3N) -- $net 2^22 $order"
        timeout 120 $B/networks --nets $net --rows 4194304 --kernels $order --no-layer-by-layer \
            --samples 5 --json $OUT/diag-$n.json 2>&1 | grep -vE "^\[" | cut -c1-160 | stamp
    done
done 2>&1 | tee $OUT/diag.txt
kill $smi

#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1
X=.device/dbg/context_churn
echo "tools: $(which gdb eu-stack pstack 2>/dev/null | tr '\n' ' ')"
trial() { # label env...
  local label=$1; shift
  env "$@" timeout 40 $X 8 5 ${SERIAL:-} > $OUT/$label.txt 2>&1 &
  local pid=$!
  for i in $(seq 24); do kill -0 $pid 2>/dev/null || break; sleep 1; done
  local child=$(pgrep -P $pid -f context_churn | head -1)
  if [ -n "$child" ] && kill -0 $child 2>/dev/null && command -v gdb >/dev/null; then
    gdb -p $child -batch -ex "thread apply all bt 12" > $OUT/$label.gdb 2>&1
  fi
  wait $pid; echo "$label exit $?: $(tail -1 $OUT/$label.txt | cut -c1-200)"
}
for r in 1 2 3; do trial default-$r; done
for r in 1 2; do SERIAL=serial-open trial serial-$r; done
for r in 1 2; do trial nocm2-$r COOPGEMM_COOPMAT2=0; done
for r in 1 2; do trial simtonly-$r COOPGEMM_BACKEND=simt; done

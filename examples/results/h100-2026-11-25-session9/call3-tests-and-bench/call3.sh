#!/usr/bin/env bash
set -u
cd "$(dirname "$0")/.."
bash .device/h100s9.sh
echo "=== bench"
bash .device/h100b9.sh

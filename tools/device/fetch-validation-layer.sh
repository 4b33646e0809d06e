#!/usr/bin/env bash
# Here (not on the GPU machine, which has no network): downloads Debian sid's Khronos
# validation layer (1.4.363 or newer) and the C and C++ runtime it is built against into
# .device/vvl/ for tests.sh's validation lane, with .ci/validation-layer (Debian's archive
# through this machine's own apt sources; no package host named). Skipped when there.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash .ci/validation-layer download .device/vvl

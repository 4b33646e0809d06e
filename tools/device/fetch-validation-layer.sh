#!/usr/bin/env bash
# Here (not on the GPU machine, which has no network): downloads Debian trixie's Khronos
# validation layer (1.4.309, newer than Debian 12's) into .device/vvl/ for tests.sh's
# validation lane. Needs apt-get and the Debian archive keyring.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -n "$(ls .device/vvl/*.deb 2>/dev/null)" ] && exit 0
apt=/tmp/coopgemm-trixie; mkdir -p "$apt/lists/partial" .device/vvl
echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' > "$apt/sources.list"
o=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$apt/lists"
   -o APT::Architecture=amd64 -o APT::Architectures=amd64)
apt-get "${o[@]}" update -qq
(cd .device/vvl && apt-get "${o[@]}" download vulkan-validationlayers)

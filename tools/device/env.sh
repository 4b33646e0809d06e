# Sourced by the scripts beside it on the GPU machine (the device tool's NVIDIA H100): unpacks
# the release binaries that ../shared/device/prepare.sh staged in .device/, installs the
# Vulkan loader and GL dispatch libraries staged beside them, points the loader at NVIDIA's
# driver and sets B to the binaries' folder. Leaves the shell in the repository root.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=.device/bin
[ -d $B ] || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .device/bin.tar.xz .device
for f in .device/gl/*.deb; do dpkg -x "$f" / ; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json RUST_BACKTRACE=1
: "${OUT:=/tmp/coopgemm-out}"; mkdir -p "$OUT"

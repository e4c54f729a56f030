#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Cross-builds skforge for another architecture on a Debian 12 x86_64 machine:
#   scripts/cross-build.sh arm64 [CMAKE_ARG...]
# installs the cross toolchain and the :arm64 libraries (scripts/bootstrap.sh arm64), then
# configures and builds build/arm64/ (the tools, their unit tests, the documentation) in Release
# without sanitizers, with cmake/toolchain-aarch64-linux-gnu.cmake. ctest in build/arm64 runs the
# unit tests through qemu-aarch64; `cpack -G DEB` there writes skforge_<version>_arm64.deb.
# SKFORGE_ARM64_BUILD chooses another build directory.
set -eu
usage() {
    echo "usage: scripts/cross-build.sh arm64 [CMAKE_ARG...]" >&2
    exit 2
}
[ $# -ge 1 ] || usage
case $1 in
arm64) toolchain=cmake/toolchain-aarch64-linux-gnu.cmake ;;
-h | --help) echo "usage: scripts/cross-build.sh arm64 [CMAKE_ARG...]"; exit 0 ;;
*) echo "cross-build: unsupported architecture '$1' (supported: arm64)" >&2; usage ;;
esac
arch=$1
shift
cd "$(dirname "$0")/.."
sh scripts/bootstrap.sh "$arch"
BUILD=${SKFORGE_ARM64_BUILD:-build/$arch}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$PWD/$toolchain" \
    -DCMAKE_BUILD_TYPE=Release -DSKFORGE_SANITIZE=OFF -DSKFORGE_WERROR=ON "$@"
cmake --build "$BUILD" -j "$(nproc)"

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs skforge's build and test dependencies from Debian 12 packages. Idempotent: packages
# already present are not reinstalled, and apt is not touched when nothing is missing.
# `bootstrap.sh arm64` also installs what the aarch64 cross build and its tests need
# (scripts/cross-build.sh): the cross compiler, qemu-user and the :arm64 libraries by multiarch.
set -eu
PACKAGES="build-essential cmake ninja-build pkg-config
libboost-program-options-dev libboost-filesystem-dev libarchive-dev libyaml-cpp-dev
libssl-dev zlib1g-dev catch2 nlohmann-json3-dev bats makeself zstd gzip tar coreutils
clang-format python3 file bc openssl procps diffutils clang libclang-rt-14-dev
ansible-core graphviz lintian rpm man-db
libdeflate-dev libzstd-dev pigz chromium libcurl4-openssl-dev nginx-core
busybox gawk original-awk"
# Every :arm64 package here is Multi-Arch: same, so it installs beside its amd64 twin. Not
# libyaml-cpp-dev (not Multi-Arch: same: its arm64 build would remove the amd64 one): the cross
# build takes only the runtime library libyaml-cpp0.7:arm64 and the amd64 package's
# architecture-independent headers (cmake/cross/yaml-cpp/). catch2 and nlohmann-json3-dev are
# headers for every architecture.
ARM64_PACKAGES="crossbuild-essential-arm64 qemu-user-static
libboost-program-options-dev:arm64 libboost-filesystem-dev:arm64 libarchive-dev:arm64
libssl-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64 libdeflate-dev:arm64 libyaml-cpp0.7:arm64
libcurl4-openssl-dev:arm64"
case ${1:-} in
'') ;;
arm64) PACKAGES="$PACKAGES $ARM64_PACKAGES" ;;
*) echo "usage: scripts/bootstrap.sh [arm64]" >&2; exit 2 ;;
esac
missing=
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "bootstrap: all dependencies present"
    exit 0
fi
echo "bootstrap: installing$missing"
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
if [ "${1:-}" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing

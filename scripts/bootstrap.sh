#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs skforge's build and test dependencies from Debian 12 packages. Idempotent: packages
# already present are not reinstalled, and apt is not touched when nothing is missing.
set -eu
PACKAGES="build-essential cmake ninja-build pkg-config
libboost-program-options-dev libboost-filesystem-dev libarchive-dev libyaml-cpp-dev
libssl-dev zlib1g-dev catch2 nlohmann-json3-dev bats makeself zstd gzip tar coreutils
clang-format python3 file bc openssl procps diffutils clang libclang-rt-14-dev
ansible-core graphviz lintian rpm man-db
libdeflate-dev libzstd-dev pigz chromium
busybox gawk original-awk"
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
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing

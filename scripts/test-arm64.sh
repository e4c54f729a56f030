#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The aarch64 build's tests, run on this x86_64 machine through qemu-aarch64 (scripts/test.sh
# runs this as one step): cross-builds build/arm64 (scripts/cross-build.sh arm64: Release, no
# sanitizers), runs its unit tests and fuzz-corpus replays with ctest (CMAKE_CROSSCOMPILING_EMULATOR
# puts qemu in front of each), then the whole-program smoke test test/cross/smoke.bats with the
# aarch64 skc, skinstall and skrun, host kernels built by aarch64-linux-gnu-g++ (what c++ is on a
# Kunpeng host), and the .run compared byte for byte with the one this machine's skc writes.
#   SKFORGE_ARM64_BUILD  the build directory (default build/arm64)
#   SKFORGE_TEST_BUILD   the native build whose skc is the reference (default build/test)
set -eu
cd "$(dirname "$0")/.."
top=$PWD
BUILD=${SKFORGE_ARM64_BUILD:-build/arm64}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
t0=$(date +%s)
SKFORGE_ARM64_BUILD=$BUILD sh scripts/cross-build.sh arm64
t1=$(date +%s)

# Unit tests and fuzz replays; the bats suites and the help check drive the tools directly and
# run natively in the x86_64 build (the smoke test below covers the aarch64 tools).
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)" -E '^(cli|docs)\.'
t2=$(date +%s)

# Each tool as a command that runs it under qemu, as skinstall on PATH or $SKC would be called.
qemu=$(command -v qemu-aarch64-static || command -v qemu-aarch64)
wrappers=$BUILD/qemu-bin
mkdir -p "$wrappers"
for tool in skc skinstall skrun op_compiler/skforge-op-compiler; do
    name=${tool#*/}
    printf '#!/bin/sh\nexec %s %s "$@"\n' "$qemu" "$BUILD/apps/${tool%%/*}/$name" \
        >"$wrappers/$name"
    chmod +x "$wrappers/$name"
done
reference=${SKFORGE_TEST_BUILD:-build/test}/apps/skc/skc
case $reference in /*) ;; *) reference=$top/$reference ;; esac
[ -x "$reference" ] || reference=
SKC=$wrappers/skc SKINSTALL=$wrappers/skinstall SKRUN=$wrappers/skrun \
    OP_COMPILER=$wrappers/skforge-op-compiler CXX=aarch64-linux-gnu-g++ \
    REFERENCE_SKC=$reference SKFORGE_SOURCE_DIR=$top bats test/cross/smoke.bats
t3=$(date +%s)
echo "arm64: build $((t1 - t0)) s, unit tests under qemu $((t2 - t1)) s, smoke test under qemu $((t3 - t2)) s"

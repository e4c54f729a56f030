#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every test: unit tests (Catch2) and whole-program tests (bats) under AddressSanitizer and
# UndefinedBehaviorSanitizer, through ctest; and the aarch64 build's tests under qemu. Sets up its
# own dependencies on a fresh Debian 12.
set -eu
cd "$(dirname "$0")/.."
sh scripts/bootstrap.sh
BUILD=${SKFORGE_TEST_BUILD:-build/test}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DSKFORGE_SANITIZE=ON -DSKFORGE_WERROR=ON -DSKFORGE_FAULT_INJECTION=ON
cmake --build "$BUILD" -j "$(nproc)"
# Format check: the tree must match .clang-format.
files=$(git ls-files '*.cpp' '*.hpp' 2>/dev/null || true)
if [ -n "$files" ]; then
    clang-format --dry-run --Werror $files
fi
# License check: every source file carries its SPDX line (scripts/spdx.sh --fix adds it).
sh scripts/spdx.sh
# The aarch64 build: cross-built, unit and smoke tests under qemu-aarch64 (scripts/test-arm64.sh).
# Before ctest, whose packaging tests also package build/arm64 (the .deb, lintian, the .rpm).
# SKFORGE_TEST_ARM64=0 skips it (share/doc/aarch64.md).
if [ "${SKFORGE_TEST_ARM64:-1}" = 1 ]; then
    sh scripts/test-arm64.sh
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$BUILD" && ctest --output-on-failure -j "$(nproc)")
# The fuzz targets built with clang and libFuzzer, as scripts/fuzz.sh runs them, each replaying
# its corpus once, so that the clang build cannot rot (SKFORGE_TEST_FUZZ_BUILD=0 skips it).
if [ "${SKFORGE_TEST_FUZZ_BUILD:-1}" = 1 ]; then
    sh scripts/fuzz.sh --replay
fi

#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the fuzz targets with clang and libFuzzer (AddressSanitizer and UndefinedBehaviorSanitizer,
# every library instrumented for coverage) in build/fuzz, then runs each as a fuzzer.
#
#   scripts/fuzz.sh [SECONDS]   run every target for SECONDS (default 60) from its corpus;
#                               what it finds goes to build/fuzz/findings/<target>-crash-...,
#                               new inputs to build/fuzz/corpus/<target>/ (the checked-in
#                               corpus in test/fuzz/corpus/ is only read)
#   scripts/fuzz.sh --replay    build, then run every target once over its corpus (what
#                               scripts/test.sh does, so the clang build cannot rot)
#
# Exit status: 0 nothing found, 1 a target found something (its output says what and where).
set -eu
cd "$(dirname "$0")/.."
mode=fuzz
seconds=60
case "${1:-}" in
--replay) mode=replay ;;
'') ;;
*[!0-9]* | 0)
    echo "usage: scripts/fuzz.sh [SECONDS | --replay]" >&2
    exit 2
    ;;
*) seconds=$1 ;;
esac
sh scripts/bootstrap.sh >/dev/null
BUILD=${SKFORGE_FUZZ_BUILD:-build/fuzz}
launcher=
command -v ccache >/dev/null 2>&1 && launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSKFORGE_FUZZ=ON -DSKFORGE_SANITIZE=ON -DSKFORGE_WERROR=ON $launcher >/dev/null
# target:corpus directory, as test/fuzz/CMakeLists.txt pairs them.
targets="graph_loader:graph scope_options:options run_reader:run index_merge:index
index_record:record history_log:history cleanup_log:cleanup cache_files:cache output_cache:output_cache
check_plan:check_plan makeself:makeself
runtime_program:program"
names=
for t in $targets; do names="$names fuzz_${t%%:*}"; done
cmake --build "$BUILD" -j "$(nproc)" --target $names
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in $targets; do
    name=${t%%:*}
    seeds=test/fuzz/corpus/${t#*:}
    bin=$BUILD/test/fuzz/fuzz_$name
    if [ "$mode" = replay ]; then
        "$bin" -runs=0 "$seeds" >"$BUILD/replay-$name.log" 2>&1 ||
            { cat "$BUILD/replay-$name.log"; echo "fuzz.sh: fuzz_$name fails on its corpus" >&2; status=1; }
        continue
    fi
    mkdir -p "$BUILD/corpus/$name" "$BUILD/findings"
    echo "fuzz.sh: fuzz_$name for ${seconds}s"
    # -timeout: an input that takes longer is a finding (a hang); -rss_limit_mb: so is one that
    # makes the target use more memory than that.
    "$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$BUILD/findings/$name-" "$BUILD/corpus/$name" "$seeds" \
        >"$BUILD/fuzz-$name.log" 2>&1 || {
        tail -n 60 "$BUILD/fuzz-$name.log"
        echo "fuzz.sh: fuzz_$name found something: $BUILD/fuzz-$name.log, $BUILD/findings/" >&2
        status=1
    }
    grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$BUILD/fuzz-$name.log" | tail -n 2 || true
done
[ "$mode" = replay ] && [ "$status" = 0 ] && echo "fuzz.sh: every target ran clean on its corpus"
exit $status

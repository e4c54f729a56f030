# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark scripts (sourced from the repository root): the release build and the
# timing helper. Each script sets REPS before calling measure.

# Builds skforge in build/release; sets SKC, SKINSTALL and SKRUN.
bench_build() {
    sh scripts/bootstrap.sh >/dev/null
    cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKFORGE_TESTS=OFF >/dev/null
    cmake --build build/release >/dev/null
    SKC=$PWD/build/release/apps/skc/skc
    SKINSTALL=$PWD/build/release/apps/skinstall/skinstall
    SKRUN=$PWD/build/release/apps/skrun/skrun
}

# measure PREP CMD...: the median wall seconds of REPS runs of CMD; PREP (shell text) and a sync
# run untimed before each.
measure() {
    local prep=$1
    shift
    for _ in $(seq 1 "$REPS"); do
        eval "$prep"
        sync
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        echo "$t1 - $t0" | bc -l
    done | sort -n | sed -n "$(((REPS + 1) / 2))p"
}

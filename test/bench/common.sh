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
        timed "$prep" "$@"
    done | median
}

# bench_payload DIR MiB: fills DIR/soc/op0..op63 with ELF objects from /usr/lib under new names
# until they add up to MiB; sets $files and $total (bytes).
bench_payload() {
    local sources f d n=0
    mapfile -d '' sources < <(find /usr/lib -type f -size +8k -size -4M -print0 2>/dev/null | sort -z)
    mkdir -p "$1"
    total=0
    while [ "$total" -lt $(($2 * 1024 * 1024)) ]; do
        f=${sources[$((n % ${#sources[@]}))]}
        d="$1/soc/op$((n % 64))"
        mkdir -p "$d"
        cp "$f" "$d/k${n}_$(basename "$f")"
        total=$((total + $(stat -c %s "$f")))
        n=$((n + 1))
    done
    chmod -R u=rwX,go=rX "$1"
    files=$n
}

# median: the median of the numbers on standard input, one a line.
median() {
    sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# timed PREP CMD...: runs PREP (shell text; its output discarded) and a sync untimed, then prints
# CMD's wall seconds.
timed() {
    local prep=$1
    shift
    eval "$prep" >/dev/null 2>&1
    sync
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What installing and uninstalling one package costs as the tree fills up (issue 22): N packages
# of K static kernels each (distinct keys, 4 KiB objects, one index per package). Measured, each
# the median of REPS runs: install and uninstall of one package in an empty tree, then with N-1
# installed the install of the N-th and its uninstall, and one verify of all N; the floor (what
# rewriting the global index of N packages costs by itself, test/bench/index_floor.cpp) and the
# least ratio it leaves the two; plus the time to fill the tree (one skinstall command for N-1
# packages), the sizes of the global index and the per-key record, and what the runtime pays to
# parse that index at process start: nlohmann::json
# (the parser CANN's runtime uses; test/bench/index_parse.cpp) and, as fast parsers, Python's
# json and orjson (when installed).
#   test/bench/bench_installed_many.sh [N] [K] [REPS]      (default 60 200 5)
# SKC and SKINSTALL may point at a build (default: bench_build's release build). BENCH_FS=ext4
# (root) puts the packages and the trees on a fresh journaled ext4 (common.sh, bench_workdir).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-60}
K=${2:-200}
REPS=${3:-5}
. test/bench/common.sh
if [ -z "${SKC:-}" ] || [ -z "${SKINSTALL:-}" ]; then bench_build; fi
# Room for the N package trees (two files of 4 KiB a kernel), later the full tree, and the
# packages.
bench_workdir $((N * K * 24 / 1024 + 1024)) $((N * (2 * K + 8) * 2 + 8192))
export SOURCE_DATE_EPOCH=0

# The N package trees, written by one python process, then packed.
python3 test/bench/gen_kernel_trees.py "$W" "$N" "$K"
for i in $(seq 1 "$N"); do "$SKC" pack "$W/t$i" -o "$W/p$i.run" --package-version 1 --level 1 -q >/dev/null; done
rm -rf "$W"/t*

sk() { "$SKINSTALL" "$@" -q; }
installed() { [ -d "$W/$1/opp/static_kernel/ai_core/$2" ]; }
# Empty tree: pN alone, installed then uninstalled, in turns.
mkdir -p "$W/empty"
ins0=() un0=()
for _ in $(seq 1 "$REPS"); do
    ins0+=("$(timed "! installed empty p$N || sk uninstall p$N --install-path $W/empty" sk install "$W/p$N.run" --install-path "$W/empty")")
    un0+=("$(timed ":" sk uninstall "p$N" --install-path "$W/empty")")
done
# The full tree: p1..p(N-1) in one command, then pN installed and uninstalled in turns.
mkdir -p "$W/full"
runs=()
for i in $(seq 1 $((N - 1))); do runs+=("$W/p$i.run"); done
fill=$(timed ":" sk install "${runs[@]}" --install-path "$W/full")
# The floor, in the same turns: what rewriting the global index of N packages costs by itself
# (test/bench/index_floor.cpp: copy_file_range, fsync, rename, close; nothing else).
c++ -O2 -std=c++20 -o "$W/index_floor" test/bench/index_floor.cpp
mkdir -p "$W/floor"
index=$W/full/opp/static_kernel/ai_core/config/ascend910b/binary_info_config.json
insN=() unN=() flo=()
for _ in $(seq 1 "$REPS"); do
    insN+=("$(timed ":" sk install "$W/p$N.run" --install-path "$W/full")")
    flo+=("$("$W/index_floor" "$index" "$W/floor")")
    unN+=("$(timed ":" sk uninstall "p$N" --install-path "$W/full")")
done
sk install "$W/p$N.run" --install-path "$W/full"
ver=$(measure ":" "$SKINSTALL" verify --install-path "$W/full" -q)
"$SKINSTALL" verify --install-path "$W/full" -q

m() { printf '%s\n' "$@" | median; }
ratio() { echo "scale=2; $1 / $2" | bc -l | sed "s/^\./0./"; }
cfg=$W/full/opp/static_kernel/ai_core/config
index_size=$(stat -c %s "$cfg/ascend910b/binary_info_config.json")
keys_size=$(stat -c %s "$cfg/static_kernel.keys" 2>/dev/null || echo "(none)")
echo "$N packages x $K kernels (4 KiB objects, distinct keys); $(nproc) cores; median of $REPS runs, in turns; sync before each."
echo "Trees on $W_FS."
echo
echo "| operation | empty tree | $((N - 1)) / $N installed | ratio |"
echo "|---|---|---|---|"
printf '| install one package | %.3f s | %.3f s | %s |\n' "$(m "${ins0[@]}")" "$(m "${insN[@]}")" "$(ratio "$(m "${insN[@]}")" "$(m "${ins0[@]}")")"
printf '| uninstall one package | %.3f s | %.3f s | %s |\n' "$(m "${un0[@]}")" "$(m "${unN[@]}")" "$(ratio "$(m "${unN[@]}")" "$(m "${un0[@]}")")"
printf '| floor: the global index of %d packages rewritten alone | | %.3f s | |\n' "$N" "$(m "${flo[@]}")"
printf '| verify all %d packages | | %.2f s | |\n' "$N" "$ver"
printf '| install %d packages in one command | | %.2f s | |\n' $((N - 1)) "$fill"
echo
echo "The least ratio the global index alone allows (empty tree + floor) / empty tree: install $(ratio "$(echo "$(m "${ins0[@]}") + $(m "${flo[@]}")" | bc -l)" "$(m "${ins0[@]}")"), uninstall $(ratio "$(echo "$(m "${un0[@]}") + $(m "${flo[@]}")" | bc -l)" "$(m "${un0[@]}")")."
echo
echo "global index: $index_size bytes for $((N * K)) entries; per-key record: $keys_size bytes"
c++ -O2 -std=c++20 -o "$W/index_parse" test/bench/index_parse.cpp
echo "parse at process start, nlohmann::json (opbase's parser), read + parse + walk: $("$W/index_parse" "$cfg/ascend910b/binary_info_config.json" "$REPS")"
python3 - "$cfg/ascend910b/binary_info_config.json" "$REPS" <<'PY'
import json, statistics, sys, time
path, reps = sys.argv[1], int(sys.argv[2])
parsers = [("python json", json.loads)]
try:
    import orjson
    parsers.append((f"orjson {orjson.__version__}", orjson.loads))
except ImportError:
    pass
for name, loads in parsers:
    times = []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        with open(path, "rb") as f:
            doc = loads(f.read())
        n = sum(len(v["staticList"]) for v in doc.values())
        times.append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
    wall = statistics.median(t[0] for t in times)
    cpu = statistics.median(t[1] for t in times)
    print(f"parse at process start, {name}, read + parse + walk: {wall:.1f} ms wall, {cpu:.1f} ms CPU, {n} entries")
PY

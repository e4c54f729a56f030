#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Two skinstall builds side by side at fleet scale (issue 22): N packages of K kernels
# (gen_kernel_trees.py), N-1 of them installed into one tree by build B, the tree copied with
# `cp -a` for build A (which rebuilds its index once, untimed, when it does not read B's record);
# then REPS rounds, each, for A then B: install pN into the full tree, uninstall it, the same in an
# empty tree, `sync` before each timed command. Prints the medians and the ratios full / empty,
# and the floor of what a change at that size must write: the global index rewritten alone
# (test/bench/index_floor.cpp: copy_file_range from the old file, fsync, rename, close), the
# file the runtime reads and skinstall rewrites per SoC, measured in the same rounds.
#   test/bench/bench_fleet_turns.sh SKINSTALL_A SKINSTALL_B [N] [K] [REPS]   (default 500 200 7)
# SKC may point at a build (default: bench_build's release build). BENCH_FS=ext4 (root) puts
# the trees on a fresh journaled ext4 (common.sh, bench_workdir).
set -euo pipefail
cd "$(dirname "$0")/../.."
A=$1
B=$2
N=${3:-500}
K=${4:-200}
REPS=${5:-7}
. test/bench/common.sh
if [ -z "${SKC:-}" ]; then bench_build; fi
bench_workdir $((N * 6 + 2048)) $((N * (K * 2 + 64) * 3 + 8192))
export SOURCE_DATE_EPOCH=0

python3 test/bench/gen_kernel_trees.py "$W" "$N" "$K"
for i in $(seq 1 "$N"); do "$SKC" pack "$W/t$i" -o "$W/p$i.run" --package-version 1 --level 1 -q >/dev/null; done
rm -rf "$W"/t*
runs=()
for i in $(seq 1 $((N - 1))); do runs+=("$W/p$i.run"); done
mkdir -p "$W/b_full" "$W/a_empty" "$W/b_empty"
"$B" install "${runs[@]}" --install-path "$W/b_full" -q
cp -a "$W/b_full" "$W/a_full"
"$A" recover --install-path "$W/a_full" -q

sk_timed() {
    sync
    local s e
    s=$(date +%s%N)
    "$@" -q
    e=$(date +%s%N)
    echo $(((e - s) / 1000))
}
idx=opp/static_kernel/ai_core/config/ascend910b/binary_info_config.json
c++ -O2 -std=c++20 -o "$W/index_floor" test/bench/index_floor.cpp
mkdir -p "$W/floor"
declare -A t
floor=()
for _ in $(seq 1 "$REPS"); do
    for x in a b; do
        S=$A && [ $x = b ] && S=$B
        t[$x.fi]+=" $(sk_timed "$S" install "$W/p$N.run" --install-path "$W/${x}_full")"
        t[$x.fu]+=" $(sk_timed "$S" uninstall "p$N" --install-path "$W/${x}_full")"
        t[$x.ei]+=" $(sk_timed "$S" install "$W/p$N.run" --install-path "$W/${x}_empty")"
        t[$x.eu]+=" $(sk_timed "$S" uninstall "p$N" --install-path "$W/${x}_empty")"
    done
    floor+=($(echo "$("$W/index_floor" "$W/b_full/$idx" "$W/floor") * 1000000 / 1" | bc))
done
# Both trees end as they started, and the same: the global index byte for byte.
cmp "$W/a_full/$idx" "$W/b_full/$idx"
"$B" verify --install-path "$W/b_full" -q

m() { printf '%s\n' $1 | median; }
ms() { echo "scale=3; $1 / 1000000" | bc -l | sed 's/^\./0./'; }
ratio() { echo "scale=2; $1 / $2" | bc -l | sed 's/^\./0./'; }
echo "$N packages x $K kernels; A = $A, B = $B; $(nproc) cores; median of $REPS rounds, A and B in"
echo "turns, sync before each command. Trees on $W_FS."
echo
echo "| operation | A: empty | A: $((N - 1)) installed | A: ratio | B: empty | B: $((N - 1)) installed | B: ratio |"
echo "|---|---|---|---|---|---|---|"
for op in i u; do
    name=install && [ $op = u ] && name=uninstall
    row="| $name one package |"
    for x in a b; do
        e=$(m "${t[$x.e$op]}") f=$(m "${t[$x.f$op]}")
        row="$row $(ms "$e") s | $(ms "$f") s | $(ratio "$f" "$e") |"
    done
    echo "$row"
done
echo
echo "global index: $(stat -c %s "$W/b_full/$idx") bytes; rewritten alone (index_floor, the floor of any change): $(ms "$(m "${floor[*]}")") s"

#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The path every process start and stop takes on a host without skforge (issue 37): one package
# of K static kernels (test/bench/gen_kernel_trees.py: 2K files and an index) installed and
# removed by the .run alone (`sh p1.run`, `sh p1.run --uninstall`, SKFORGE_NO_SKINSTALL=1; and
# the installed uninstall.sh, TorchAir's way), side by side with makeself .runs of the same tree
# whose script copies it into place, and one whose script removes it (makeself's defaults, as
# CANN's own .runs: gzip -9, MD5 and CRC checked when run). Each step the median of REPS rounds,
# in each round one side then the other, the first side alternating round by round; then the
# ratio of the medians and the median of the rounds' own ratios.
#   test/bench/bench_run_alone.sh [REPS] [K...]      (default: 5 rounds, 200 and 2000 kernels)
# BENCH_FS=ext4 (root) runs it on a fresh ext4 with a journal (common.sh, bench_workdir).
# SKC may point at any build (only `skc pack` runs; default: bench_build's release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
REPS=${1:-5}
shift || true
[ $# -gt 0 ] || set -- 200 2000
. test/bench/common.sh
if [ -z "${SKC:-}" ]; then bench_build; fi
command -v makeself >/dev/null || { echo "makeself is not installed (apt-get install makeself)" >&2; exit 2; }
# With BENCH_FS=ext4 (common.sh), room for the largest K: its tree, the makeself copy, the two
# .runs, both installs and makeself's extraction, 2K + 1 files each.
kmax=0
for K in "$@"; do [ "$K" -le "$kmax" ] || kmax=$K; done
bench_workdir $((64 + kmax / 5)) $((16384 + kmax * 12))
export SOURCE_DATE_EPOCH=0 SKFORGE_NO_SKINSTALL=1
AI=opp/static_kernel/ai_core

ratio() { echo "scale=2; $1 / $2" | bc -l; }
# paired A B: the median of the rounds' own ratios, A's time over B's in the same round (the file
# system's speed drifts between rounds, by several times on a shared machine).
paired() { paste -d/ "$W/t.$1" "$W/t.$2" | sed 's|^|scale=2; |' | bc -l | median; }
sk_install() { sh "$W/p1.run" --install-path="$W/rsk" -q; }
sk_uninstall() { sh "$W/p1.run" --uninstall --install-path="$W/rsk" -q; }
sk_script() { sh "$W/rsk/$AI/p1/uninstall.sh" -q; }
ms_install() { sh "$W/ms-install.run" --quiet --nox11 -- "$W/rms"; }
ms_uninstall() { sh "$W/ms-remove.run" --quiet --nox11 -- "$W/rms"; }

echo "Working directory: $W_FS; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) at the start."
echo
echo "| kernels (files) | step | .run alone | makeself .run | ratio | ratio per round |"
echo "|---|---|---|---|---|---|"
for K in "$@"; do
    rm -rf "${W:?}"/t1 "$W"/ms "$W"/*.run
    python3 test/bench/gen_kernel_trees.py "$W" 1 "$K"
    "$SKC" pack "$W/t1" -o "$W/p1.run" --package-version 1 -q >/dev/null
    # The makeself side: the same tree and two scripts; one copies the tree into place, the
    # other removes it.
    mkdir "$W/ms"
    cp -R "$W/t1" "$W/ms/tree"
    printf '#!/bin/sh\nset -e\nmkdir -p "$1/%s"\ncp -R tree "$1/%s/p1"\n' "$AI" "$AI" >"$W/ms/install.sh"
    printf '#!/bin/sh\nrm -rf "$1/%s/p1"\n' "$AI" >"$W/ms/remove.sh"
    chmod 0755 "$W/ms/install.sh" "$W/ms/remove.sh"
    makeself --quiet --nox11 "$W/ms" "$W/ms-install.run" p1 ./install.sh >/dev/null
    makeself --quiet --nox11 "$W/ms" "$W/ms-remove.run" p1 ./remove.sh >/dev/null
    files=$(find "$W/t1" -type f | wc -l)
    for s in sk_install ms_install sk_uninstall ms_uninstall sk_script; do : >"$W/t.$s"; done
    for r in $(seq 1 "$REPS"); do
        # The two sides take turns going first, round by round: what one side's run leaves the
        # file system (ext4 without a journal scans the inodes deleted in the last minute before
        # it reuses one, fs/ext4/ialloc.c) must not always fall on the same side.
        sides="sk ms"
        [ $((r % 2)) = 1 ] || sides="ms sk"
        for s in $sides; do
            timed 'rm -rf "$W/r$s" && mkdir "$W/r$s"' "${s}_install" >>"$W/t.${s}_install"
        done
        for s in $sides; do
            timed 'test -d "$W/r$s/$AI/p1"' "${s}_uninstall" >>"$W/t.${s}_uninstall"
        done
        timed 'sk_install' sk_script >>"$W/t.sk_script"
        [ ! -e "$W/rsk/$AI/p1" ] && [ ! -e "$W/rms/$AI/p1" ] || { echo "a removal left the package" >&2; exit 1; }
    done
    for s in sk_install ms_install sk_uninstall ms_uninstall sk_script; do
        eval "t_$s=\$(median <\"\$W/t.$s\")"
    done
    printf '| %d (%d) | install | `sh p1.run`: %.2f s | copy into place: %.2f s | %s | %s |\n' \
        "$K" "$files" "$t_sk_install" "$t_ms_install" "$(ratio "$t_sk_install" "$t_ms_install")" \
        "$(paired sk_install ms_install)"
    printf '| %d (%d) | uninstall | `sh p1.run --uninstall`: %.2f s | remove: %.2f s | %s | %s |\n' \
        "$K" "$files" "$t_sk_uninstall" "$t_ms_uninstall" "$(ratio "$t_sk_uninstall" "$t_ms_uninstall")" \
        "$(paired sk_uninstall ms_uninstall)"
    printf '| %d (%d) | uninstall | installed `uninstall.sh`: %.2f s | remove: %.2f s | %s | %s |\n' \
        "$K" "$files" "$t_sk_script" "$t_ms_uninstall" "$(ratio "$t_sk_script" "$t_ms_uninstall")" \
        "$(paired sk_script ms_uninstall)"
done
echo
echo "Load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."

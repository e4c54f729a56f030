#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What a package's own scripts cost when skinstall is not on the host (issue 23): N packages of
# K static kernels each (distinct keys, 4 KiB objects) installed one after another by the .run
# alone into one root; the first and the last install, one uninstall with all installed, and the
# same three with skinstall, each the median of REPS runs; plus the size of install.sh.
#   test/bench/bench_standalone.sh [N] [K] [REPS]
# SKC and SKINSTALL may point at a build (default: bench_build's release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-20}
K=${2:-200}
REPS=${3:-3}
. test/bench/common.sh
if [ -z "${SKC:-}" ] || [ -z "${SKINSTALL:-}" ]; then bench_build; fi
W=$(mktemp -d "${TMPDIR:-/var/tmp}/skforge-bench-XXXXXX")
trap 'rm -rf "$W"' EXIT
export SOURCE_DATE_EPOCH=0 SKFORGE_NO_SKINSTALL=1

# The N package trees (test/bench/gen_kernel_trees.py: K kernels of Add each, keys
# Add/d=0,p=0/pI/<k>), then packed.
python3 test/bench/gen_kernel_trees.py "$W" "$N" "$K"
for i in $(seq 1 "$N"); do "$SKC" pack "$W/t$i" -o "$W/p$i.run" --package-version 1 --level 1 -q >/dev/null; done

sh_install() { sh "$W/p$1.run" --install-path="$W/$2" -q; }
sk_install() { "$SKINSTALL" install "$W/p$1.run" --install-path "$W/$2" -q; }
# fill ROOT HOW: installs p1..p(N-1) into a fresh ROOT.
fill() {
    rm -rf "${W:?}/$1"
    mkdir -p "$W/$1"
    for i in $(seq 1 $((N - 1))); do "$2_install" "$i" "$1"; done
}
fresh() { rm -rf "${W:?}/$1"; mkdir -p "$W/$1"; }

for how in sh sk; do
    first=$(measure "fresh r$how" "${how}_install" 1 "r$how")
    last=$(measure "fill r$how $how" "${how}_install" "$N" "r$how")
    if [ $how = sh ]; then
        un=$(measure "fill r$how $how; sh_install $N r$how" sh "$W/r$how/opp/static_kernel/ai_core/p$N/uninstall.sh" -q)
    else
        un=$(measure "fill r$how $how; sk_install $N r$how" "$SKINSTALL" uninstall "p$N" --install-path "$W/r$how" -q)
    fi
    printf '%s: first install %.2f s, install with %d installed %.2f s, uninstall with %d installed %.2f s\n' \
        "$how" "$first" $((N - 1)) "$last" "$N" "$un"
done
cmp "$W/rsh/opp/static_kernel/ai_core/config/ascend910b/binary_info_config.json" \
    "$W/rsk/opp/static_kernel/ai_core/config/ascend910b/binary_info_config.json" &&
    echo "global index: byte-identical, $(stat -c %s "$W/rsk/opp/static_kernel/ai_core/config/ascend910b/binary_info_config.json") bytes"
(cd "$W" && sh p1.run --extract="$W/x1" >/dev/null && wc -c "$W/x1/install.sh" "$W/x1/uninstall.sh")

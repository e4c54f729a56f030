#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# skinstall against dpkg, the package manager Debian and Ubuntu operators already trust, on the
# same payload (issue 22): ELF objects from /usr/lib under new names, gzip level 1 on both, each
# .deb with its md5sums as dh_md5sums writes them, dpkg with its own database under --root.
#   install: skinstall install X-1.run       vs  dpkg --root R -i x_1.deb
#   upgrade: skinstall upgrade X-2.run       vs  dpkg --root R -i x_2.deb   (the next version over it)
#   remove:  skinstall uninstall X           vs  dpkg --root R -r x
#   verify:  skinstall verify X              vs  dpkg --root R --verify x
# The two tools take turns run by run; each number is the median of REPS runs; sync before each.
#   test/bench/bench_vs_dpkg.sh [MiB] [REPS]          (default 256 5)
# SKC and SKINSTALL may point at a build (default: bench_build's release build). BENCH_FS=ext4
# (root) puts the payload and both roots on a fresh journaled ext4 (common.sh, bench_workdir).
set -euo pipefail
cd "$(dirname "$0")/../.."
MB=${1:-256}
REPS=${2:-5}
. test/bench/common.sh
if [ -z "${SKC:-}" ] || [ -z "${SKINSTALL:-}" ]; then bench_build; fi
# Room for the tree, the two packages of each tool and, at the peak, the skinstall root with
# version 2 beside dpkg's with both versions; a file of the payload is at least 8 KiB.
bench_workdir $((MB * 10 + 1024)) $((MB * 128 * 5 + 8192))
export SOURCE_DATE_EPOCH=0
bench_payload "$W/tree" "$MB"
cd "$W"
# Packed first: skc pack refuses hard links, which the .deb trees below are made of.
for v in 1 2; do
    "$SKC" pack tree -o "bench-$v.run" --name bench_kernels --package-version "$v" --level 1 -q >/dev/null
done
for v in 1 2; do
    mkdir -p "deb$v/DEBIAN" "deb$v/opt/static_kernel"
    cp -al tree "deb$v/opt/static_kernel/bench_kernels"
    printf 'Package: bench-kernels\nVersion: %s\nArchitecture: all\nMaintainer: bench <bench@example.org>\nDescription: benchmark payload\n' "$v" >"deb$v/DEBIAN/control"
    (cd "deb$v" && find opt -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
    dpkg-deb --root-owner-group -Zgzip -z1 --build "deb$v" "bench_$v.deb" >/dev/null
    rm -rf "deb$v"
done
sync

SK="$SKINSTALL"
fresh_sk() { rm -rf "$W/sk" && mkdir -p "$W/sk"; }
fresh_dpkg() {
    rm -rf "$W/dp" && mkdir -p "$W/dp/var/lib/dpkg/info" "$W/dp/var/lib/dpkg/updates" "$W/dp/var/log"
    : >"$W/dp/var/lib/dpkg/status"
}
dp() { dpkg --root="$W/dp" --log=/dev/null "$@"; }
sk() { "$SK" "$@" --install-path "$W/sk" -q; }
declare -A t
for _ in $(seq 1 "$REPS"); do
    t[sk_install]+=" $(timed fresh_sk sk install bench-1.run)"
    t[dp_install]+=" $(timed fresh_dpkg dp -i bench_1.deb)"
    t[sk_upgrade]+=" $(timed 'fresh_sk; sk install bench-1.run' sk upgrade bench-2.run)"
    t[dp_upgrade]+=" $(timed 'fresh_dpkg; dp -i bench_1.deb' dp -i bench_2.deb)"
    t[sk_verify]+=" $(timed ':' "$SK" verify bench_kernels --install-path "$W/sk" -q)"
    t[dp_verify]+=" $(timed ':' dp --verify bench-kernels)"
    t[sk_remove]+=" $(timed ':' sk uninstall bench_kernels)"
    t[dp_remove]+=" $(timed ':' dp -r bench-kernels)"
done
# Both did what they were asked: the last upgrade left version 2, verify passed, the remove
# left no file of the payload.
{
    fresh_sk && sk install bench-1.run && sk upgrade bench-2.run && "$SK" verify --install-path "$W/sk" -q
    fresh_dpkg && dp -i bench_1.deb && dp -i bench_2.deb && dp --verify bench-kernels
} >/dev/null
[ "$(dp -s bench-kernels | sed -n 's/^Version: //p')" = 2 ]
# Both installed onto the file system the header names.
[ "$(stat -c %d "$W/sk/opp/static_kernel/ai_core/bench_kernels/soc" \
    "$W/dp/opt/static_kernel/bench_kernels/soc" | sort -u)" = "$(stat -c %d "$W")" ]
dp -r bench-kernels >/dev/null && [ ! -e "$W/dp/opt/static_kernel/bench_kernels" ]

m() { printf '%s\n' $1 | median; }
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "Payload: $files ELF objects, $((total / 1048576)) MiB; gzip level 1 on both; $(nproc) cores;"
echo "median of $REPS runs taken in turns; sync before each timed run. $(dpkg --version | head -1)."
echo "Payload and both roots on $W_FS."
echo
echo "| step | skinstall | dpkg | skinstall / dpkg |"
echo "|---|---|---|---|"
for step in install upgrade remove verify; do
    printf '| %s | %.2f s | %.2f s | %s |\n' "$step" "$(m "${t[sk_$step]}")" "$(m "${t[dp_$step]}")" \
        "$(ratio "$(m "${t[sk_$step]}")" "$(m "${t[dp_$step]}")")"
done

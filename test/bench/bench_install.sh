#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Side-by-side benchmark of skinstall against what an operator would otherwise do, on a package of
# at least 1 GiB in several thousand files (ELF objects from /usr/lib, cycled under new names):
#   install: skinstall install X.run   vs   makeself's --noexec --target extraction + cp -a
#   verify:  skinstall verify NAME     vs   sha256sum -c over the same files
#   test/bench/bench_install.sh [MiB] [repetitions]
# Both packages use gzip level 1 (packing speed is bench_package.sh's subject, not this one's).
set -euo pipefail
cd "$(dirname "$0")/../.."
MB=${1:-1024}
REPS=${2:-3}
. test/bench/common.sh
bench_build
W=$(mktemp -d "${TMPDIR:-/var/tmp}/skforge-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

bench_payload "$W/tree" "$MB"
printf '#!/bin/sh\ntrue\n' >"$W/tree/setup.sh" && chmod 0755 "$W/tree/setup.sh"
cd "$W"
"$SKC" pack tree -o bench_kernels.run --package-version 1 --level 1 -q
makeself --sha256 --gzip --complevel 1 --nox11 --quiet tree ms.run bench ./setup.sh
sync

sk_install() { "$SKINSTALL" install bench_kernels.run --install-path "$W/root" -q; }
ms_install() {
    sh ms.run --noexec --target "$W/ms-tmp" --quiet &&
        mkdir -p "$W/root2/opp/static_kernel/ai_core/bench_kernels" &&
        cp -a "$W/ms-tmp/." "$W/root2/opp/static_kernel/ai_core/bench_kernels/" && rm -rf "$W/ms-tmp"
}
t_sk_install=$(measure 'rm -rf root && mkdir root' sk_install)
t_ms_install=$(measure 'rm -rf root2 ms-tmp && mkdir root2' ms_install)

(cd root/opp/static_kernel/ai_core/bench_kernels && find . -type f ! -name manifest.json -print0 | sort -z | xargs -0 sha256sum >"$W/SHA256SUMS")
cat root/opp/static_kernel/ai_core/bench_kernels/soc/*/* >/dev/null
t_sk_verify=$(measure ':' "$SKINSTALL" verify bench_kernels --install-path "$W/root" -q)
t_sha_verify=$(measure ':' sh -c "cd root/opp/static_kernel/ai_core/bench_kernels && sha256sum -c --quiet $W/SHA256SUMS")

files=$(find tree -type f | wc -l)
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "Input: $files files, $((total / 1048576)) MiB (ELF objects from /usr/lib under new names); gzip level 1;"
echo "$(nproc) cores; median of $REPS runs; page cache warm for the inputs; sync before each timed run."
echo
echo "| step | skforge | the usual way | ratio |"
echo "|---|---|---|---|"
printf '| install | skinstall install: %.2f s | makeself --noexec --target + cp -a: %.2f s | %s |\n' "$t_sk_install" "$t_ms_install" "$(ratio "$t_sk_install" "$t_ms_install")"
printf '| verify | skinstall verify: %.2f s | sha256sum -c: %.2f s | %s |\n' "$t_sk_verify" "$t_sha_verify" "$(ratio "$t_sk_verify" "$t_sha_verify")"

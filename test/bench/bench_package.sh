#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Side-by-side benchmark of skforge's .run packages against makeself 2.4.5 (Debian's) at its best
# settings, on real ELF objects copied from /usr/lib, in one run:
#   gzip: makeself --gzip (one gzip process), makeself --pigz (every core), skc pack
#   zstd: makeself --zstd --threads 0 (every core), skc pack --compress zstd
# Same levels on both sides; makeself with --sha256 --nomd5 --nocrc (one checksum, like skforge).
# Then the single-core limits of SHA-256, deflate (zlib, libdeflate) and zstd on this machine.
#   test/bench/bench_package.sh [MiB...] ; env REPS (3), GZIP_LEVEL (6), ZSTD_LEVEL (3)
# Prints Markdown tables; each number is the median wall time of REPS runs, warm cache, the tools
# taking turns run by run.
set -euo pipefail
cd "$(dirname "$0")/../.."
SIZES=${*:-64 256}
REPS=${REPS:-3}
GZ=${GZIP_LEVEL:-6}
ZS=${ZSTD_LEVEL:-3}
. test/bench/common.sh
bench_build
for tool in makeself pigz zstd; do
    command -v "$tool" >/dev/null || { echo "bench_package.sh needs $tool (apt-get install $tool)" >&2; exit 1; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/skforge-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
c++ -O2 -std=c++20 -o "$W/codec_speed" test/bench/codec_speed.cpp -ldeflate -lz -lzstd -lcrypto

# make_input MiB: regular ELF files from /usr/lib until MiB MiB, normalised to mode 0644.
make_input() {
    rm -rf "$W/tree" && mkdir -p "$W/tree/lib"
    local total=0 n=0 f
    while IFS= read -r -d '' f; do
        [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
        n=$((n + 1))
        cp "$f" "$W/tree/lib/${n}_$(basename "$f")"
        total=$((total + $(stat -c %s "$f")))
        [ "$total" -ge $(($1 * 1024 * 1024)) ] && break
    done < <(find /usr/lib /usr/libexec /usr/bin -type f -size +16k -print0 2>/dev/null | sort -z)
    chmod -R u=rwX,go=rX "$W/tree"
    printf '#!/bin/sh\ntrue\n' >"$W/tree/setup.sh" && chmod 0755 "$W/tree/setup.sh"
    cat "$W"/tree/lib/* >/dev/null # warm the page cache for everyone
}

cd "$W"
export SOURCE_DATE_EPOCH=1700000000
ms() { # ms OUT.run makeself-compression-options...
    local out=$1
    shift
    rm -f "$out"
    makeself --sha256 --nomd5 --nocrc "$@" --nox11 --quiet tree "$out" "bench" ./setup.sh
}
sk() { # sk OUT.run skc-pack-options...
    local out=$1
    shift
    "$SKC" pack tree -o "$out" --package-version 1 -q "$@"
}
ratio() { printf '%.2f' "$(echo "$1 / $2" | bc -l)"; }
row() { # row STEP BASELINE-NAME BASELINE-SECONDS OTHER... ; SKFORGE-SECONDS last
    printf '| %s |' "$1"
    shift
    local args=("$@") last=${*: -1}
    for t in "${args[@]}"; do printf ' %.2f s |' "$t"; done
    printf ' %s |\n' "$(ratio "$last" "$best")"
}
# rounds PREP FUNCTION...: runs the functions in turn, REPS rounds, PREP and a sync untimed before
# each run, and sets T[FUNCTION] to its median wall seconds. Interleaved, so a slow spell of this
# shared machine falls on every tool alike rather than on whichever ran then.
declare -A T
rounds() {
    local prep=$1 f t0 t1
    shift
    declare -A runs=()
    for _ in $(seq 1 "$REPS"); do
        for f in "$@"; do
            eval "$prep"
            sync
            t0=$(date +%s.%N)
            "$f" >/dev/null 2>&1
            t1=$(date +%s.%N)
            runs[$f]+="$(echo "$t1 - $t0" | bc -l) "
        done
    done
    for f in "$@"; do
        T[$f]=$(printf '%s\n' ${runs[$f]} | sort -n | sed -n "$(((REPS + 1) / 2))p")
    done
}
gz_pack() { ms gz.run --gzip --complevel "$GZ"; }
pigz_pack() { ms pigz.run --pigz --complevel "$GZ"; }
skg_pack() { sk skg.run --level "$GZ"; }
zs_pack() { ms zs.run --zstd --threads 0 --complevel "$ZS"; }
skz_pack() { sk skz.run --compress zstd --level "$ZS"; }
gz_check() { sh gz.run --check; }
pigz_check() { sh pigz.run --check; }
skg_check() { sh skg.run --check; }
zs_check() { sh zs.run --check; }
skz_check() { sh skz.run --check; }
gz_x() { sh gz.run --noexec --target out --quiet; }
pigz_x() { sh pigz.run --noexec --target out --quiet; }
skg_x() { sh skg.run --extract=out -q && cmp -s out/lib/1_* tree/lib/1_*; }
zs_x() { sh zs.run --noexec --target out --quiet; }
skz_x() { sh skz.run --extract=out -q && cmp -s out/lib/1_* tree/lib/1_*; }

echo "makeself $(makeself --version | awk '{print $3}'), $(gzip --version | head -1), $(pigz --version 2>&1), zstd $(zstd --version | grep -o 'v[0-9.]*' | head -1), skforge $("$SKC" --version | awk '{print $2}'); $(nproc) cores; median of $REPS runs taken in turns, warm cache; load before: $(cut -d' ' -f1-3 /proc/loadavg)."
for MB in $SIZES; do
    make_input "$MB"
    files=$(find tree -type f | wc -l)
    echo
    echo "### $MB MiB ($files ELF files), gzip level $GZ, zstd level $ZS"
    echo
    rounds ':' gz_pack pigz_pack skg_pack zs_pack skz_pack
    rounds ':' gz_check pigz_check skg_check zs_check skz_check
    rounds 'rm -rf out' gz_x pigz_x skg_x zs_x skz_x
    { rm -rf out && skg_x && rm -rf out && skz_x; } || { echo "extraction produced wrong bytes" >&2; exit 1; }

    echo "| gzip | makeself --gzip | makeself --pigz | skforge | skforge / best makeself |"
    echo "|---|---|---|---|---|"
    for step in pack check x; do
        best=$(printf '%s\n' "${T[gz_$step]}" "${T[pigz_$step]}" | sort -n | head -1)
        row "$(sed 's/^x$/extract/; s/^check$/--check/' <<<"$step")" "${T[gz_$step]}" "${T[pigz_$step]}" "${T[skg_$step]}"
    done
    printf '| size | %s B | %s B | %s B | |\n' "$(stat -c %s gz.run)" "$(stat -c %s pigz.run)" "$(stat -c %s skg.run)"
    echo
    echo "| zstd | makeself --zstd --threads 0 | skforge --compress zstd | skforge / makeself |"
    echo "|---|---|---|---|"
    for step in pack check x; do
        best=${T[zs_$step]}
        row "$(sed 's/^x$/extract/; s/^check$/--check/' <<<"$step")" "${T[zs_$step]}" "${T[skz_$step]}"
    done
    printf '| size | %s B | %s B | |\n' "$(stat -c %s zs.run)" "$(stat -c %s skz.run)"
done
echo
echo "Single-core limits on the last input ($MB MiB; gzip level $GZ, zstd level $ZS):"
echo
"$W/codec_speed" "$GZ" tree/lib/* | sed -n '1,5p'
"$W/codec_speed" "$ZS" tree/lib/* | sed -n '6p'
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

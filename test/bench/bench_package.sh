#!/bin/bash
# Side-by-side benchmark of skforge's .run packages against makeself 2.4.5 (Debian's) at its best
# settings, on real ELF objects copied from /usr/lib, in one run:
#   gzip: makeself --gzip (one gzip process), makeself --pigz (every core), skc pack
#   zstd: makeself --zstd --threads 0 (every core), skc pack --compress zstd
# Same levels on both sides; makeself with --sha256 --nomd5 --nocrc (one checksum, like skforge).
# Then the single-core limits of SHA-256, deflate (zlib, libdeflate) and zstd on this machine.
#   test/bench/bench_package.sh [MiB...] ; env REPS (3), GZIP_LEVEL (6), ZSTD_LEVEL (3)
# Prints Markdown tables; each number is the median wall time of REPS runs, warm cache.
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
ratio() { echo "scale=2; $1 / $2" | bc -l; }
row() { # row STEP BASELINE-NAME BASELINE-SECONDS OTHER... ; SKFORGE-SECONDS last
    printf '| %s |' "$1"
    shift
    local args=("$@") last=${*: -1}
    for t in "${args[@]}"; do printf ' %.2f s |' "$t"; done
    printf ' %s |\n' "$(ratio "$last" "$best")"
}

echo "makeself $(makeself --version | awk '{print $3}'), $(gzip --version | head -1), $(pigz --version 2>&1), zstd $(zstd --version | grep -o 'v[0-9.]*' | head -1), skforge $("$SKC" --version | awk '{print $2}'); $(nproc) cores; median of $REPS runs, warm cache; load before: $(cut -d' ' -f1-3 /proc/loadavg)."
for MB in $SIZES; do
    make_input "$MB"
    files=$(find tree -type f | wc -l)
    echo
    echo "### $MB MiB ($files ELF files), gzip level $GZ, zstd level $ZS"
    echo
    t_gz_pack=$(measure ':' ms gz.run --gzip --complevel "$GZ")
    t_pigz_pack=$(measure ':' ms pigz.run --pigz --complevel "$GZ")
    t_skg_pack=$(measure ':' sk skg.run --level "$GZ")
    t_zs_pack=$(measure ':' ms zs.run --zstd --threads 0 --complevel "$ZS")
    t_skz_pack=$(measure ':' sk skz.run --compress zstd --level "$ZS")
    t_gz_check=$(measure ':' sh gz.run --check)
    t_pigz_check=$(measure ':' sh pigz.run --check)
    t_skg_check=$(measure ':' sh skg.run --check)
    t_zs_check=$(measure ':' sh zs.run --check)
    t_skz_check=$(measure ':' sh skz.run --check)
    t_gz_x=$(measure 'rm -rf out' sh gz.run --noexec --target out --quiet)
    t_pigz_x=$(measure 'rm -rf out' sh pigz.run --noexec --target out --quiet)
    t_skg_x=$(measure 'rm -rf out' sh skg.run --extract=out -q)
    cmp -s out/lib/1_* tree/lib/1_* || { echo "extraction produced wrong bytes" >&2; exit 1; }
    t_zs_x=$(measure 'rm -rf out' sh zs.run --noexec --target out --quiet)
    t_skz_x=$(measure 'rm -rf out' sh skz.run --extract=out -q)
    cmp -s out/lib/1_* tree/lib/1_* || { echo "extraction produced wrong bytes" >&2; exit 1; }

    echo "| gzip | makeself --gzip | makeself --pigz | skforge | skforge / best makeself |"
    echo "|---|---|---|---|---|"
    best=$(printf '%s\n' "$t_gz_pack" "$t_pigz_pack" | sort -n | head -1)
    row pack "$t_gz_pack" "$t_pigz_pack" "$t_skg_pack"
    best=$(printf '%s\n' "$t_gz_check" "$t_pigz_check" | sort -n | head -1)
    row --check "$t_gz_check" "$t_pigz_check" "$t_skg_check"
    best=$(printf '%s\n' "$t_gz_x" "$t_pigz_x" | sort -n | head -1)
    row extract "$t_gz_x" "$t_pigz_x" "$t_skg_x"
    printf '| size | %s B | %s B | %s B | |\n' "$(stat -c %s gz.run)" "$(stat -c %s pigz.run)" "$(stat -c %s skg.run)"
    echo
    echo "| zstd | makeself --zstd --threads 0 | skforge --compress zstd | skforge / makeself |"
    echo "|---|---|---|---|"
    best=$t_zs_pack
    row pack "$t_zs_pack" "$t_skz_pack"
    best=$t_zs_check
    row --check "$t_zs_check" "$t_skz_check"
    best=$t_zs_x
    row extract "$t_zs_x" "$t_skz_x"
    printf '| size | %s B | %s B | |\n' "$(stat -c %s zs.run)" "$(stat -c %s skz.run)"
done
echo
echo "Single-core limits on the last input ($MB MiB; gzip level $GZ, zstd level $ZS):"
echo
"$W/codec_speed" "$GZ" tree/lib/* | sed -n '1,5p'
"$W/codec_speed" "$ZS" tree/lib/* | sed -n '6p'
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

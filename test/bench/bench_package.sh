#!/bin/bash
# Side-by-side benchmark of skforge's .run packages against makeself 2.4.5 (Debian's), on at least
# 256 MiB of real ELF objects copied from /usr/lib. Same compressor (gzip) and level for both.
#   test/bench/bench_package.sh [MiB] [repetitions]
# Prints a Markdown table; each number is the median wall time of the repetitions, warm cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
MB=${1:-256}
REPS=${2:-3}
LEVEL=${BENCH_LEVEL:-6}
. test/bench/common.sh
bench_build
W=$(mktemp -d "${TMPDIR:-/tmp}/skforge-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT

# The input: regular ELF files from /usr/lib until MB MiB, normalised to mode 0644.
mkdir -p "$W/tree/lib"
total=0
n=0
while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    n=$((n + 1))
    cp "$f" "$W/tree/lib/${n}_$(basename "$f")"
    total=$((total + $(stat -c %s "$f")))
    [ "$total" -ge $((MB * 1024 * 1024)) ] && break
done < <(find /usr/lib /usr/libexec /usr/bin -type f -size +16k -print0 2>/dev/null | sort -z)
chmod -R u=rwX,go=rX "$W/tree"
printf '#!/bin/sh\ntrue\n' >"$W/tree/setup.sh" && chmod 0755 "$W/tree/setup.sh"
cat "$W"/tree/lib/* >/dev/null   # warm the page cache for everyone

cd "$W"
export SOURCE_DATE_EPOCH=1700000000
ms_pack_default() { rm -f ms.run; makeself --sha256 --gzip --complevel "$LEVEL" --nox11 --quiet tree ms.run "bench" ./setup.sh; }
ms_pack_sha_only() { rm -f ms2.run; makeself --sha256 --nomd5 --nocrc --gzip --complevel "$LEVEL" --nox11 --quiet tree ms2.run "bench" ./setup.sh; }
sk_pack() { "$SKC" pack tree -o sk.run --package-version 1 --level "$LEVEL" -q; }

t_ms_pack=$(measure ':' ms_pack_default)
t_ms2_pack=$(measure ':' ms_pack_sha_only)
t_sk_pack=$(measure ':' sk_pack)
t_ms_check=$(measure ':' sh ms.run --check)
t_ms2_check=$(measure ':' sh ms2.run --check)
t_sk_check=$(measure ':' sh sk.run --check)
t_ms_extract=$(measure 'rm -rf out' sh ms.run --noexec --target out --quiet)
t_ms2_extract=$(measure 'rm -rf out' sh ms2.run --noexec --target out --quiet)
t_sk_extract=$(measure 'rm -rf out' sh sk.run --extract=out -q)

cmp -s out/lib/1_* tree/lib/1_* || { echo "extraction produced wrong bytes" >&2; exit 1; }
size_in=$(du -sb tree | cut -f1)
files=$(find tree -type f | wc -l)
ratio() { echo "scale=2; $1 / $2" | bc -l; }

echo "Input: $files files, $((size_in / 1048576)) MiB of ELF objects from /usr/lib; gzip level $LEVEL; $(nproc) cores; median of $REPS runs, warm cache."
echo "makeself $(makeself --version | awk '{print $3}'), $(gzip --version | head -1), skforge $("$SKC" --version | awk '{print $2}')."
echo
echo "| step | makeself --sha256 (defaults: +MD5 +CRC) | makeself --sha256 --nomd5 --nocrc | skforge | skforge / makeself (defaults) |"
echo "|---|---|---|---|---|"
printf '| pack | %.2f s | %.2f s | %.2f s | %s |\n' "$t_ms_pack" "$t_ms2_pack" "$t_sk_pack" "$(ratio "$t_sk_pack" "$t_ms_pack")"
printf '| --check | %.2f s | %.2f s | %.2f s | %s |\n' "$t_ms_check" "$t_ms2_check" "$t_sk_check" "$(ratio "$t_sk_check" "$t_ms_check")"
printf '| extract | %.2f s | %.2f s | %.2f s | %s |\n' "$t_ms_extract" "$t_ms2_extract" "$t_sk_extract" "$(ratio "$t_sk_extract" "$t_ms_extract")"
printf '| size | %s B | %s B | %s B | |\n' "$(stat -c %s ms.run)" "$(stat -c %s ms2.run)" "$(stat -c %s sk.run)"

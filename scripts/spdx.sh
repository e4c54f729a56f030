#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Checks (or, with --fix, adds) the SPDX license line at the top of every source file: line 1, or
# line 2 after a '#!' line. Run by scripts/test.sh beside the format check.
set -eu
cd "$(dirname "$0")/.."
tag='SPDX-License-Identifier: Apache-2.0'
fix=0
[ "${1:-}" = --fix ] && fix=1
# Source files: code, build files and scripts; data (graphs, JSON, goldens, corpora) and docs are not.
files=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' '*.cpp.in' '*.sh' '*.sh.in' '*.py' '*.bats' \
    '*.bash' '*.cmake' '*.cmake.in' 'CMakeLists.txt' '*/CMakeLists.txt' '*.yml' '.ci/run' \
    | sort -u)
bad=0
for f in $files; do
    [ -f "$f" ] || continue
    if head -n 2 "$f" | grep -q "$tag"; then
        continue
    fi
    if [ $fix = 0 ]; then
        echo "$f: no '$tag' on line 1 (or line 2 after '#!')" >&2
        bad=1
        continue
    fi
    case "$f" in
        *.cpp | *.hpp | *.h | *.c | *.cpp.in) line="// $tag" ;;
        *) line="# $tag" ;;
    esac
    tmp="$f.spdx.$$"
    if head -n 1 "$f" | grep -q '^#!'; then
        { head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } > "$tmp"
    else
        { echo "$line"; cat "$f"; } > "$tmp"
    fi
    chmod --reference="$f" "$tmp"
    mv "$tmp" "$f"
done
if [ $bad = 1 ]; then
    echo "scripts/spdx.sh --fix adds the missing lines" >&2
    exit 1
fi

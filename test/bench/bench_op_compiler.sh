#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The op_compiler front end (issue 38) against the compiler it stands in front of, side by side in
# one run, with test/cli/standin_op_compiler.py as the real op_compiler (DELAY seconds of
# "compiling" per op JSON). For each N (op JSONs, as TorchAir dumps them):
#   cold      the stand-in alone, and the front end on a miss (compile, import, store, write)
#   import    `skc import` of the stand-in's .run alone (the miss overhead's floor)
#   warm      a hit from the local store into a new result directory (a process start)
#   remote    a hit from the remote store (nginx WebDAV on 127.0.0.1), empty local store
#   partial   1 % of the op JSONs new: compile those, assemble from the store; against the
#             stand-in alone on those new op JSONs (the goal's "new operators' compile")
# Prints medians of REPS rounds (cold: one round) and the goals' ratios.
#   test/bench/bench_op_compiler.sh [N...]          (default: 200 2000)
# Environment: OP_COMPILER, SKC (default: bench_build's release build), DELAY (default 1 for
# N <= 200, else 0.05: a 2,000-op cold compile at 1 s would take half an hour), REPS (default 5).
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/bench/common.sh
if [ -z "${SKC:-}" ] || [ -z "${OP_COMPILER:-}" ]; then
    bench_build
    OP_COMPILER=$PWD/build/release/apps/op_compiler/skforge-op-compiler
fi
REPS=${REPS:-5}
SIZES=("$@")
[ "${#SIZES[@]}" -gt 0 ] || SIZES=(200 2000)
bench_workdir 4096 200000
STANDIN=$PWD/test/cli/standin_op_compiler.py
mkdir -p "$W/m" "$W/real" "$W/tk/latest"
ln -s "$OP_COMPILER" "$W/m/op_compiler"
ln -s "$STANDIN" "$W/real/op_compiler"
echo "Version=9.0.0" >"$W/tk/latest/version.info"
export ASCEND_HOME_PATH=$W/tk/latest SOURCE_DATE_EPOCH=0
FRONT="env PATH=$W/m:$W/real:$PATH op_compiler"

# The remote store: nginx's WebDAV module on 127.0.0.1.
chmod 0711 "$W"
REMOTE=$(test/cli/dav_server.sh "$W/ngx")
trap 'kill "$(cat "$W/ngx/nginx.pid")" 2>/dev/null; rm -rf "$W"' EXIT

# gen DIR N FIRST: N op JSONs of distinct shapes, shapes numbered from FIRST.
gen() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, os, sys
d, n, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
for i in range(first, first + n):
    t = {"dtype": "float16", "format": "ND", "shape": [i + 1, 16], "param_type": "required"}
    op = {"op_type": "Add", "inputs": [dict(t, name="x1", index=0), dict(t, name="x2", index=1)],
          "outputs": [dict(t, name="y", index=0)], "attrs": [], "deterministic": "false"}
    open(f"{d}/Add_float16_ND_{i + 1}_16_{i}.json", "w").write(json.dumps(op))
PY
}

# secs CMD...: the wall time of CMD in seconds (3 decimals), its output discarded.
secs() {
    local s e
    sync
    s=$(date +%s%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s%N)
    echo "scale=3; ($e - $s) / 1000000000" | bc
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "skforge-op-compiler against standin_op_compiler.py ($(nproc) cores, $W_FS, REPS=$REPS)"
for N in "${SIZES[@]}"; do
    delay=${DELAY:-$([ "$N" -le 200 ] && echo 1 || echo 0.05)}
    export STANDIN_DELAY=$delay
    rm -rf "$W/d" "$W/store"* "$W/out"* "$W/ngx/files"/*
    gen "$W/d" "$N" 0
    alone=$(secs env STANDIN_DELAY="$delay" "$STANDIN" -p "$W/d" -v Ascend910B1 -o "$W/out_alone")
    imp=$(secs "$SKC" import "$(ls "$W"/out_alone/*.run)" -o "$W/out_import.run")
    miss=$(secs env SKFORGE_OP_STORE="$W/store" SKFORGE_REMOTE_STORE="$REMOTE" $FRONT -p "$W/d" -v Ascend910B1 -o "$W/out_miss")
    warm=() remote=() partial=()
    new=$((N / 100))
    [ "$new" -ge 1 ] || new=1
    rm -rf "$W/dp" && cp -r "$W/d" "$W/dp"
    old=("$W"/dp/*.json)
    rm -- "${old[@]:0:new}"
    gen "$W/dp" "$new" "$N"
    rm -rf "$W/dn" && gen "$W/dn" "$new" "$N" # the new op JSONs alone
    newalone=()
    for r in $(seq "$REPS"); do
        newalone+=("$(secs "$STANDIN" -p "$W/dn" -v Ascend910B1 -o "$W/out_n$r")")
        warm+=("$(secs env SKFORGE_OP_STORE="$W/store" $FRONT -p "$W/d" -v Ascend910B1 -o "$W/out_w$r")")
        remote+=("$(secs env SKFORGE_OP_STORE="$W/store_r$r" SKFORGE_REMOTE_STORE="$REMOTE" $FRONT -p "$W/d" -v Ascend910B1 -o "$W/out_r$r")")
        rm -rf "$W/store_p" && cp -a "$W/store" "$W/store_p"
        partial+=("$(secs env SKFORGE_OP_STORE="$W/store_p" $FRONT -p "$W/dp" -v Ascend910B1 -o "$W/out_p$r")")
    done
    w=$(median "${warm[@]}") rm_=$(median "${remote[@]}") p=$(median "${partial[@]}")
    newc=$(median "${newalone[@]}")
    echo
    echo "N=$N op JSONs, stand-in $delay s per op JSON, package $(du -k "$(ls "$W"/out_miss/*.run)" | cut -f1) KiB"
    printf '  %-44s %8s s\n' "cold: the stand-in alone" "$alone" \
        "cold: skc import of its .run alone" "$imp" \
        "cold: the front end, miss (+ remote upload)" "$miss" \
        "warm: hit, local store (median)" "$w" \
        "warm: hit, remote store (median)" "$rm_" \
        "partial: $new new op JSONs (median)" "$p" \
        "partial: the stand-in alone on them (median)" "$newc"
    printf '  miss overhead / (stand-in + import): %s %%   (goal <= 5 %%)\n' \
        "$(echo "scale=1; 100 * ($miss - $alone - $imp) / ($alone + $imp)" | bc)"
    printf '  warm start: %s s (goal <= 0.5 s)   partial hit - new ops compile: %s s (goal <= 0.5 s;\n' \
        "$w" "$(echo "scale=3; $p - $newc" | bc)"
    printf '  minus only their %s s of DELAY, as before: %s s)\n' \
        "$(echo "scale=3; $new * $delay" | bc)" "$(echo "scale=3; $p - $new * $delay" | bc)"
done

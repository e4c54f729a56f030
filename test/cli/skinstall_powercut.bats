#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Power loss at every point of install, upgrade, repair and uninstall: powercut.cpp (preloaded)
# keeps what the file system would hold after losing every write not yet synced, cuts after the
# k-th fsync for k = 1, 2, ... until the command completes (every state a cut at any moment can
# leave), and writes that state out. Then `skinstall recover` must give exactly the before- or
# the after-state, and `verify` must pass.
load helpers

setup_file() {
    : "${POWERCUT:?POWERCUT must point to the power-cut shim (a SKFORGE_FAULT_INJECTION build)}"
}

mkpkg() {
    local d="src-$1${2:-}"
    mkdir -p "$d/soc/Add" "$d/config/soc" "$d/soc/Mul"
    printf 'kernel %s %s\n' "$1" "${2:-}" >"$d/soc/Add/add.o"
    printf 'mul %s\n' "$1" >"$d/soc/Mul/mul.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"%s/soc/Add/add.o"}]}}\n' "$1" >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1.run" --package-version "1${2:+.$2}" -q
}

# cut_every_sync CMD...: runs CMD against a copy of `start`, cut after its 1st, 2nd, ... sync
# until it completes; after each cut, recover must give `before` or `after` exactly.
cut_every_sync() {
    rm -rf after && cp -a start after
    "$@" --install-path "$W/after" -q
    local before_d after_d k=1 cuts=0 olds=0 news=0
    before_d=$(state_digest start)
    after_d=$(state_digest after)
    "$SKINSTALL" verify --install-path "$W/after" -q
    local before_verify=0
    "$SKINSTALL" verify --install-path "$W/start" -q >/dev/null 2>&1 || before_verify=$?
    [ "$before_d" != "$after_d" ]
    while :; do
        rm -rf work && cp -a start work
        set +e
        LD_PRELOAD=$POWERCUT ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
            SKFORGE_POWERCUT_ROOT="$W/work" SKFORGE_POWERCUT_AFTER=$k \
            "$@" --install-path "$W/work" -q 2>err.txt
        rc=$?
        set -e
        if [ "$rc" -ne 99 ]; then
            [ "$rc" -eq 0 ] || { cat err.txt; return 1; }
            break
        fi
        cuts=$((cuts + 1))
        "$SKINSTALL" recover --install-path "$W/work" -q 2>err.txt || {
            echo "cut after sync $k: recover failed: $(cat err.txt)"
            return 1
        }
        got=$(state_digest work)
        if [ "$got" = "$before_d" ]; then
            olds=$((olds + 1))
        elif [ "$got" = "$after_d" ]; then
            news=$((news + 1))
        else
            echo "cut after sync $k: tree is neither the before- nor the after-state"
            diff <(cd start && find . -printf '%y %m %s %p\n' | sort) \
                <(cd work && find . -printf '%y %m %s %p\n' | sort) || true
            return 1
        fi
        # verify answers as for the state it is: the after-state passes; the before-state of a
        # repair is the damaged package it had.
        local v=0 want=0
        "$SKINSTALL" verify --install-path "$W/work" -q >verify.txt 2>&1 || v=$?
        [ "$got" = "$after_d" ] || want=$before_verify
        [ "$v" -eq "$want" ] || {
            echo "cut after sync $k: verify exits $v, not $want, after recover: $(cat verify.txt)"
            return 1
        }
        k=$((k + 1))
    done
    echo "$*: cut after each of $cuts syncs: $olds recovered to the before-state, $news to the after-state" >&3
    [ "$cuts" -ge 4 ] && [ "$olds" -ge 1 ] && [ "$news" -ge 1 ]
}

@test "install: a power cut at every point recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run --install-path "$W/start" -q
    cut_every_sync "$SKINSTALL" install k1.run
}

@test "upgrade: a power cut at every point recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run k1.run --install-path "$W/start" -q
    mkpkg k1 v2
    cut_every_sync "$SKINSTALL" upgrade k1.run
}

@test "repair: a power cut at every point recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    echo changed >start/opp/static_kernel/ai_core/k1/soc/Add/add.o
    sync
    cut_every_sync "$SKINSTALL" repair k1 --from k1.run
}

@test "verify --fix: a power cut at every point recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    echo changed >start/opp/static_kernel/ai_core/k1/soc/Add/add.o
    sync
    cut_every_sync "$SKINSTALL" verify --fix
}

@test "uninstall: a power cut at every point recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    cut_every_sync "$SKINSTALL" uninstall k1
}

@test "an install and the last holder's uninstall for a process (--holder): a power cut at every point recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run --install-path "$W/start" --holder "$$" -q
    cut_every_sync "$SKINSTALL" install --holder "$$" k1.run
    rm -rf start && mv after start
    cut_every_sync "$SKINSTALL" uninstall --holder "$$" k1
}

@test "the shim keeps only what was synced: an unsynced rewrite is undone, an unsynced new file is empty" {
    mkdir -p start/d
    echo old >start/d/f
    cp -a start work
    ino=$(stat -c %i work/d/f)
    # A file rewritten in place and never synced comes back as it was; a new file in a synced
    # directory but never synced itself comes back empty.
    # One process does it all (the shim's state is per process, as skinstall is one).
    set +e
    LD_PRELOAD=$POWERCUT SKFORGE_POWERCUT_ROOT="$W/work" \
        SKFORGE_POWERCUT_AFTER=1 python3 -c '
import os, sys
d = sys.argv[1] + "/d"
open(d + "/f", "w").write("new\n")
open(d + "/g", "w").write("data\n")
fd = os.open(d, os.O_RDONLY)
os.fsync(fd)' "$W/work"
    rc=$?
    set -e
    [ "$rc" -eq 99 ]
    [ "$(cat work/d/f)" = old ]
    [ -f work/d/g ] && [ ! -s work/d/g ]
    [ "$(stat -c %i work/d/f)" = "$ino" ] # the same inode, as on a disk
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Kill skinstall at every step of install, upgrade and uninstall (SKFORGE_FAULT_AT=N ends the
# process at the N-th step with _exit, like kill -9); after `skinstall recover` the tree must be
# exactly the before- or the after-state. Then many processes at once.
load helpers

mkpkg() {
    local d="src-$1${2:-}"
    mkdir -p "$d/soc/Add" "$d/config/soc" "$d/soc/Mul"
    printf 'kernel %s %s\n' "$1" "${2:-}" >"$d/soc/Add/add.o"
    printf 'mul %s\n' "$1" >"$d/soc/Mul/mul.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"%s/soc/Add/add.o"}]}}\n' "$1" >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1.run" --package-version "1${2:+.$2}" -q
}

# crash_every_step CMD...: runs CMD with SKFORGE_FAULT_AT=1,2,... against a copy of `start`
# until it completes; after each crash, recover must give `before` or `after` exactly.
crash_every_step() {
    rm -rf after && cp -a start after
    "$@" --install-path "$W/after" -q
    local before_d after_d n=1 crashes=0
    before_d=$(state_digest start)
    after_d=$(state_digest after)
    [ "$before_d" != "$after_d" ]
    while :; do
        rm -rf work && cp -a start work
        set +e
        SKFORGE_FAULT_AT=$n "$@" --install-path "$W/work" -q 2>err.txt
        rc=$?
        set -e
        if [ "$rc" -ne 99 ]; then
            [ "$rc" -eq 0 ] || { cat err.txt; return 1; }
            break
        fi
        crashes=$((crashes + 1))
        "$SKINSTALL" recover --install-path "$W/work" -q
        got=$(state_digest work)
        if [ "$got" != "$before_d" ] && [ "$got" != "$after_d" ]; then
            echo "step $n ($(cat err.txt)): tree is neither the before- nor the after-state"
            diff <(cd start && find . | sort) <(cd work && find . | sort) || true
            return 1
        fi
        n=$((n + 1))
    done
    echo "crashed at $crashes steps" >&3
    [ "$crashes" -ge "${MIN_CRASHES:-4}" ]
}

@test "install killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run --install-path "$W/start" -q
    crash_every_step "$SKINSTALL" install k1.run
}

@test "upgrade killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run k1.run --install-path "$W/start" -q
    mkpkg k1 v2
    crash_every_step "$SKINSTALL" upgrade k1.run
}

@test "uninstall killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    crash_every_step "$SKINSTALL" uninstall k1
}

@test "an install for a process (--holder) killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run --install-path "$W/start" --holder "$$" -q
    crash_every_step "$SKINSTALL" install --holder "$$" k1.run
}

@test "the last holder's uninstall (--holder) killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install base.run k1.run --install-path "$W/start" --holder "$$" -q
    grep -q "^k1 held $$:[0-9]*$" "$W/start/opp/static_kernel/ai_core/config/static_kernel.holders"
    crash_every_step "$SKINSTALL" uninstall --holder "$$" k1
}

@test "repair (a reinstall of the same manifest) killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    echo changed >start/opp/static_kernel/ai_core/k1/soc/Add/add.o
    crash_every_step "$SKINSTALL" repair k1 --from k1.run
}

@test "verify --fix (restoring a changed file in place) killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    echo changed >start/opp/static_kernel/ai_core/k1/soc/Add/add.o
    crash_every_step "$SKINSTALL" verify --fix
    grep -qx 'install_order=k1,base' after/opp/static_kernel/ai_core/config.ini
}

@test "uninstall --force of a damaged package killed at every step recovers to before or after" {
    mkpkg base
    mkpkg k1
    mkdir start
    "$SKINSTALL" install k1.run base.run --install-path "$W/start" -q
    echo garbage >start/opp/static_kernel/ai_core/k1/manifest.json
    "$SKINSTALL" recover --install-path "$W/start" -q 2>/dev/null
    MIN_CRASHES=3 crash_every_step "$SKINSTALL" uninstall --force k1
}

@test "eight processes installing and uninstalling at once leave a consistent tree" {
    mkdir root
    for i in 1 2 3 4 5 6 7 8; do mkpkg "p$i"; done
    "$SKINSTALL" install p1.run p2.run p3.run p4.run --install-path "$W/root" -q
    pids=
    for i in 1 2 3 4; do
        "$SKINSTALL" uninstall "p$i" --install-path "$W/root" -q &
        pids="$pids $!"
    done
    for i in 5 6 7 8; do
        "$SKINSTALL" install "p$i.run" --install-path "$W/root" -q &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
    order=$(sed -n 's/^install_order=//p' root/opp/static_kernel/ai_core/config.ini | tr ',' '\n' | sort | tr '\n' ' ')
    [ "$order" = "p5 p6 p7 p8 " ]
    listed=$("$SKINSTALL" list --json --install-path "$W/root" | python3 -c 'import json,sys; print(" ".join(sorted(p["name"] for p in json.load(sys.stdin))))')
    [ "$listed" = "p5 p6 p7 p8" ]
    last=$(sed -n 's/^install_order=//p' root/opp/static_kernel/ai_core/config.ini | tr ',' '\n' | tail -n 1)
    grep -q "\"$last/soc/Add/add.o\"" root/opp/static_kernel/ai_core/config/soc/binary_info_config.json
    [ "$(ls -d root/opp/static_kernel/ai_core/p* | wc -l)" -eq 4 ]
    [ -z "$(ls -A root/opp/static_kernel/ai_core | grep '^\.skforge')" ]
    "$SKINSTALL" verify --install-path "$W/root" -q
}

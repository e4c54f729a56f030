#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Issue 13's installer and package items, driven through the real executables: every refusal
# names the file and the reason, and the tree (and everything outside it) is unchanged after.
load helpers

ai() { echo "$W/root/opp/static_kernel/ai_core"; }

# mkpkg NAME: a package with one kernel and a valid static-kernel index.
mkpkg() {
    local d="src-$1"
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s\n' "$1" >"$d/soc/Add/add.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"%s/soc/Add/add.o"}]}}\n' "$1" \
        >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1.run" --package-version 1 -q
}

@test "trojaned scripts: inspect --verify, skinstall and the stub refuse them" {
    mkpkg k1
    printf '#!/bin/sh\necho pwned >"$HOME/pwned"\n' >evil.sh
    # Consistent all the way up to the header: only a comparison with the rendering catches it.
    mkdir -p t1 t2
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" k1.run t1/k1.run uninstall.sh evil.sh --fix-header-scripts
    run "$SKC" inspect t1/k1.run --verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"Verify scripts:"*"uninstall.sh differs from the script skforge generates"* ]]
    [[ "$output" == *"Verify stub:"*"ok"* ]]
    [[ "$output" == *"Verify payload_digest:"*"ok"* ]]
    mkdir root
    run "$SKINSTALL" install t1/k1.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"t1/k1.run"*"uninstall.sh differs"* ]]
    [ -z "$(ls -A root)" ]
    # The payload's install.sh edited but the header left alone: the stub will not run it.
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" k1.run t2/k1.run install.sh evil.sh
    HOME=$W run sh t2/k1.run --install-path="$W/root"
    [ "$status" -eq 2 ]
    [[ "$output" == *"install.sh in 't2/k1.run' is not the script this package declares"* ]]
    [ ! -e "$W/pwned" ]
    [ -z "$(ls -A root)" ]
    # The untouched package installs with only sh.
    run sh k1.run --install-path="$W/root" -q
    [ "$status" -eq 0 ]
}

@test "--trusted-key alone requires a valid signature, in skinstall as in inspect" {
    mkpkg k1
    "$SKC" keygen -o key >/dev/null
    mkdir root
    run "$SKINSTALL" install k1.run --trusted-key key.pub.pem --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"k1.run: the package is not signed, and a signature by a trusted key is required"* ]]
    [ -z "$(ls -A root)" ]
    run "$SKC" inspect k1.run --trusted-key key.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"not signed, and a signature by a trusted key is required"* ]]
    "$SKC" pack src-k1 -o k1.run --package-version 1 --sign-key key.pem -q
    run "$SKINSTALL" install k1.run --trusted-key key.pub.pem --install-path "$W/root" -q
    [ "$status" -eq 0 ]
}

@test "reserved package and SoC directory names are refused at pack" {
    make_tree tree
    for name in config config.ini uninstall.sh version.info log; do
        run "$SKC" pack tree -o "$name.run" --package-version 1
        [ "$status" -ne 0 ]
        [[ "$output" == *"is reserved"* ]]
        [ ! -e "$name.run" ]
    done
    mkdir -p tree/config/static_kernel.lock
    printf '{}\n' >tree/config/static_kernel.lock/binary_info_config.json
    run "$SKC" pack tree -o ok.run --package-version 1
    [ "$status" -ne 0 ]
    [[ "$output" == *"SoC directory 'config/static_kernel.lock'"* ]]
    [ ! -e ok.run ]
}

@test "index entries that escape, and deep JSON, are refused at pack with the file named" {
    make_tree tree
    idx=tree/config/ascend910b/binary_info_config.json
    printf '{"AddCustom":{"staticList":[{"binPath":"../../../../etc/shadow"}]}}\n' >"$idx"
    run "$SKC" pack tree -o kp.run --package-version 1
    [ "$status" -ne 0 ]
    [[ "$output" == *"$idx' is not a valid static-kernel index"*"binPath '../../../../etc/shadow' has a '..' component"* ]]
    # (Without --name, an index whose binPaths all name 'other' packs as 'other': newcomer.bats.)
    printf '{"AddCustom":{"staticList":[{"binPath":"other/ascend910b/AddCustom/AddCustom_1.o"}]}}\n' >"$idx"
    run "$SKC" pack tree -o kp.run --package-version 1 --name kp
    [[ "$output" == *"outside the package (it must start with 'kp/')"* ]]
    python3 -c 'print("{\"A\":" + "[" * 5000 + "]" * 5000 + "}")' >"$idx"
    run "$SKC" pack tree -o kp.run --package-version 1
    [ "$status" -ne 0 ]
    [[ "$output" == *"nests arrays and objects more than 64 deep"* ]]
    printf '{"AddCustom":{"staticList":[{"binPath":"kp/ascend910b/AddCustom/AddCustom_1.o"}]}}\n' >"$idx"
    "$SKC" pack tree -o kp.run --package-version 1 -q
}

@test "a package deeper than 32 directories is refused at pack" {
    make_tree tree
    mkdir -p "tree/$(printf 'd/%.0s' $(seq 1 40))"
    run "$SKC" pack tree -o deep.run --package-version 1
    [ "$status" -ne 0 ]
    [[ "$output" == *"has more than 32 components"* ]]
}

@test "a FIFO where config.ini or the journal should be is refused, not waited on" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    rm "$(ai)/config.ini"
    mkfifo "$(ai)/config.ini"
    for cmd in list verify recover "uninstall k1"; do
        run timeout 20 "$SKINSTALL" $cmd --install-path "$W/root"
        [ "$status" -eq 1 ]
        [[ "$output" == *"$(ai)/config.ini': not a regular file"* ]]
    done
    rm "$(ai)/config.ini"
    mkfifo "$(ai)/.skforge-journal"
    run timeout 20 "$SKINSTALL" recover --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *".skforge-journal': not a regular file"* ]]
}

@test "temporaries left by kill -9 are reported by verify and removed by recover" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    printf '{' >"$(ai)/config/soc/.binary_info_config.json.tmp.4242"
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"tree: config/soc/.binary_info_config.json.tmp.4242: unexpected: a temporary file left by a killed process"* ]]
    run "$SKINSTALL" verify --install-path "$W/root" --json
    [ "$status" -eq 1 ]
    run "$SKINSTALL" recover --install-path "$W/root"
    [ "$status" -eq 0 ]
    [ ! -e "$(ai)/config/soc/.binary_info_config.json.tmp.4242" ]
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
}

@test "list and verify work for an unprivileged user who cannot write the tree" {
    [ "$(id -u)" = 0 ] || skip "needs root to switch users"
    command -v setpriv >/dev/null || skip "setpriv is not installed"
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    chmod 755 "$W"
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    as_nobody test -x "$SKINSTALL" || skip "the build tree is not reachable by nobody"
    run as_nobody "$SKINSTALL" list --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"k1 "* ]]
    run as_nobody "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
    run as_nobody "$SKINSTALL" uninstall k1 --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"'$(ai)' belongs to user root (uid 0) and group root (gid 0)"*"who may not write it"* ]]
    [ -d "$(ai)/k1" ]
}

@test "list and verify work on a read-only bind mount" {
    [ "$(id -u)" = 0 ] || skip "needs root to mount"
    mkpkg k1
    mkdir root ro
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    mount --bind root ro 2>/dev/null || skip "bind mounts are not allowed here"
    if ! mount -o remount,bind,ro ro 2>/dev/null; then
        umount ro
        skip "read-only remounts are not allowed here"
    fi
    run "$SKINSTALL" list --install-path "$W/ro"
    rc1=$status
    run "$SKINSTALL" verify --install-path "$W/ro"
    rc2=$status
    umount ro
    [ "$rc1" -eq 0 ]
    [ "$rc2" -eq 0 ]
}

@test "a package skinstall installed is removed whole by its own uninstall.sh (only sh)" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    [ -f "$(ai)/k1/.skforge-installed.json" ]
    SKFORGE_NO_SKINSTALL=1 run sh "$(ai)/k1/uninstall.sh" --operator --install-path="$W/root"
    [ "$status" -eq 0 ]
    [ ! -e "$(ai)/k1" ]
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
}

@test "an install path with '.o' in it gets a warning: CANN's runtime would miss the kernels' JSON" {
    mkpkg k1
    mkdir root.old
    run "$SKINSTALL" install k1.run --install-path "$W/root.old"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: the install path '$W/root.old' contains \".o\": CANN's runtime cuts"* ]]
    mkdir root
    run "$SKINSTALL" install k1.run --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" != *"contains \".o\""* ]]
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skinstall driven as operators drive it, on real packages in a scratch install root.
load helpers

setup_file() { :; }

ai() { echo "$W/root/opp/static_kernel/ai_core"; }

# mkpkg NAME [VERSION-SALT]: a package with one kernel and its index.
mkpkg() {
    local d="src-$1${2:-}"
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s %s\n' "$1" "${2:-}" >"$d/soc/Add/add_$1.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/%s","binPath":"%s/soc/Add/add_%s.o"}]}}\n' "${3:-shared}" "$1" "$1" \
        >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1.run" --package-version "1${2:+.$2}" -q
}

@test "install prints the uninstall.sh path and list shows the package" {
    mkpkg k1
    mkdir root
    run "$SKINSTALL" install k1.run --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"uninstall with: $W/root/opp/static_kernel/ai_core/k1/uninstall.sh"* ]]
    run "$SKINSTALL" list --install-path "$W/root" --json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | python3 -c 'import json,sys; print([p["name"] for p in json.load(sys.stdin)])')" = "['k1']" ]
    [ "$(stat -c %a "$(ai)/k1")" = 755 ]
    [ "$(stat -c %a "$(ai)/k1/soc/Add/add_k1.o")" = 644 ]
    [ "$(stat -c %U "$(ai)/k1/soc/Add/add_k1.o")" = "$(id -un)" ]
}

@test "ASCEND_HOME_PATH is the default install path; neither is a usage error" {
    mkpkg k1
    mkdir root
    ASCEND_HOME_PATH="$W/root" run "$SKINSTALL" install k1.run
    [ "$status" -eq 0 ]
    run env -u ASCEND_HOME_PATH "$SKINSTALL" list
    [ "$status" -eq 2 ]
    [[ "$output" == *"no install path"* ]]
}

@test "reinstall is 'already installed'; a different version points to upgrade" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    run "$SKINSTALL" install k1.run --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"already installed"* ]]
    mkpkg k1 v2
    before=$(tree_digest root)
    run "$SKINSTALL" install k1.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"use 'skinstall upgrade'"* ]]
    [ "$(tree_digest root)" = "$before" ]
    run "$SKINSTALL" upgrade k1.run --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"upgraded k1 1.v2"* ]]
    grep -q 'kernel k1 v2' "$(ai)/k1/soc/Add/add_k1.o"
}

@test "the later install wins in the index and uninstall makes the earlier one visible again" {
    mkpkg a
    mkpkg b
    mkdir root
    "$SKINSTALL" install a.run b.run --install-path "$W/root" -q
    idx="$(ai)/config/soc/binary_info_config.json"
    grep -q '"b/soc/Add/add_b.o"' "$idx"
    ! grep -q '"a/soc/Add/add_a.o"' "$idx"
    grep -qx 'install_order=a,b' "$(ai)/config.ini"
    "$SKINSTALL" uninstall b --install-path "$W/root" -q
    grep -q '"a/soc/Add/add_a.o"' "$idx"
    grep -qx 'install_order=a' "$(ai)/config.ini"
}

@test "verify reports changed, missing and extra files like rpm -V" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"verified 1 package(s)"*"0 problem(s)"* ]]
    echo x >>"$(ai)/k1/soc/Add/add_k1.o"
    rm "$(ai)/k1/version.info"
    chmod 0600 "$(ai)/k1/install.sh"
    touch "$(ai)/k1/soc/extra"
    run "$SKINSTALL" verify k1 --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"k1: soc/Add/add_k1.o: changed size"* ]]
    [[ "$output" == *"k1: version.info: missing"* ]]
    [[ "$output" == *"k1: install.sh: changed mode: 0600, expected 0755"* ]]
    [[ "$output" == *"k1: soc/extra: not installed by this package"* ]]
    run "$SKINSTALL" verify --json --install-path "$W/root"
    [ "$status" -eq 1 ]
    echo "$output" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert not d[0]["ok"] and len(d[0]["problems"])==4'
}

@test "verify catches a file replaced by a symlink and never follows it" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    rm "$(ai)/k1/version.info"
    ln -s /etc/shadow "$(ai)/k1/version.info"
    run "$SKINSTALL" verify k1 --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"version.info: changed type"* ]]
}

@test "uninstall needs --force for changed files and keeps files it did not install" {
    mkpkg k1
    mkdir root
    "$SKINSTALL" install k1.run --install-path "$W/root" -q
    echo changed >"$(ai)/k1/soc/Add/add_k1.o"
    before=$(tree_digest root)
    run "$SKINSTALL" uninstall k1 --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to uninstall k1"*"--force"*"soc/Add/add_k1.o"* ]]
    [ "$(tree_digest root)" = "$before" ]
    run "$SKINSTALL" uninstall k1 --force --install-path "$W/root"
    [ "$status" -eq 0 ]
    [ ! -e "$(ai)/k1" ]
    [ ! -e "$(ai)/uninstall.sh" ]
}

@test "uninstall --all removes everything, newest first" {
    mkpkg a
    mkpkg b
    mkdir root
    "$SKINSTALL" install a.run b.run --install-path "$W/root" -q
    run "$SKINSTALL" uninstall --all --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"uninstalled b"*"uninstalled a"* ]]
    [ "$(ls -A "$(ai)")" = "$(printf 'config\nconfig.ini\nlog')" ]
    run "$SKINSTALL" list --install-path "$W/root"
    [[ "$output" == *"no static-kernel packages installed"* ]]
}

@test "the package's scripts hand over to skinstall when it is on PATH" {
    mkpkg k1
    mkdir root bin
    ln -s "$SKINSTALL" bin/skinstall
    PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 run sh k1.run --install-path="$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"installed k1 1 into"* ]]
    [ -f "$(ai)/config/soc/binary_info_config.json" ]
    PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 run sh "$(ai)/k1/uninstall.sh"
    [ "$status" -eq 0 ]
    [[ "$output" == *"uninstalled k1"* ]]
    [ ! -e "$(ai)/k1" ]
}

@test "after a shell-only install, any skinstall command makes config.ini, the index and list agree" {
    mkpkg a
    mkpkg b
    mkdir root
    sh a.run --install-path="$W/root" -q
    sh b.run --install-path="$W/root" -q
    grep -qx 'install_order=a,b' "$(ai)/config.ini"
    "$SKINSTALL" recover --install-path "$W/root" -q
    grep -q '"b/soc/Add/add_b.o"' "$(ai)/config/soc/binary_info_config.json"
    run "$SKINSTALL" list --install-path "$W/root"
    [[ "$output" == *"a "*"b "* ]]
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
}

@test "--require-signature refuses unsigned and foreign packages before writing" {
    mkpkg k1
    "$SKC" keygen -o key >/dev/null
    mkdir root
    run "$SKINSTALL" install k1.run --require-signature --trusted-key key.pub.pem --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"not signed"* ]]
    [ -z "$(ls -A root)" ]
    run "$SKINSTALL" install k1.run --require-signature --install-path "$W/root"
    [ "$status" -eq 2 ]
    "$SKC" pack src-k1 -o k1.run --package-version 1 --sign-key key.pem -q
    run "$SKINSTALL" install k1.run --require-signature --trusted-key key.pub.pem --install-path "$W/root"
    [ "$status" -eq 0 ]
}

@test "one bad package among several installs nothing" {
    mkpkg a
    mkpkg b
    mkdir root
    "$SKINSTALL" install a.run --install-path "$W/root" -q
    before=$(tree_digest root)
    printf 'x' >>b.run
    mkpkg c
    run "$SKINSTALL" install c.run b.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"b.run"*"unexpected bytes"* ]]
    [ "$(tree_digest root)" = "$before" ]
}

@test "usage errors exit 2" {
    run "$SKINSTALL"
    [ "$status" -eq 2 ]
    run "$SKINSTALL" install --install-path "$W"
    [ "$status" -eq 2 ]
    run "$SKINSTALL" uninstall --install-path "$W"
    [ "$status" -eq 2 ]
    run "$SKINSTALL" bogus
    [ "$status" -eq 2 ]
    run "$SKINSTALL" list --frobnicate
    [ "$status" -eq 2 ]
}

@test "without openat2 the component walk refuses planted symlinks the same way" {
    mkpkg base
    mkpkg k1
    mkdir root victim
    SKFORGE_NO_OPENAT2=1 "$SKINSTALL" install base.run --install-path "$W/root" -q
    ln -s "$W/victim" "$(ai)/k1"
    before=$(tree_digest root)
    SKFORGE_NO_OPENAT2=1 run "$SKINSTALL" install k1.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"ai_core/k1': it is a symbolic link"* ]]
    [ "$(tree_digest root)" = "$before" ]
    [ -z "$(ls -A victim)" ]
    rm "$(ai)/k1"
    mv "$(ai)/base/soc" victim/soc
    ln -s "$W/victim/soc" "$(ai)/base/soc"
    SKFORGE_NO_OPENAT2=1 run "$SKINSTALL" verify base --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"base: soc/Add/add_base.o: changed type"* ]]
}

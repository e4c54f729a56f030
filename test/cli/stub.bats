#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The .run file itself, run by sh as an operator would, with no skforge on the host.
load helpers

@test "--help prints usage and exits 0" {
    pack_tree p
    run sh p.run --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"Usage: sh p.run"*"--install-path PATH"* ]]
}

@test "--version prints the package version" {
    pack_tree p
    run sh p.run --version
    [ "$status" -eq 0 ]
    [ "$output" = 1.2.3 ]
}

@test "--info reads only the header" {
    pack_tree p
    run sh p.run --info
    [ "$status" -eq 0 ]
    [[ "$output" == *"Name:            p"* ]]
    [[ "$output" == *"SoC version:     Ascend910B1"* ]]
    [[ "$output" == *"Signed:          no"* ]]
}

@test "--check prints the makeself-style success line" {
    pack_tree p
    run sh p.run --check
    [ "$status" -eq 0 ]
    [ "$output" = "Verifying archive integrity... SHA256 checksums are OK. All good." ]
}

@test "./x.run works as well as sh x.run" {
    pack_tree p
    run ./p.run --check
    [ "$status" -eq 0 ]
}

@test "--list lists the payload" {
    pack_tree p
    run sh p.run --list
    [ "$status" -eq 0 ]
    [[ "$output" == *"manifest.json"* ]]
    [[ "$output" == *"ascend910b/AddCustom/AddCustom_1.o"* ]]
    [[ "$output" == *"uninstall.sh"* ]]
}

@test "--extract=DIR extracts every file intact and runs nothing" {
    pack_tree p
    run sh p.run --extract=out
    [ "$status" -eq 0 ]
    cmp out/ascend910b/AddCustom/AddCustom_1.o tree/ascend910b/AddCustom/AddCustom_1.o
    cmp out/tool.sh tree/tool.sh
    [ -f out/manifest.json ]
    [ ! -e opp ]
}

@test "--noexec extracts into ./NAME" {
    pack_tree p
    run sh p.run --noexec -q
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    cmp p/tool.sh tree/tool.sh
}

@test "unknown and conflicting flags print usage and exit 2" {
    pack_tree p
    run sh p.run --bogus
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown option '--bogus'"*"Try 'sh p.run --help'."* ]]
    run sh p.run --check --install
    [ "$status" -eq 2 ]
    [[ "$output" == *"cannot be combined"* ]]
    run sh p.run --extract=
    [ "$status" -eq 2 ]
}

@test "a flipped payload byte fails with exit 2 and extracts nothing" {
    pack_tree p
    off=$(header_value p.run PAYLOAD_OFFSET)
    size=$(header_value p.run PAYLOAD_SIZE)
    for at in "$off" $((off + size / 2)) $((off + size - 1)); do
        cp p.run bad.run
        flip_byte bad.run "$at"
        run sh bad.run --check
        [ "$status" -eq 2 ]
        [[ "$output" == *"payload SHA-256 mismatch"* ]]
        run sh bad.run --extract=x
        [ "$status" -eq 2 ]
        [ ! -e x ]
    done
}

@test "a truncated package fails with exit 2" {
    pack_tree p
    head -c $(($(wc -c <p.run) - 1)) p.run >t.run
    run sh t.run --check
    [ "$status" -eq 2 ]
    [[ "$output" == *"is truncated"* ]]
}

@test "bytes appended after the declared end fail with exit 2" {
    pack_tree p
    cp p.run a.run
    printf 'x' >>a.run
    run sh a.run --check
    [ "$status" -eq 2 ]
    [[ "$output" == *"1 unexpected bytes after its declared end"* ]]
    run sh a.run --install-path="$W"
    [ "$status" -eq 2 ]
    [ ! -e "$W/opp" ]
}

@test "temporary files go under TMPDIR, private, and are removed on success and failure" {
    pack_tree p
    mkdir tmp
    TMPDIR=$W/tmp sh p.run --list >/dev/null
    [ -z "$(ls -A tmp)" ]
    cp p.run bad.run
    flip_byte bad.run $(($(wc -c <bad.run) - 3))
    run env TMPDIR="$W/tmp" sh bad.run --extract=x
    [ "$status" -eq 2 ]
    [ -z "$(ls -A tmp)" ]
    grep -q 'mktemp -d "${TMPDIR:-/tmp}/skforge.XXXXXXXXXX"' p.run
    grep -q '^umask 077' p.run
}

@test "an interrupted run removes its temporary directory" {
    pack_tree p
    mkdir tmp bin
    # A tar that stalls lets the test interrupt the stub while it extracts.
    # It records its pid, so the test stops it alone (a pkill by name would also stop another
    # test's process).
    printf '#!/bin/sh\necho $$ >"%s/tar.pid"\nexec sleep 30\n' "$W" >bin/tar && chmod +x bin/tar
    PATH=$W/bin:$PATH TMPDIR=$W/tmp sh p.run --extract=x &
    pid=$!
    for _ in $(seq 1 100); do [ -n "$(ls -A tmp)" ] && [ -f tmp/*/payload ] && break; sleep 0.05; done
    [ -n "$(ls -A tmp)" ]
    kill -TERM "$pid"
    wait "$pid" || status=$?
    [ "${status:-0}" -eq 143 ]
    [ ! -s tar.pid ] || kill "$(cat tar.pid)" 2>/dev/null || true
    [ -z "$(ls -A tmp)" ]
}

@test "a zstd package says what to install when zstd is missing" {
    pack_tree z --compress zstd
    mkdir bin
    for t in sh tail head sha256sum wc mktemp rm mkdir cat tar gzip dirname basename; do
        ln -s "$(command -v $t)" bin/$t
    done
    run env PATH="$W/bin" sh z.run --extract=x
    [ "$status" -eq 1 ]
    [[ "$output" == *"zstd-compressed and 'zstd' is not installed"*"apt-get install zstd"* ]]
}

@test "install, reinstall, upgrade and uninstall through the package's own scripts" {
    pack_tree kern
    mkdir root
    run env ASCEND_HOME_PATH="$W/root" sh kern.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"Uninstall with: $W/root/opp/static_kernel/ai_core/kern/uninstall.sh"* ]]
    pkg=root/opp/static_kernel/ai_core/kern
    cmp $pkg/ascend910b/AddCustom/AddCustom_1.o tree/ascend910b/AddCustom/AddCustom_1.o
    [ "$(stat -c %a $pkg/tool.sh)" = 755 ]
    [ "$(stat -c %a $pkg/version.info)" = 644 ]
    grep -qx 'install_order=kern' root/opp/static_kernel/ai_core/config.ini
    run sh kern.run --install-path="$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"already installed"* ]]
    echo more >>tree/tool.sh
    pack_tree kern
    run sh kern.run --install-path="$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"kern 1.2.3 is already installed in '$W/$pkg' with different content; use --reinstall"* ]]
    # The same version's other files: not an upgrade (skinstall's rule), a reinstall.
    run sh kern.run --upgrade --install-path="$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"under the same version; replacing it needs --reinstall"* ]]
    run sh kern.run --reinstall --install-path="$W/root"
    [ "$status" -eq 0 ]
    cmp $pkg/tool.sh tree/tool.sh
    "$SKC" pack tree -o kern.run --package-version 1.3 --npu-arch dav-2201 --soc Ascend910B1 -q
    run sh kern.run --upgrade --install-path="$W/root"
    [ "$status" -eq 0 ]
    run sh kern.run --uninstall --install-path="$W/root"
    [ "$status" -eq 0 ]
    [ ! -e $pkg ]
    grep -qx 'install_order=' root/opp/static_kernel/ai_core/config.ini
}

@test "the package's install.sh refuses a planted symlink under ai_core" {
    pack_tree kern
    mkdir -p root/opp/static_kernel/ai_core victim
    ln -s "$W/victim" root/opp/static_kernel/ai_core/kern
    run sh kern.run --install-path="$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing symlink"*"ai_core/kern'"* ]]
    [ -z "$(ls -A victim)" ]
    rm root/opp/static_kernel/ai_core/kern
    rm -r root/opp/static_kernel/ai_core
    ln -s "$W/victim" root/opp/static_kernel/ai_core
    run sh kern.run --install-path="$W/root"
    [ "$status" -eq 1 ]
    [ -z "$(ls -A victim)" ]
}

@test "install without an install path is a usage error" {
    pack_tree kern
    run env -u ASCEND_HOME_PATH sh kern.run
    [ "$status" -eq 2 ]
    [[ "$output" == *"no install path"* ]]
}

@test "the shell scripts match package names literally in config.ini" {
    make_tree tree
    "$SKC" pack tree -o k.1.run --package-version 1 -q
    "$SKC" pack tree -o kx1.run --package-version 1 -q
    mkdir root
    sh kx1.run --install-path="$W/root" -q
    sh k.1.run --install-path="$W/root" -q
    grep -qx 'install_order=kx1,k.1' root/opp/static_kernel/ai_core/config.ini
    sh root/opp/static_kernel/ai_core/k.1/uninstall.sh -q
    grep -qx 'install_order=kx1' root/opp/static_kernel/ai_core/config.ini
    [ -d root/opp/static_kernel/ai_core/kx1 ]
}

# ---- the command line operators type (issue 14, item 7) ----

@test "valued options take '=VALUE' or the next word: --install-path, --extract, --target" {
    pack_tree kern
    mkdir r1 r2
    run sh kern.run --install-path "$W/r1" -q
    [ "$status" -eq 0 ]
    run sh kern.run --install-path="$W/r2" -q
    [ "$status" -eq 0 ]
    [ -f r1/opp/static_kernel/ai_core/kern/manifest.json ]
    [ "$(tree_digest r1)" = "$(tree_digest r2)" ]
    sh kern.run --extract e1 -q
    sh kern.run --extract=e2 -q
    # makeself's --target DIR: here it extracts into DIR and runs nothing, like --extract DIR.
    run sh kern.run --target e3
    [ "$status" -eq 0 ]
    [[ "$output" == *"Extracted kern 1.2.3 into e3"* ]]
    [ "$(tree_digest e1)" = "$(tree_digest e2)" ]
    [ "$(tree_digest e1)" = "$(tree_digest e3)" ]
    [ ! -e e3/opp ]
    run sh kern.run --install-path
    [ "$status" -eq 2 ]
    [[ "$output" == *"--install-path needs a directory: --install-path DIR (or --install-path=DIR)"* ]]
}

@test "CANN's and makeself's flags: --full, --run, --nox11, --noprogress, --nochown, --quiet install" {
    pack_tree kern
    mkdir root
    run sh kern.run --nox11 --noprogress --nochown --nodiskspace --full --quiet --install-path "$W/root"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
    [ -f root/opp/static_kernel/ai_core/kern/manifest.json ]
    run sh kern.run --run --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"already installed"* ]]
    run sh kern.run --full --uninstall --install-path "$W/root"
    [ "$status" -eq 2 ]
    [[ "$output" == *"--install and --uninstall cannot be combined"* ]]
}

@test "flags that mean nothing for a static-kernel package are refused with what to use instead" {
    pack_tree kern
    mkdir root
    sh kern.run --install-path "$W/root" -q
    before=$(tree_digest root)
    check() { # check WANT ARGS...: exit 2, the message names WANT, nothing changed
        local want=$1
        shift
        run sh kern.run "$@" --install-path "$W/root"
        [ "$status" -eq 2 ]
        [[ "$output" == *"kern.run: ERROR: "*"$want"* ]]
        [[ "$output" == *"Try 'sh kern.run --help'."* ]]
        [ "$(tree_digest root)" = "$before" ]
    }
    check "--keep: an install never keeps its temporary extraction; use --extract DIR" --keep
    check "--devel: a static-kernel package has no development part; --install (or --full)" --devel
    check "install into the container's toolkit with --install-path <docker root>/<toolkit path>" --docker-root=/c
    check "--feature: a static-kernel package is built for one SoC (see --info)" --feature=all
    check "--chip: a static-kernel package is built for one SoC" --chip=ascend910b
    check "--setenv: a static-kernel package sets no environment" --setenv
    check "--pre-check: use --check (integrity) and --info" --pre-check
    check "unknown option '--bogus'" --bogus
    check "unexpected argument 'extra'" extra
    check "--force applies only to --uninstall" --force
    check "--install-for-all applies only to --install, --upgrade and --reinstall" --uninstall --install-for-all
    [ ! -e kern ]
}

@test "'~' after '=' is explained, not taken for a directory called '~'" {
    pack_tree kern
    run sh kern.run '--install-path=~/toolkit'
    [ "$status" -eq 2 ]
    [[ "$output" == *"--install-path=~/toolkit: the shell did not expand '~' (it does not after '='), so this names a directory literally called '~'; write --install-path ~/toolkit (two words) or --install-path=\$HOME/toolkit"* ]]
    run sh kern.run '--extract=~/x'
    [ "$status" -eq 2 ]
    [[ "$output" == *"did not expand '~'"* ]]
    [ ! -e '~' ]
    # skinstall explains it the same way.
    run "$SKINSTALL" install kern.run '--install-path=~/toolkit'
    [ "$status" -eq 2 ]
    [[ "$output" == *"'--install-path=~/toolkit'"*"the shell does not expand ~ after '='; write --install-path ~/toolkit or the full path"* ]]
    [ ! -e '~' ]
}

@test "--uninstall --force removes changed files; without it the change is named and kept" {
    pack_tree kern
    mkdir root
    sh kern.run --install-path "$W/root" -q
    pkg=root/opp/static_kernel/ai_core/kern
    echo edited >>$pkg/tool.sh
    run sh kern.run --uninstall --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"use --force"*"tool.sh (content differs from the manifest)"* ]]
    [ -f $pkg/tool.sh ]
    run sh kern.run --uninstall --force --install-path "$W/root"
    [ "$status" -eq 0 ]
    [ ! -e $pkg ]
}

@test "stub errors name the file, the reason and what to do" {
    pack_tree kern
    head -c -10 kern.run >short.run
    run sh short.run --check
    [ "$status" -eq 2 ]
    [[ "$output" == *"'short.run' is truncated"*"copy or download it again"* ]]
    mkdir root
    run env TMPDIR="$W/missing" sh kern.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot create a private directory in '$W/missing': set TMPDIR to a directory you may write"* ]]
    [ ! -e root/opp ]
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# cleanup-from-log: the safe uninstall CI runs after a compile job.
load helpers

mkpkg() {
    mkdir -p "src-$1/soc"
    printf 'kernel %s\n' "$1" >"src-$1/soc/k.o"
    "$SKC" pack "src-$1" -o "outputs/$1.run" --package-version 1 -q
}

setup_installed() {
    mkdir -p outputs real/8.0 victim
    ln -s real/8.0 latest
    mkpkg k1
    mkpkg k2
    "$SKINSTALL" install outputs/k1.run outputs/k2.run --install-path "$W/latest" -q
    AI="$W/latest/opp/static_kernel/ai_core"
}

@test "uninstalls exactly the packages whose .run is in the outputs, by either path form" {
    setup_installed
    rm outputs/k2.run
    cat >job.log <<EOF
compiling...
Uninstall with: $AI/k1/uninstall.sh
also: $W/real/8.0/opp/static_kernel/ai_core/k1/uninstall.sh
and: $AI/k2/uninstall.sh
EOF
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [[ "$output" == *"uninstalled k1"* ]]
    [[ "$output" == *"WARN: refusing unrelated or redirected uninstall script: $AI/k2/uninstall.sh"* ]]
    [ ! -e "$AI/k1" ]
    [ -d "$AI/k2" ]
}

@test "refuses '..', look-alike, unrelated and foreign-root paths without aborting" {
    setup_installed
    cat >job.log <<EOF
$AI/k1/../k2/uninstall.sh
$AI/k10/uninstall.sh
$AI/k1/sub/uninstall.sh
/tmp/elsewhere/opp/static_kernel/ai_core/k1/uninstall.sh
$W/latest//opp/static_kernel/ai_core/k1/uninstall.sh
$AI/k2/uninstall.sh
EOF
    before=$(tree_digest real)
    rm outputs/k2.run
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | grep -c 'WARN: refusing unrelated or redirected uninstall script')" -eq 6 ]
    [ "$(tree_digest real)" = "$before" ]
}

@test "refuses a symlinked package directory or uninstall.sh" {
    setup_installed
    mv "$AI/k1" victim/k1
    ln -s "$W/victim/k1" "$AI/k1"
    echo "$AI/k1/uninstall.sh" >job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: refusing unrelated or redirected uninstall script: $AI/k1/uninstall.sh"* ]]
    [ -f victim/k1/manifest.json ]
    rm "$AI/k1" && mv victim/k1 "$AI/k1"
    mv "$AI/k2/uninstall.sh" victim/u.sh
    ln -s "$W/victim/u.sh" "$AI/k2/uninstall.sh"
    echo "$AI/k2/uninstall.sh" >job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [[ "$output" == *"WARN: refusing unrelated or redirected uninstall script: $AI/k2/uninstall.sh"* ]]
    [ -d "$AI/k2" ]
}

@test "a failed uninstall warns and the cleanup goes on" {
    setup_installed
    echo changed >"$AI/k1/soc/k.o"
    printf '%s\n%s\n' "$AI/k1/uninstall.sh" "$AI/k2/uninstall.sh" >job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: uninstall of k1 failed"* ]]
    [[ "$output" == *"uninstalled k2"* ]]
    [ -d "$AI/k1" ]
    [ ! -e "$AI/k2" ]
}

@test "never runs the script it names" {
    setup_installed
    printf '#!/bin/sh\ntouch %s/RAN\n' "$W" >"$AI/k1/uninstall.sh"
    echo "$AI/k1/uninstall.sh" >job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest" --force
    [ "$status" -eq 0 ]
    [ ! -e RAN ]
    [ ! -e "$AI/k1" ]
}

@test "usage: LOG and --outputs are required" {
    run "$SKINSTALL" cleanup-from-log --install-path "$W"
    [ "$status" -eq 2 ]
}

# ---- cleanup-from-log as a CI job uses it (issue 14, item 9) ----

@test "a job that installs with a relative --install-path logs the absolute path; cleanup finds it" {
    mkdir -p outputs job real/8.0
    ln -s real/8.0 latest
    mkpkg k1
    mkpkg k2
    # The job installs into the relative 'latest': skinstall for k1 (the path as given, made
    # absolute), the .run's own install.sh (no skinstall on the host) for k2 (its physical path).
    "$SKINSTALL" install outputs/k1.run --install-path latest >job.log 2>&1
    (cd job && sh ../outputs/k2.run --install-path ../latest) >>job.log 2>&1
    grep -qx "uninstall with: $W/latest/opp/static_kernel/ai_core/k1/uninstall.sh" job.log
    grep -qx "Uninstall with: $W/real/8.0/opp/static_kernel/ai_core/k2/uninstall.sh" job.log
    # A relative path with '..' is printed resolved: it cannot be joined without resolving.
    (cd job && "$SKINSTALL" list --install-path ../latest --json) | grep -q "\"$W/real/8.0/opp/static_kernel/ai_core/k1\""
    # The cleanup step runs elsewhere, with the same relative path from its own directory.
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path latest
    [ "$status" -eq 0 ]
    [[ "$output" != *"WARN"* ]]
    [[ "$output" == *"uninstalled k1"*"uninstalled k2"* ]]
    [ ! -e real/8.0/opp/static_kernel/ai_core/k1 ]
    [ ! -e real/8.0/opp/static_kernel/ai_core/k2 ]
}

@test "a package installed before the job is logged differently and the job's cleanup keeps it" {
    mkdir -p outputs root
    mkpkg k1
    mkpkg k2
    mkpkg k3
    "$SKINSTALL" install outputs/k1.run outputs/k3.run --install-path "$W/root" -q
    AI="$W/root/opp/static_kernel/ai_core"
    # The job installs k1 (already there), k2 (new) with skinstall and k3 (already there) with
    # the package's own script.
    { "$SKINSTALL" install outputs/k1.run outputs/k2.run --install-path "$W/root" &&
        sh outputs/k3.run --install-path "$W/root"; } >job.log 2>&1
    grep -q "k1 was installed before this command; 'skinstall cleanup-from-log' leaves it" job.log
    ! grep -q "k1/uninstall.sh" job.log
    ! grep -q "k3/uninstall.sh" job.log
    grep -qx "uninstall with: $AI/k2/uninstall.sh" job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" != *"WARN"* ]]
    [ -d "$AI/k1" ]
    [ ! -e "$AI/k2" ]
    [ -d "$AI/k3" ]
}

@test "an upgrade by the job is logged as 'installed before': the cleanup does not remove it" {
    mkdir -p outputs root
    mkpkg k1
    "$SKINSTALL" install outputs/k1.run --install-path "$W/root" -q
    echo v2 >>src-k1/soc/k.o
    "$SKC" pack src-k1 -o outputs/k1.run --package-version 2 -q
    "$SKINSTALL" upgrade outputs/k1.run --install-path "$W/root" >job.log 2>&1
    SKFORGE_NO_SKINSTALL=1 sh outputs/k1.run --install-path "$W/root" >>job.log 2>&1
    ! grep -q "k1/uninstall.sh" job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/root"
    [ "$status" -eq 0 ]
    [ -d root/opp/static_kernel/ai_core/k1 ]
}

@test "a second cleanup of a package that is gone says 'already removed', not a warning" {
    setup_installed
    printf 'uninstall with: %s\nuninstall with: %s\n' "$AI/k1/uninstall.sh" "$AI/k2/uninstall.sh" >job.log
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [[ "$output" == *"uninstalled k1"*"uninstalled k2"* ]]
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [[ "$output" == *"k1 is already removed ($AI/k1/uninstall.sh is gone); nothing to do"* ]]
    [[ "$output" == *"k2 is already removed"* ]]
    [[ "$output" != *"WARN"* ]]
    # Even with the whole tree gone.
    rm -r real/8.0/opp
    run "$SKINSTALL" cleanup-from-log job.log --outputs outputs --install-path "$W/latest"
    [ "$status" -eq 0 ]
    [[ "$output" == *"k1 is already removed"* ]]
    [[ "$output" != *"WARN"* ]]
}

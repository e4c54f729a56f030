#!/usr/bin/env bats
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

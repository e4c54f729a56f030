#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skinstall --dry-run: the same checks and refusals as the real command, an answer a script can
# read, and nothing written (no tree change, no history line, no lock file left).

load helpers

kern_run() {
    [ -d "tree-$1" ] || { make_tree "tree-$1" && echo "$1" >"tree-$1/release.txt"; }
    "$SKC" pack "tree-$1" -o "kern-$1.run" --name kern --package-version "$1" -q
}

@test "install --dry-run says what it would do and writes nothing" {
    kern_run 1.0.0
    mkdir root
    run "$SKINSTALL" install kern-1.0.0.run --install-path root --dry-run
    [ "$status" -eq 0 ]
    [ "$output" = "would install kern 1.0.0" ]
    [ -z "$(ls -A root)" ]
    "$SKINSTALL" install kern-1.0.0.run --install-path root -q
    before=$(tree_digest root)
    "$SKINSTALL" install kern-1.0.0.run --install-path root -n --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)[0]
assert r["action"] == "already-installed" and r["changed"] is False and r["dry_run"] is True, r'
    [ "$(tree_digest root)" = "$before" ]
}

@test "upgrade --dry-run reports the upgrade and refuses a downgrade as upgrade does" {
    kern_run 1.0.0 && kern_run 2.0.0
    mkdir root
    "$SKINSTALL" install kern-2.0.0.run --install-path root -q
    before=$(tree_digest root)
    run "$SKINSTALL" upgrade kern-1.0.0.run --install-path root --dry-run
    [ "$status" -eq 1 ]
    [[ "$output" == *"kern 1.0.0 is older than the installed 2.0.0"*"--allow-downgrade"* ]]
    run "$SKINSTALL" upgrade kern-1.0.0.run --install-path root --dry-run --allow-downgrade --json
    [ "$status" -eq 0 ]
    [[ "$output" == *'"action": "downgraded"'* ]]
    [[ "$output" == *'"old_version": "2.0.0"'* ]]
    [ "$(tree_digest root)" = "$before" ]
    # A damaged .run is refused before anything is decided, as the real command refuses it.
    cp kern-1.0.0.run bad.run
    flip_byte bad.run $(($(stat -c %s bad.run) - 10))
    run "$SKINSTALL" upgrade bad.run --install-path root --dry-run
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad.run"* ]]
    [ "$(tree_digest root)" = "$before" ]
}

@test "uninstall --dry-run refuses changed files like uninstall, and --force says remove" {
    kern_run 1.0.0
    mkdir root
    "$SKINSTALL" install kern-1.0.0.run --install-path root -q
    echo x >>root/opp/static_kernel/ai_core/kern/release.txt
    before=$(tree_digest root)
    run "$SKINSTALL" uninstall kern --install-path root --dry-run
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to uninstall kern"*"release.txt"* ]]
    run "$SKINSTALL" uninstall kern --install-path root --dry-run --force
    [ "$status" -eq 0 ]
    [ "$output" = "would uninstall kern 1.0.0" ]
    [ "$(tree_digest root)" = "$before" ]
    run "$SKINSTALL" history --install-path root
    [[ "$output" != *uninstall* ]]
    run "$SKINSTALL" uninstall nothere --install-path root --dry-run
    [ "$status" -eq 1 ]
    [[ "$output" == *"nothere is not installed"* ]]
}

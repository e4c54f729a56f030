#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Issue 14: skinstall as an operator uses it day to day — damaged packages, identity and
# versions, queries, shadowing, history, locks, help and machine-readable results.
load helpers
bats_require_minimum_version 1.5.0

ai() { echo "$W/root/opp/static_kernel/ai_core"; }
si() { "$SKINSTALL" "$@" --install-path "$W/root"; }

# mkpkg NAME VERSION [KEY] [SALT] [OUT]: a package with one Add kernel for simplifiedKey KEY
# (default Add/shared) and its index, packed into OUT (default NAME.run).
mkpkg() {
    local name=$1 version=$2 key=${3:-Add/shared} salt=${4:-} out=${5:-$1.run}
    local d="src-$name-$version$salt"
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s %s %s\n' "$name" "$version" "$salt" >"$d/soc/Add/add.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"%s","binPath":"%s/soc/Add/add.o"}]}}\n' "$key" "$name" \
        >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$out" --name "$name" --package-version "$version" -q
}

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# ---- 1. damage is contained and repairable ----

@test "a damaged package blocks nothing: the others install, list and verify name it and the fix" {
    mkpkg a 1 Add/a
    mkpkg b 1 Add/b
    mkpkg c 1 Add/c
    mkdir root
    si install a.run b.run -q
    echo '{ not json' >"$(ai)/b/manifest.json"
    run si install c.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"package b contributes no kernels to the global index"*"b/manifest.json"* ]]
    [[ "$output" == *"skinstall repair b --from b.run"*"skinstall uninstall --force b"* ]]
    idx="$(ai)/config/soc/binary_info_config.json"
    grep -q '"a/soc/Add/add.o"' "$idx"
    grep -q '"c/soc/Add/add.o"' "$idx"
    ! grep -q '"b/soc/Add/add.o"' "$idx"
    grep -qx 'install_order=a,b,c' "$(ai)/config.ini"
    run si list
    [ "$status" -eq 0 ]
    [[ "$output" == *"a "*"1"* ]]
    [[ "$output" == *"b "*"DAMAGED:"*"manifest.json"*"skinstall repair b"* ]]
    [[ "$output" == *"c "*"1"* ]]
    [ "$(si list --json | json '[p["status"] for p in d]')" = "['installed', 'damaged', 'installed']" ]
    run si verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"b: damaged:"*"skinstall uninstall --force b"* ]]
    [[ "$output" == *"verified 3 package(s)"*"1 problem(s)"* ]]
    run si uninstall a
    [ "$status" -eq 0 ]
    [ ! -e "$(ai)/a" ]
}

@test "repair restores a damaged package from its .run, checking name and version first" {
    mkpkg b 1.0
    mkpkg other 1.0 Add/o
    mkdir root
    si install b.run -q
    rm "$(ai)/b/soc/Add/add.o"
    echo garbage >"$(ai)/b/manifest.json"
    mkpkg b 2.0 Add/shared "" b-2.0.run
    si recover -q # what the first command after the damage does: the index drops b's kernels
    before=$(tree_digest root)
    # Another version, or another package, is refused and changes nothing.
    run si repair b --from b-2.0.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"reinstall restores the installed version, but b 1.0 is installed"*"package is 2.0"* ]]
    run si repair b --from other.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"other.run holds package 'other', not 'b'"* ]]
    [ "$(tree_digest root)" = "$before" ]
    run si repair b --from b.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"reinstalled b 1.0"* ]]
    si verify -q
    grep -q '"b/soc/Add/add.o"' "$(ai)/config/soc/binary_info_config.json"
    # Without --from: the .run it was installed from.
    echo changed >"$(ai)/b/soc/Add/add.o"
    run si repair b
    [ "$status" -eq 0 ]
    [[ "$output" == *"repairing b from $W/b.run"* ]]
    si verify -q
}

@test "install --reinstall restores changed files of the same version; plain install leaves them" {
    mkpkg k1 1
    mkdir root
    si install k1.run -q
    echo changed >"$(ai)/k1/soc/Add/add.o"
    run si install k1.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"already installed"* ]]
    run si verify k1
    [ "$status" -eq 1 ]
    run si install --reinstall k1.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"reinstalled k1 1"* ]]
    si verify -q
}

@test "uninstall --force removes a damaged package whole and never leaves its directory" {
    mkpkg a 1 Add/a
    mkpkg b 1 Add/b
    mkdir root outside
    echo precious >outside/keep
    si install a.run b.run -q
    rm -r "$(ai)/b/soc"
    ln -s "$W/outside" "$(ai)/b/soc"
    rm "$(ai)/b/manifest.json"
    si recover -q
    before=$(tree_digest root)
    run si uninstall b
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to uninstall b: it is damaged"*"no manifest.json"*"uninstall --force b"* ]]
    [ "$(tree_digest root)" = "$before" ]
    run si uninstall --force b
    [ "$status" -eq 0 ]
    [[ "$output" == *"removed the damaged package b"* ]]
    [ ! -e "$(ai)/b" ] && [ ! -L "$(ai)/b" ]
    [ "$(cat outside/keep)" = precious ]
    grep -qx 'install_order=a' "$(ai)/config.ini"
    si verify -q
}

@test "a directory an uninstall kept is described as such, and uninstall --force removes it" {
    mkpkg k1 1.5
    mkdir root
    si install k1.run -q
    echo mine >"$(ai)/k1/soc/notes.txt"
    run si uninstall k1
    [ "$status" -eq 0 ]
    [[ "$output" == *"keeping '$(ai)/k1': it holds files k1 did not install"* ]]
    [ "$(cat "$(ai)/k1/soc/notes.txt")" = mine ]
    run si verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"tree: k1: unexpected: '$(ai)/k1' is what the uninstall of k1 1.5 left behind"*"(soc/notes.txt)"* ]]
    [[ "$output" != *"not installed by skforge"* ]]
    before=$(tree_digest root)
    run si install k1.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"is what the uninstall of k1 1.5 left behind"*"skinstall uninstall --force k1"* ]]
    [ "$(tree_digest root)" = "$before" ]
    run si uninstall --force k1
    [ "$status" -eq 0 ]
    [ ! -e "$(ai)/k1" ]
    si install k1.run -q
    si verify -q
}

@test "after the package's own uninstall.sh, the record it leaves is described and removable" {
    mkpkg k1 1
    mkdir root
    si install k1.run -q
    cp "$(ai)/k1/.skforge-installed.json" record.json
    # This skforge's uninstall.sh removes the record with the package (an operator's install:
    # with --operator).
    sh "$(ai)/k1/uninstall.sh" --operator -q 2>/dev/null || true
    [ ! -e "$(ai)/k1" ]
    # An older package's uninstall.sh left it behind alone.
    mkdir "$(ai)/k1"
    cp record.json "$(ai)/k1/.skforge-installed.json"
    run si verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"tree: k1: unexpected:"*"holds only skinstall's install record"*"uninstall --force k1"* ]]
    run si install k1.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"holds only skinstall's install record"* ]]
    si uninstall --force k1 -q
    si install k1.run -q
    si verify -q
}

@test "a directory skforge never installed is still refused as such" {
    mkpkg k1 1
    mkdir -p root/opp/static_kernel/ai_core/k1
    echo theirs >"$(ai)/k1/file"
    run si install k1.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"exists but was not installed by skforge"* ]]
    run si uninstall --force k1
    [ "$status" -eq 1 ]
    [[ "$output" == *"was not installed by skforge"*"nothing was removed"* ]]
    [ "$(cat "$(ai)/k1/file")" = theirs ]
}

# ---- 2. identity from the manifest; versions as dpkg compares them ----

@test "the package name comes from the manifest: kernels-1.2.0.run installs kernels" {
    mkdir -p src/soc/Add src/config/soc
    echo k >src/soc/Add/add.o
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"kernels/soc/Add/add.o"}]}}\n' \
        >src/config/soc/binary_info_config.json
    "$SKC" pack src -o kernels-1.2.0.run --name kernels --package-version 1.2.0 -q
    run "$SKC" inspect kernels-1.2.0.run
    [[ "$output" == *"kernels"* ]]
    mkdir root
    run si install kernels-1.2.0.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"installed kernels 1.2.0 into $(ai)/kernels"* ]]
    [ -f "$(ai)/kernels/soc/Add/add.o" ]
    [ "$(si list --json | json 'd[0]["name"], d[0]["version"]')" = "kernels 1.2.0" ]
    # A renamed copy is still the same package.
    cp kernels-1.2.0.run renamed.run
    run si install renamed.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"kernels 1.2.0 is already installed"* ]]
    # Without --name the stem is the name (CANN's <stem> = directory).
    "$SKC" pack src -o kernels.run --package-version 1.3 -q
    [ "$(header_value kernels.run NAME)" = kernels ]
    run "$SKC" pack src -o kernels.run --name 'bad/name' --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"--name 'bad/name'"* ]]
}

@test "cleanup-from-log matches the package names in the outputs' headers, not their file names" {
    mkdir outputs root
    mkpkg kernels 1.2.0 Add/shared "" outputs/kernels-1.2.0.run
    mkpkg other 1 Add/o "" outputs/other.run
    si install outputs/kernels-1.2.0.run outputs/other.run -q
    mv outputs/other.run elsewhere.run
    printf 'Uninstall with: %s/kernels/uninstall.sh\nand %s/other/uninstall.sh\n' "$(ai)" "$(ai)" >job.log
    run si cleanup-from-log job.log --outputs outputs
    [ "$status" -eq 0 ]
    [[ "$output" == *"uninstalled kernels 1.2.0"* ]]
    [[ "$output" == *"refusing unrelated or redirected uninstall script: $(ai)/other/uninstall.sh"* ]]
    [ ! -e "$(ai)/kernels" ]
    [ -d "$(ai)/other" ]
    [ "$(si history --json | json 'd[-1]["action"], d[-1]["package"]')" = "uninstalled kernels" ]
}

@test "upgrade compares versions as dpkg does, refuses downgrades and same-version changes" {
    mkpkg k 1.9
    mkdir root
    si install k.run -q
    mkpkg k 1.10 Add/shared "" k-1.10.run
    run si upgrade k-1.10.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"upgraded k 1.10 into $(ai)/k, replacing 1.9"* ]]
    before=$(tree_digest root)
    run si upgrade k.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"k 1.9 is older than the installed 1.10"*"--allow-downgrade"* ]]
    [ "$(tree_digest root)" = "$before" ]
    mkpkg k 1.10 Add/shared salt k-1.10b.run
    run si upgrade k-1.10b.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"different content under the same version; replacing it needs --reinstall"* ]]
    run si install k-1.10b.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"install --reinstall"* ]]
    [ "$(tree_digest root)" = "$before" ]
    run si upgrade --reinstall k-1.10b.run
    [ "$status" -eq 0 ]
    grep -q salt "$(ai)/k/soc/Add/add.o"
    run si upgrade --allow-downgrade k.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"downgraded k 1.9 into $(ai)/k, replacing 1.10"* ]]
    mkpkg k 1.9~rc1 Add/shared "" k-rc.run
    run si upgrade k-rc.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"older than the installed 1.9"* ]]
}

# ---- 3. queries ----

@test "files lists an installed package's files like dpkg -L, --json with digests" {
    mkpkg k1 1
    mkdir root
    si install k1.run -q
    run si files k1
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "$(ai)/k1" ]]
    [[ "$output" == *"$(ai)/k1/soc/Add/add.o"* ]]
    [[ "$output" == *"$(ai)/k1/manifest.json"* ]]
    sum=$(sha256sum "$(ai)/k1/soc/Add/add.o" | cut -d' ' -f1)
    [ "$(si files k1 --json | json '[f["sha256"] for f in d["files"] if f["path"].endswith("add.o")][0]')" = "$sum" ]
    run si files nope
    [ "$status" -eq 1 ]
    [[ "$output" == *"nope is not installed"* ]]
}

@test "owner finds the package of a file like dpkg -S, and whose kernel wins for a key" {
    mkpkg a 1
    mkpkg b 1
    mkdir root
    si install a.run b.run -q
    run si owner "$(ai)/a/soc/Add/add.o"
    [ "$status" -eq 0 ]
    [[ "$output" == "a: $(ai)/a/soc/Add/add.o"* ]]
    [[ "$output" == *"soc Add Add/shared: b wins (b/soc/Add/add.o); hides a"* ]]
    run si owner b/soc/Add/add.o --json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | json 'd["package"], d["kernels"][0]["winner"]')" = "b b" ]
    run si owner "$(ai)/config.ini"
    [ "$status" -eq 0 ]
    [[ "$output" == *"the install tree itself"* ]]
    run si owner "$(ai)/a/soc/Add/other.o"
    [ "$status" -eq 1 ]
    [[ "$output" == *"no installed package owns"* ]]
    run si owner /etc/passwd
    [ "$status" -eq 2 ]
    run si owner --key Add/shared --json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | json '[p["package"] for p in d["kernels"][0]["providers"]]')" = "['a', 'b']" ]
    run si owner --key Add/none
    [ "$status" -eq 1 ]
}

@test "info shows version, SoC, signer, when and by whom, size, files and kernels" {
    "$SKC" keygen -o key >/dev/null
    mkdir -p src/soc/Add src/config/soc
    echo k >src/soc/Add/add.o
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"k1/soc/Add/add.o"}]}}\n' \
        >src/config/soc/binary_info_config.json
    "$SKC" pack src -o k1.run --package-version 2.1 --soc Ascend910B1 --npu-arch dav-2201 --sign-key key.pem -q
    keyid=$("$SKC" inspect k1.run --json | json 'd.get("key_id") or d["signature"]["key_id"]' 2>/dev/null || true)
    mkdir root
    start=$(date -u +%s)
    si install k1.run --trusted-key key.pub.pem -q
    run si info k1
    [ "$status" -eq 0 ]
    [[ "$output" == *"Version:        2.1"* ]]
    [[ "$output" == *"SoC:            Ascend910B1"* ]]
    [[ "$output" == *"Signature:      verified"* ]]
    [[ "$output" == *"Installed by:   $(id -un)"* ]]
    [[ "$output" == *"Installed from: $W/k1.run"* ]]
    [[ "$output" == *"soc Add Add/x: k1/soc/Add/add.o (loaded)"* ]]
    si info k1 --json >info.json
    json 'd["signer_key_id"]' <info.json | grep -Eq '^[0-9a-f]{64}$'
    [ -z "$keyid" ] || [ "$(json 'd["signer_key_id"]' <info.json)" = "$keyid" ]
    at=$(json 'd["installed_at"]' <info.json)
    [ "$(date -u -d "$at" +%s)" -ge "$start" ]
    [ "$(json 'd["files"], d["bytes"] > 0, len(d["kernels"])' <info.json)" = "9 True 1" ]
}

# ---- 4. shadowing is visible ----

@test "install says which kernels it hides and list --conflicts shows them" {
    mkpkg a 1
    mkpkg b 1
    mkpkg c 1 Add/c
    mkdir root
    si install a.run -q
    run si install b.run c.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"b's kernel for Add/shared (Add on soc) hides the one from a"* ]]
    [[ "$output" != *"c's kernel"* ]]
    run si list --conflicts
    [ "$status" -eq 0 ]
    [ "$output" = "soc Add Add/shared: b wins, hiding a" ]
    [ "$(si list --conflicts --json | json '[(c["winner"], c["binPath"], [h["package"] for h in c["hidden"]]) for c in d]')" = "[('b', 'b/soc/Add/add.o', ['a'])]" ]
    # The result of an install names what it hides.
    mkpkg d 1
    [ "$(si install d.run --json 2>/dev/null | json 'd[0]["shadows"][0]["hidden"]')" = "['a', 'b']" ]
    si uninstall d b -q
    run si list --conflicts
    [ "$output" = "no kernel of one package hides another's" ]
}

# ---- 5. history ----

@test "every change is one JSON line in ai_core/log/skinstall.log; refusals leave the tree alone" {
    mkpkg k 1.0
    mkpkg k 2.0 Add/shared "" k-2.run
    mkdir root
    si install k.run -q
    si upgrade k-2.run -q
    before=$(tree_digest root)
    run si install k.run
    [ "$status" -eq 1 ]
    [ "$(tree_digest root)" = "$before" ]
    si uninstall k -q
    log="$(ai)/log/skinstall.log"
    [ "$(stat -c %a "$log")" = 640 ]
    [ "$(wc -l <"$log")" -eq 3 ]
    run si history --json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | json '[(l["action"], l["package"], l["old_version"], l["new_version"], l["result"]) for l in d]')" = \
        "[('installed', 'k', '', '1.0', 'ok'), ('upgraded', 'k', '1.0', '2.0', 'ok'), ('uninstalled', 'k', '2.0', '', 'ok')]" ]
    [ "$(echo "$output" | json 'd[1]["user"], d[1]["command"]')" = "$(id -un) skinstall upgrade k-2.run -q --install-path $W/root" ]
    echo "$output" | json 'd[0]["time"]' | grep -Eq '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$'
    run si history
    [[ "${lines[1]}" == *" upgraded k 1.0 -> 2.0 ok  [skinstall upgrade k-2.run -q --install-path $W/root]" ]]
    si verify -q
}

@test "--log-file copies each line to a site log; the history is capped by rotation" {
    mkpkg k 1
    mkdir root
    si install k.run -q --log-file "$W/site.log"
    [ "$(json 'd["action"], d["package"]' <site.log)" = "installed k" ]
    [ "$(stat -c %a site.log)" = 640 ]
    log="$(ai)/log/skinstall.log"
    # Fill the log to just under its 1 MiB cap: the next line crosses it.
    python3 -c "
import json, os
with open('$log', 'a') as f:
    while f.tell() < 1024 * 1024 - 100:
        f.write(json.dumps({'time': 'old', 'action': 'filler', 'detail': 'x' * 40}) + '\n')
"
    si uninstall k -q
    [ -f "$log.1" ]
    [ "$(wc -l <"$log")" -eq 1 ]
    [ "$(stat -c %s "$log.1")" -le $((1024 * 1024)) ]
    [ "$(si history --json | json 'd[-1]["action"]')" = uninstalled ]
    si install k.run -q
    si verify -q
}

@test "a history file replaced by a symlink is never followed; the change still happens" {
    mkpkg k 1
    mkpkg j 1 Add/j
    mkdir root
    si install j.run -q
    echo precious >victim
    rm "$(ai)/log/skinstall.log"
    ln -s "$W/victim" "$(ai)/log/skinstall.log"
    run si install k.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: the change is made but its history line is not:"*"skinstall.log"* ]]
    [ -d "$(ai)/k" ]
    [ "$(cat victim)" = precious ]
    run si verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"tree: log/skinstall.log: unexpected"* ]]
}

# ---- 6. locks are visible ----

@test "a held lock names its holder; --lock-timeout gives up with that message" {
    mkpkg k 1
    mkpkg j 1 Add/j
    mkdir root
    si install j.run -q
    lock="$(ai)/config/static_kernel.lock"
    flock "$lock" sleep 60 &
    holder=$!
    wait_until sh -c '! flock -n "$1" true' sh "$lock"
    run si install k.run --lock-timeout 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"gave up after 1 s waiting for the lock '$lock' held by pid $holder (flock "*"sleep 60)"* ]]
    run si list --lock-timeout 0
    [ "$status" -eq 1 ]
    [[ "$output" == *"held by pid $holder"* ]]
    si install k.run -q 2>err.txt &
    waiter=$!
    wait_until grep -q "WARN: waiting for the lock '$lock' held by pid $holder" err.txt
    # flock's child holds the lock too (same open file): end both, not only the holder.
    kill "$holder" $(pgrep -P "$holder")
    wait "$waiter"
    [ -d "$(ai)/k" ]
    run si list --lock-timeout -1
    [ "$status" -eq 2 ]
}

# ---- 7. help everywhere; options that do not apply are refused ----

@test "every subcommand has --help and -h; options that do not apply are usage errors" {
    for cmd in install upgrade repair uninstall list verify files owner info history recover cleanup-from-log; do
        run "$SKINSTALL" "$cmd" --help
        [ "$status" -eq 0 ]
        [[ "$output" == "Usage: skinstall $cmd "* ]]
        [[ "$output" == *"--install-path"*"Exit status: 0 success"* ]]
        run "$SKINSTALL" "$cmd" -h
        [ "$status" -eq 0 ]
    done
    run "$SKINSTALL" upgrade --help
    [[ "$output" == *"--allow-downgrade"* ]]
    run "$SKINSTALL" install --help
    [[ "$output" != *"--allow-downgrade"* ]]
    mkdir root
    run si list --force --all --outputs x
    [ "$status" -eq 2 ]
    [[ "$output" == *"unrecognised option '--force'"*"skinstall list --help"* ]]
    run si verify --force
    [ "$status" -eq 2 ]
    run si install --all x.run
    [ "$status" -eq 2 ]
    run si uninstall --trusted-key k.pem k
    [ "$status" -eq 2 ]
    [ -z "$(ls -A root)" ]
}

# ---- 8. results a script can use ----

@test "install, upgrade, repair and uninstall report {name, version, action, changed} with --json" {
    mkpkg a 1
    mkpkg b 1 Add/b
    mkpkg b 2 Add/b "" b-2.run
    mkdir root
    run --separate-stderr si install a.run b.run --json
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | json '[(r["name"], r["version"], r["action"], r["changed"]) for r in d]')" = \
        "[('a', '1', 'installed', True), ('b', '1', 'installed', True)]" ]
    run --separate-stderr si install a.run --json
    [ "$(echo "$output" | json 'd[0]["action"], d[0]["changed"]')" = "already-installed False" ]
    run --separate-stderr si upgrade b-2.run --json
    [ "$(echo "$output" | json 'd[0]["action"], d[0]["old_version"], d[0]["version"]')" = "upgraded 1 2" ]
    run --separate-stderr si repair b --from b-2.run --json
    [ "$(echo "$output" | json 'd[0]["action"], d[0]["changed"]')" = "reinstalled True" ]
    [[ "$stderr" == *"repairing b from b-2.run"* ]]
    run --separate-stderr si uninstall a b --json
    [ "$(echo "$output" | json '[(r["name"], r["action"], r["changed"]) for r in d]')" = \
        "[('a', 'uninstalled', True), ('b', 'uninstalled', True)]" ]
    run --separate-stderr si uninstall a --json
    [ "$status" -eq 1 ]
    [ -z "$output" ]
    [[ "$stderr" == *"a is not installed"* ]]
}

# ---- 11. progress where work is long ----

@test "install and verify draw a progress bar on a terminal, never in a pipe or with -q" {
    mkdir -p big/soc root
    head -c $((6 * 1024 * 1024)) /dev/urandom >big/soc/weights.o
    "$SKC" pack big -o big.run --package-version 1 -q
    # script(1) gives skinstall a terminal; what it drew is in its output.
    script -qec "$SKINSTALL install big.run --install-path $W/root" /dev/null >tty.txt
    grep -q 'verifying big \[#*' tty.txt
    grep -q 'installing big \[##############################\] 100%' tty.txt
    grep -q "installed big 1 into" tty.txt
    script -qec "$SKINSTALL verify big --install-path $W/root" /dev/null >tty.txt
    grep -q 'verifying big \[##############################\] 100%' tty.txt
    # In a pipe, and with -q on a terminal: no bar.
    si uninstall big -q
    "$SKINSTALL" install big.run --install-path "$W/root" >pipe.txt 2>&1
    ! grep -q '%' pipe.txt
    grep -q "installed big 1 into" pipe.txt
    si verify big 2>&1 | { ! grep -q '%'; }
    si uninstall big -q
    script -qec "$SKINSTALL install -q big.run --install-path $W/root" /dev/null >tty.txt
    [ ! -s tty.txt ]
    script -qec "$SKINSTALL verify -q big --install-path $W/root" /dev/null >tty.txt
    [ ! -s tty.txt ]
    # Small packages stay quiet even on a terminal.
    mkpkg small 1
    script -qec "$SKINSTALL install small.run --install-path $W/root" /dev/null >tty.txt
    ! grep -q '%' tty.txt
}

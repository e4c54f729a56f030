#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skinstall verify --fix: rebuilds the global index and the per-key record when they are not the
# full merge, restores changed package files from the recorded .run by repair's checks, never
# follows a planted symlink, never removes what it cannot restore, and says what is left.
load helpers

AI=opp/static_kernel/ai_core
IDX=opp/static_kernel/ai_core/config/soc/binary_info_config.json
KEYS=opp/static_kernel/ai_core/config/static_kernel.keys

mkpkg() {
    local d="src-$1${2:-}"
    mkdir -p "$d/soc/Add" "$d/config/soc" "$d/soc/Mul"
    printf 'kernel %s %s\n' "$1" "${2:-}" >"$d/soc/Add/add.o"
    printf 'mul %s\n' "$1" >"$d/soc/Mul/mul.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"%s/soc/Add/add.o"},{"simplifiedKey":"Add/%s","binPath":"%s/soc/Add/add.o"}]}}\n' \
        "$1" "$1" "$1" >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1.run" --package-version "1${2:+.$2}" -q "${@:3}"
}

setup_tree() {
    mkpkg a
    mkpkg b
    mkdir root
    "$SKINSTALL" install a.run b.run --install-path "$W/root" -q
    cp "root/$IDX" index.good
}

fix() {
    run "$SKINSTALL" verify --fix --install-path "$W/root" "$@"
}

@test "verify --fix on a sound tree changes nothing and exits 0" {
    setup_tree
    before=$(tree_digest root)
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"0 problem(s) fixed, 0 left"* ]]
    [ "$(tree_digest root)" = "$before" ]
}

@test "a deleted or edited global index is rebuilt byte for byte, atomically, and the history says so" {
    setup_tree
    rm "root/$IDX"
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"tree: config/soc/binary_info_config.json: stale index: fixed: missing"* ]]
    cmp "root/$IDX" index.good
    # An edit that keeps the file's stamp (touch -r): recover trusts the stamp, --fix reads.
    cp -p "root/$IDX" stamp.ref
    sed -i 's/"Add\/x"/"Add\/y"/' "root/$IDX"
    touch -r stamp.ref "root/$IDX"
    "$SKINSTALL" verify --install-path "$W/root" -q && false
    fix --json
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["ok"] and r["rebuilt"] == ["config/soc/binary_info_config.json"], r
assert r["fixed"][0]["problem"] == "stale index", r'
    cmp "root/$IDX" index.good
    ! ls -a "root/$AI/config/soc" | grep -q tmp
    grep '"action":"fixed"' "root/$AI/log/skinstall.log" | tail -n 1 | grep -q 'rebuilt config/soc/binary_info_config.json'
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "a damaged or missing per-key record is rebuilt as a full rebuild writes it" {
    setup_tree
    cp "root/$KEYS" keys.good
    printf 'garbage\n' >>"root/$KEYS"
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"config/static_kernel.keys: stale record: fixed: damaged"* ]]
    cmp "root/$KEYS" keys.good
    rm "root/$KEYS"
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"config/static_kernel.keys: stale record: fixed: missing"* ]]
    cmp "root/$KEYS" keys.good
    cmp "root/$IDX" index.good
}

@test "an edited and a removed file are restored from the recorded .run; history names the package" {
    setup_tree
    before=$(state_digest root)
    echo changed >"root/$AI/a/soc/Add/add.o"
    rm "root/$AI/b/soc/Mul/mul.o"
    chmod 0600 "root/$AI/b/soc/Add/add.o"
    "$SKINSTALL" verify --install-path "$W/root" -q && false
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"a: soc/Add/add.o: changed size: fixed:"*"restored from $W/a.run"* ]]
    [[ "$output" == *"b: soc/Mul/mul.o: missing: fixed:"* ]]
    [[ "$output" == *"b: soc/Add/add.o: changed mode: fixed:"* ]]
    [ "$(state_digest root)" = "$before" ]
    "$SKINSTALL" verify --install-path "$W/root" -q
    grep '"action":"repaired"' "root/$AI/log/skinstall.log" | grep -q '"package":"a"'
    grep '"action":"repaired"' "root/$AI/log/skinstall.log" | grep -q '"package":"b"'
    run "$SKINSTALL" history --install-path "$W/root"
    [[ "$output" == *"repaired a 1 -> 1 ok: restored 1 differing entry from $W/a.run"* ]]
}

@test "--fix NAME restores only the named package" {
    setup_tree
    echo changed >"root/$AI/a/soc/Add/add.o"
    echo changed >"root/$AI/b/soc/Add/add.o"
    fix b
    [ "$status" -eq 0 ]
    [[ "$output" != *"a: soc"* ]]
    "$SKINSTALL" verify b --install-path "$W/root" -q
    run "$SKINSTALL" verify a --install-path "$W/root" -q
    [ "$status" -eq 1 ]
}

@test "the .run gone: each file is left with the command that fixes it; nothing is removed" {
    setup_tree
    echo changed >"root/$AI/a/soc/Add/add.o"
    rm "root/$AI/a/soc/Mul/mul.o"
    mv a.run elsewhere.run
    before=$(tree_digest root)
    fix
    [ "$status" -eq 1 ]
    [[ "$output" == *"a: soc/Add/add.o: changed size: left: "*"the .run it was installed from, '$W/a.run', is gone"*"fix: skinstall repair a --from X.run"* ]]
    [[ "$output" == *"a: soc/Mul/mul.o: missing: left:"* ]]
    [[ "$output" == *"0 problem(s) fixed, 2 left"* ]]
    [ "$(tree_digest root)" = "$before" ]
    ! grep -q '"action":"repaired"' "root/$AI/log/skinstall.log"
    # The command it names does fix it.
    "$SKINSTALL" repair a --from elsewhere.run --install-path "$W/root" -q
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "a .run whose path is not UTF-8 is found again by verify --fix and repair; an old record still reads" {
    mkpkg a
    mkdir "dir"$'\377'
    mv a.run "dir"$'\377'/a.run
    mkdir root
    "$SKINSTALL" install "dir"$'\377'/a.run --install-path "$W/root" -q
    echo changed >"root/$AI/a/soc/Add/add.o"
    fix
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"a: soc/Add/add.o: changed size: fixed:"* ]]
    "$SKINSTALL" verify --install-path "$W/root" -q
    # The record names the file byte for byte (JSON holds UTF-8: the bytes go hex-encoded).
    local hex
    hex=$(printf '%s' "$W/dir"$'\377'/a.run | od -An -tx1 | tr -d ' \n')
    grep -q "\"from_hex\":\"$hex\"" "root/$AI/a/.skforge-installed.json"
    rm "root/$AI/a/soc/Mul/mul.o"
    run "$SKINSTALL" repair a --install-path "$W/root"
    echo "$output"
    [ "$status" -eq 0 ]
    "$SKINSTALL" verify --install-path "$W/root" -q
    # A record written before "from_hex" (a UTF-8 path: "from" alone) is still read.
    mkpkg b
    mkdir sub
    mv b.run sub/b.run
    "$SKINSTALL" install sub/b.run --install-path "$W/root" -q
    ! grep -q from_hex "root/$AI/b/.skforge-installed.json"
    echo changed >"root/$AI/b/soc/Add/add.o"
    "$SKINSTALL" repair b --install-path "$W/root" -q
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "a recorded .run that fails the signature policy or its digest is not used" {
    "$SKC" keygen -o key >/dev/null
    "$SKC" keygen -o other >/dev/null
    mkpkg a "" --sign-key key.pem
    mkpkg b
    mkdir root
    "$SKINSTALL" install a.run b.run --trusted-key key.pub.pem --install-path "$W/root" -q 2>/dev/null ||
        "$SKINSTALL" install a.run b.run --install-path "$W/root" -q
    echo changed >"root/$AI/a/soc/Add/add.o"
    before=$(tree_digest root)
    fix --trusted-key other.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"a: soc/Add/add.o: changed size: left: "*"does not pass repair's checks"* ]]
    [ "$(tree_digest root)" = "$before" ]
    # The same .run with a byte flipped in its payload: refused by its digest.
    flip_byte a.run $(($(stat -c %s a.run) - 200))
    fix --trusted-key key.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not pass repair's checks"* ]]
    [ "$(tree_digest root)" = "$before" ]
}

@test "a .run rebuilt under the same version with other content is not restored from" {
    setup_tree
    echo changed >"root/$AI/a/soc/Add/add.o"
    echo other >src-a/soc/Mul/mul.o
    "$SKC" pack src-a -o a.run --package-version 1 -q
    fix
    [ "$status" -eq 1 ]
    [[ "$output" == *"with another manifest than the installed 1's"* ]]
}

@test "a symlink planted where a file was is replaced, never followed" {
    setup_tree
    echo secret >outside.txt
    chmod 0644 outside.txt
    before_outside=$(sha256sum outside.txt)
    rm "root/$AI/a/soc/Add/add.o"
    ln -s "$W/outside.txt" "root/$AI/a/soc/Add/add.o"
    ln -s "$W/outside.txt" "root/$AI/a/soc/Mul/mul.o.tmp" # not in the manifest: an extra
    rm "root/$AI/a/soc/Mul/mul.o.tmp"
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"a: soc/Add/add.o: changed type: fixed:"* ]]
    [ ! -L "root/$AI/a/soc/Add/add.o" ]
    [ "$(sha256sum outside.txt)" = "$before_outside" ]
    [ "$(stat -c %a outside.txt)" = 644 ]
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "a symlinked directory in a package is replaced, nothing below it is written, and the lines say only what was done" {
    setup_tree
    mkdir outside
    mv "root/$AI/a/soc" outside/soc
    ln -s "$W/outside/soc" "root/$AI/a/soc"
    rm outside/soc/Add/add.o
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"a: soc: changed type: fixed: restored from $W/a.run"* ]]
    [[ "$output" != *"remove it and retry"* ]]
    [ ! -L "root/$AI/a/soc" ]
    [ ! -e outside/soc/Add/add.o ]
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "a file the package did not install is never removed: the package is left as it is" {
    setup_tree
    echo changed >"root/$AI/a/soc/Add/add.o"
    echo notes >"root/$AI/a/soc/notes.txt"
    before=$(tree_digest root)
    fix
    [ "$status" -eq 1 ]
    [[ "$output" == *"a: soc/notes.txt: not installed by this package: left: verify --fix never removes"* ]]
    [[ "$output" == *"a: soc/Add/add.o: changed size: left: "*"would remove 1 file(s) the package did not install"* ]]
    [ "$(tree_digest root)" = "$before" ]
    mv "root/$AI/a/soc/notes.txt" .
    fix a
    [ "$status" -eq 0 ]
}

@test "a damaged package is restored from its recorded .run, keeping its place in the install order" {
    setup_tree
    echo garbage >"root/$AI/a/manifest.json"
    fix
    [ "$status" -eq 0 ]
    [[ "$output" == *"a: damaged: fixed: "*"restored from $W/a.run"* ]]
    "$SKINSTALL" verify --install-path "$W/root" -q
    cmp "root/$IDX" index.good
    grep -qx 'install_order=a,b' "root/$AI/config.ini"
}

@test "--dry-run says what it would fix and changes nothing, not even the history" {
    setup_tree
    rm "root/$IDX"
    echo changed >"root/$AI/a/soc/Add/add.o"
    touch "root/$AI/.config.ini.tmp.4242"
    before=$(tree_digest root)
    fix --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == *"tree: config/soc/binary_info_config.json: stale index: would fix: missing"* ]]
    [[ "$output" == *"a: soc/Add/add.o: changed size: would fix: "*"would be restored from $W/a.run"* ]]
    [[ "$output" == *"tree: .config.ini.tmp.4242: unexpected: would fix:"* ]]
    [ "$(tree_digest root)" = "$before" ]
    fix --dry-run --json
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["dry_run"] and r["ok"] and len(r["fixed"]) >= 3 and len(r["repaired"]) == 1, r'
    [ "$(tree_digest root)" = "$before" ]
}

@test "a planted file in the tree is left and exits 1; options of --fix alone are usage errors" {
    setup_tree
    echo x >"root/$AI/config/planted"
    fix
    [ "$status" -eq 1 ]
    [[ "$output" == *"tree: config/planted: unexpected: left:"* ]]
    [ -f "root/$AI/config/planted" ]
    run "$SKINSTALL" verify --dry-run --install-path "$W/root"
    [ "$status" -eq 2 ]
    run "$SKINSTALL" verify --trusted-key x.pem --install-path "$W/root"
    [ "$status" -eq 2 ]
    run "$SKINSTALL" verify --fix nosuch --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"nosuch is not installed"* ]]
}

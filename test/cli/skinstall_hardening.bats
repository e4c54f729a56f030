#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Issue 26, the installer's side: names and paths from the command line checked before any work,
# a symlinked package directory removed as a link, printable output, options that take a value,
# repair's message, and a history that one damaged line or a non-UTF-8 path cannot break. Each
# refusal is checked to leave the tree, its history and everything outside unchanged.
load helpers
bats_require_minimum_version 1.5.0

ai() { echo "$W/root/opp/static_kernel/ai_core"; }
si() { "$SKINSTALL" "$@" --install-path "$W/root"; }

# mkpkg NAME [VERSION]: a package with one kernel and its index, packed into NAME.run.
mkpkg() {
    local name=$1 version=${2:-1}
    local d="src-$name-$version"
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s %s\n' "$name" "$version" >"$d/soc/Add/add.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/%s","binPath":"%s/soc/Add/add.o"}]}}\n' \
        "$name" "$name" >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$name.run" --name "$name" --package-version "$version" -q
}

# unchanged: the digest of the whole scratch directory (tree, history, .run files, outside).
snapshot() { tree_digest "$W" >"$BATS_TEST_TMPDIR/before"; }
unchanged() { [ "$(tree_digest "$W")" = "$(cat "$BATS_TEST_TMPDIR/before")" ]; }

# no_raw_controls: $output (stdout and stderr of the last `run`) holds no ESC, BEL or C1 CSI.
no_raw_controls() {
    ! printf '%s' "$output" | LC_ALL=C grep -q $'[\x1b\x07\x9b]'
}

@test "names that are not package names are refused before any work, by every command" {
    mkpkg victim
    mkpkg other
    mkdir root
    si install victim.run other.run -q
    snapshot
    for cmd in "uninstall --force" uninstall "uninstall --dry-run" verify files info repair; do
        for name in 'victim/../other' .. ../root 'other/' '-x' config.ini ''; do
            run "$SKINSTALL" $cmd --install-path "$W/root" -- "$name"
            [ "$status" -eq 2 ] || { echo "$cmd '$name': $status $output"; false; }
            [[ "$output" == *"'$name' is not a package name: it "* ]]
            [[ "$output" == *"one directory name under ai_core/ of letters, digits and '._+-'"* ]]
            [[ "$output" != *"symbolic link"* ]]
        done
    done
    # The data loss of issue 26, spelled as a user would.
    run si uninstall --force 'victim/../other'
    [ "$status" -eq 2 ]
    [[ "$output" == *"'victim/../other' is not a package name: it contains '/'"* ]]
    run si uninstall ..
    [ "$status" -eq 2 ]
    [[ "$output" == *"'..' is not a package name"* ]] && [[ "$output" != *"symbolic link"* ]]
    unchanged
    run si list
    [[ "$output" == *"other "*"1"* ]] && [[ "$output" != *DAMAGED* ]]
}

@test "a bad --log-file or --from is refused before any work (exit 2)" {
    mkpkg k1
    mkdir root logs
    ln -s "$W/logs/real.log" logs/link.log
    snapshot
    for bad in logs logs/ logs/link.log nodir/x.log ''; do
        run si install k1.run --log-file "$bad"
        [ "$status" -eq 2 ] || { echo "'$bad': $status $output"; false; }
        [[ "$output" == *"--log-file '$bad' "* ]]
    done
    unchanged
    [ ! -e "$(ai)/k1" ]
    si install k1.run -q --log-file logs/site.log
    grep -q '"action":"installed"' logs/site.log
    snapshot
    for bad in logs missing.run ''; do
        run si repair k1 --from "$bad"
        [ "$status" -eq 2 ] || { echo "'$bad': $status $output"; false; }
        [[ "$output" == *"--from '$bad': "* ]]
        [[ "$output" != *repairing* ]]
    done
    unchanged
}

@test "uninstall --force removes a package directory that is a symlink as a link, never its target" {
    mkpkg k1
    mkdir root elsewhere
    si install k1.run -q
    echo precious >elsewhere/keep.txt
    mv "$(ai)/k1" k1.moved
    ln -s "$W/elsewhere" "$(ai)/k1"
    run si uninstall k1
    [ "$status" -eq 1 ]
    [[ "$output" == *"skinstall uninstall --force k1"* ]]
    run si uninstall --force k1
    [ "$status" -eq 0 ]
    [ ! -e "$(ai)/k1" ] && [ ! -L "$(ai)/k1" ]
    [ "$(cat elsewhere/keep.txt)" = precious ]
    ! grep -q k1 "$(ai)/config.ini"
    run si verify
    [ "$status" -eq 0 ]
}

@test "escape and bell bytes read from files never reach the terminal raw" {
    mkpkg k1
    mkdir root outputs
    si install k1.run -q
    cp k1.run outputs/
    esc=$'\x1b]0;pwned\x07\x1b[2J'
    # The history: a raw line, a JSON line whose fields decode to escapes, a C1 CSI.
    printf '%s\n' "$esc" >>"$(ai)/log/skinstall.log"
    printf '{"time":"\\u001b[2J","action":"installed","user":"\\u0007","package":"k\\u009b1"}\n' \
        >>"$(ai)/log/skinstall.log"
    # The install record info shows, and a file verify reports.
    printf '{"installed_by":"\\u001b]0;x\\u0007","from":"/\\u001b[2J.run","signature":"\\u009b31m"}\n' \
        >"$(ai)/k1/.skforge-installed.json"
    touch "$(ai)/k1/soc/evil$esc"
    # A compile log naming a crafted uninstall script.
    printf 'uninstall with: %s/opp/static_kernel/ai_core/k1%s/uninstall.sh\n' "$W/root" \
        $'\x1b[2J\x07' >job.log
    for cmd in history "history --json" "info k1" "info k1 --json" verify "verify --json" \
        "files k1" "list" "owner $(ai)/k1/soc/evil$esc" "cleanup-from-log job.log --outputs outputs"; do
        run si $cmd
        no_raw_controls || { echo "$cmd: $output" | od -c | head; false; }
    done
    run si history
    [[ "$output" == *"(unreadable) ?]0;pwned??[2J"* ]]
    [[ "$output" == *"?[2J ? installed k?1"* ]]
    run si info k1
    [[ "$output" == *"Installed by:   ?]0;x?"* ]]
    # A usage error quoting its argument, and an unknown command.
    run "$SKINSTALL" "frob$esc"
    no_raw_controls
    run si install --nope"$esc"
    no_raw_controls
}

@test "an option that takes a value refuses another option as it, in the stub and in the apps" {
    mkpkg k1
    mkdir root
    snapshot
    run sh k1.run --install-path --quiet
    [ "$status" -eq 2 ]
    [[ "$output" == *"--install-path needs a directory, not the option '--quiet'"* ]]
    run sh k1.run --extract -q
    [ "$status" -eq 2 ]
    [[ "$output" == *"--extract needs a directory, not the option '-q'"* ]]
    run "$SKINSTALL" install k1.run --install-path --quiet
    [ "$status" -eq 2 ]
    [[ "$output" == *"--install-path needs a value, not the option '--quiet'"* ]]
    run "$SKINSTALL" install k1.run --install-path "$W/root" --log-file --json
    [ "$status" -eq 2 ]
    [[ "$output" == *"--log-file needs a value, not the option '--json'"* ]]
    run "$SKC" pack src-k1-1 -o --quiet --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"needs a value, not the option '--quiet'"* ]]
    unchanged
    # A negative number is still a value, refused by its own rule.
    run si list --lock-timeout -1
    [ "$status" -eq 2 ]
    [[ "$output" == *"--lock-timeout must be 0 or more seconds"* ]]
}

@test "repair says what it will do only after its checks pass" {
    mkpkg k1 1
    mkdir root
    si install k1.run -q
    cp k1.run k1-1.run
    mkpkg k1 2
    rm "$(ai)/k1/soc/Add/add.o"
    run si repair k1 --from k1.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"reinstall restores the installed version"* ]]
    [[ "$output" != *repairing* ]]
    run si repair k1 --from k1-1.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"repairing k1 from k1-1.run"* ]]
}

@test "history shows what it can of a damaged log and warns; --json stays valid JSON" {
    mkpkg k1
    mkdir root
    si install k1.run -q
    printf '{"unreadable": 1}\n[1,2]\n{"time":"x","action":"y"\n' >>"$(ai)/log/skinstall.log"
    printf 'bad \xff\xfe byte\n{"time":"t","action":"a","package":"p\xff"}\n' >>"$(ai)/log/skinstall.log"
    si uninstall k1 -q
    run --separate-stderr si history
    [ "$status" -eq 0 ]
    [[ "$output" == *" installed k1 1 ok  [skinstall install k1.run -q --install-path "* ]]
    [[ "$output" == *'(unreadable) {"unreadable": 1}'* ]]
    [[ "$output" == *"(unreadable) bad ?? byte"* ]]
    [[ "$output" == *" uninstalled k1 1 ok  [skinstall uninstall k1 "* ]]
    [[ "$stderr" == *"WARN: 5 line(s) of the history"*"not history lines"* ]]
    run --separate-stderr si history --json
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [l.get("action") for l in d] == ["installed", None, None, None, None, None, "uninstalled"], d
assert d[1] == {"unreadable": "{\"unreadable\": 1}"}, d[1]
assert d[4] == {"unreadable": "bad \ufffd\ufffd byte"}, d[4]'
}

@test "install with a .run path or install path that is not UTF-8 succeeds and records its history" {
    mkpkg k1
    mkdir "root"$'\xff' "dir"$'\xfe'
    cp k1.run "dir"$'\xfe'/k1.run
    run "$SKINSTALL" install "dir"$'\xfe'/k1.run --install-path "$W/root"$'\xff'
    [ "$status" -eq 0 ]
    [[ "$output" != *WARN* ]]
    log="$W/root"$'\xff'/opp/static_kernel/ai_core/log/skinstall.log
    python3 -c 'import json,sys; l=json.loads(open(sys.argv[1],"rb").read()); assert l["action"]=="installed", l' "$log"
    run "$SKINSTALL" history --install-path "$W/root"$'\xff' --json
    [ "$status" -eq 0 ]
    run "$SKINSTALL" info k1 --install-path "$W/root"$'\xff' --json
    [ "$status" -eq 0 ]
    run "$SKINSTALL" verify --install-path "$W/root"$'\xff'
    [ "$status" -eq 0 ]
}

@test "a history that cannot be written is a warning after the change, never the failure" {
    mkpkg k1
    mkdir -p root
    si install k1.run -q
    si uninstall k1 -q
    rm "$(ai)/log/skinstall.log"
    mkdir "$(ai)/log/skinstall.log" # a directory planted where the log goes
    run si install k1.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: the change is made but its history line is not"* ]]
    [ -f "$(ai)/k1/manifest.json" ]
}

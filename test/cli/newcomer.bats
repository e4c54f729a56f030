#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A newcomer's first hour (issue 25, item 5): each message an operator on a fresh host met that
# left them without a next step, reproduced, with the message or behaviour it now has.
load helpers

EX=${SKFORGE_SOURCE_DIR:?}/share/skforge/examples

@test "the host target without a C++ compiler says to install g++ or set CXX" {
    mkdir empty
    run env -u CXX PATH="$W/empty" "$SKC" compile "$EX/two_stream/graph.yaml" --npu-arch host -o out --no-cache
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"the host target needs a C++ compiler: cannot run 'c++'"* ]]
    [[ "$output" == *"apt-get install g++"*"set CXX"* ]]
    run env CXX=/no/such/g++ "$SKC" compile "$EX/two_stream/graph.yaml" --npu-arch host -o out --no-cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot run '/no/such/g++'"*"apt-get install g++"* ]]
}

@test "skc pack of a copied kernel tree takes the package name its index uses; disagreeing binPaths name --name" {
    cp -r "$EX/package" tree
    run "$SKC" pack tree -o mine.run --package-version 1.0.0 --npu-arch dav-2201
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"packed demo_kernels 1.0.0 into mine.run"* ]]
    run "$SKC" inspect mine.run --json
    [[ "$output" == *'"name": "demo_kernels"'* ]]
    # --name still decides, and is checked against the index as before.
    run "$SKC" pack tree -o other.run --package-version 1.0.0 --name other
    [ "$status" -eq 1 ]
    [[ "$output" == *"is outside the package (it must start with 'other/')"* ]]
    [[ "$output" != *"give the name"* ]]
    # Two names in the index: no guess; the refusal says what to give.
    python3 - tree/config/ascend910b/binary_info_config.json <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
e = dict(doc["AddCustom"]["staticList"][0], binPath="someone_else/ascend910b/AddCustom/x.o")
doc["AddCustom"]["staticList"].append(e)
json.dump(doc, open(sys.argv[1], "w"))
PY
    run "$SKC" pack tree -o mine.run --package-version 1.0.0
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"the package is named 'mine' after 'mine.run'; give the name its binPaths start with as --name NAME"* ]]
}

@test "skinstall on an install path that does not exist says what the path is and how to start a tree" {
    pack_tree p
    run "$SKINSTALL" install p.run --install-path "$W/opt/x"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"install path '$W/opt/x' does not exist"*"ASCEND_HOME_PATH"*"mkdir -p '$W/opt/x'"* ]]
    [ ! -e "$W/opt" ]
    run "$SKINSTALL" list --install-path "$W/opt/x"
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not exist"*"nothing is installed there"* ]]
    mkdir -p "$W/opt/x"
    "$SKINSTALL" install p.run --install-path "$W/opt/x" -q
}

@test "--help names the documents where an installed system has them" {
    local tool cmd text
    for tool in "$SKC" "$SKINSTALL" "$SKRUN"; do
        text=$("$tool" --help)
        for cmd in $("$tool" --help | awk '/^  [a-z][a-z-]+  /{print $1}'); do
            text+=$("$tool" "$cmd" --help 2>/dev/null || true)
        done
        # No bare source-tree path, and every document named is one skforge ships.
        ! grep -E '(^|[^/])share/doc/' <<<"$text"
        for doc in $(grep -oE '[a-z-]+\.md in /usr/share/doc/skforge/' <<<"$text" | cut -d' ' -f1 | sort -u); do
            [ -f "$SKFORGE_SOURCE_DIR/share/doc/$doc" ]
        done
        grep -q '/usr/share/doc/skforge/' <<<"$text"
    done
}

@test "a .run's usage and errors name the file that was run" {
    pack_tree p
    cp p.run renamed.run
    run sh renamed.run --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"Usage: sh renamed.run [OPTION]..."* ]]
    [[ "$output" == *"Static-kernel package p, version 1.2.3"* ]]
    run sh ./renamed.run --bogus
    [ "$status" -eq 2 ]
    [[ "$output" == *"./renamed.run: ERROR: unknown option '--bogus'"*"Try 'sh ./renamed.run --help'."* ]]
}

@test "a .run takes --trusted-key: skinstall checks the signature; without skinstall it refuses, installing nothing" {
    "$SKC" keygen -o k >/dev/null
    "$SKC" keygen -o other >/dev/null
    pack_tree p --sign-key k.pem
    pack_tree u
    mkdir -p root bin
    ln -s "$SKINSTALL" bin/skinstall
    local before
    # Without skinstall on PATH: refused before anything is written.
    before=$(tree_digest root)
    run sh p.run --install-path root --trusted-key k.pub.pem
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"checking the signature needs skinstall, which is not on PATH"*"nothing was installed"* ]]
    [ "$(tree_digest root)" = "$before" ]
    # With skinstall: the wrong key is refused, the right one installs; an unsigned package is
    # refused with --require-signature.
    run env PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 sh p.run --install-path root --trusted-key=other.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"signed by a key that is not trusted"* ]]
    [ ! -e root/opp/static_kernel/ai_core/p ]
    run env PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 sh u.run --install-path root --trusted-key k.pub.pem --require-signature
    [ "$status" -eq 1 ]
    [ ! -e root/opp/static_kernel/ai_core/u ]
    (cd root && env PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 sh ../p.run --install-path . --trusted-key ../k.pub.pem -q)
    [ -f root/opp/static_kernel/ai_core/p/manifest.json ]
    run sh p.run --uninstall --install-path root --trusted-key k.pub.pem
    [ "$status" -eq 2 ]
    [[ "$output" == *"apply only to --install, --upgrade and --reinstall"* ]]
    run sh p.run --install-path root --require-signature
    [ "$status" -eq 2 ]
    [[ "$output" == *"--require-signature needs at least one --trusted-key"* ]]
    run sh p.run --install-path root --trusted-key missing.pem
    [ "$status" -eq 2 ]
    [[ "$output" == *"--trusted-key 'missing.pem': not a readable file"* ]]
}

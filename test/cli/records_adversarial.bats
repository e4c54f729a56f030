#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Issue 37's two fast paths of the scripts, attacked: install.sh's index records (the package's own
# index entries as skc pack read them) must give the global index the awk gives from the files
# and skinstall writes, through a package's whole life; a package whose records were edited is
# refused by every skinstall command that would install it, --dry-run included; the manifest the
# scripts checked is the one they install (a payload holding a member twice is refused).
load helpers

AI=opp/static_kernel/ai_core

# index_pkg NAME VERSION SOC=TEXT...: ./NAME-VERSION.run, with the kernels a.o, b.o and c.o
# under <soc>/Add/ for each SoC directory given and TEXT as that SoC's index.
index_pkg() {
    local name=$1 version=$2 arg soc k
    shift 2
    rm -rf pt
    for arg in "$@"; do
        soc=${arg%%=*}
        mkdir -p "pt/$soc/Add" "pt/config/$soc"
        for k in a b c; do printf '%s %s %s %s\n' "$name" "$version" "$soc" "$k" >"pt/$soc/Add/$k.o"; done
        printf '%s\n' "${arg#*=}" >"pt/config/$soc/binary_info_config.json"
    done
    "$SKC" pack pt --name "$name" -o "$name-$version.run" --package-version "$version" -q >/dev/null
}

# same_indexes A B: the trees A and B have the same global index files, byte for byte, and the
# same config.ini.
same_indexes() {
    local f
    for f in $(cd "$1/$AI" && ls config/*/binary_info_config.json 2>/dev/null) \
        $(cd "$2/$AI" && ls config/*/binary_info_config.json 2>/dev/null); do
        cmp "$1/$AI/$f" "$2/$AI/$f"
    done
    cmp "$1/$AI/config.ini" "$2/$AI/config.ini"
}

@test "index texts written to trip the records up give the global index the awk and skinstall give: an empty OpType name, simplifiedKey deeper than the entry, 64 levels, DEL and raw UTF-8, an OpType in two SoCs, 3,000 entries with replaced keys (issue 37)" {
    local big i
    big='{"Add":{"staticList":['
    for i in $(seq 0 2999); do
        big="$big{\"binPath\":\"tk/ascend910b/Add/$(printf 'abc' | cut -c$((i % 3 + 1))).o\",\"simplifiedKey\":\"k$((i % 1700))\",\"d\":{\"i\":$i}},"
    done
    big="${big%,}]},\"Mul\":{\"staticList\":[{\"binPath\":\"tk/ascend910b/Add/a.o\"}]}}"
    index_pkg tk 1 "ascend910b=$big" \
        "ascend310p={\"\":{\"staticList\":[{\"binPath\":\"tk/ascend310p/Add/a.o\",\"simplifiedKey\":\"e\"}]},
 \"Add\":{\"staticList\":[{\"n\":{\"simplifiedKey\":\"inner\"},\"binPath\":\"tk/ascend310p/Add/a.o\",\"simplifiedKey\":\"x\"},
  {\"binPath\":\"tk/ascend310p/Add/b.o\",\"q\":[{\"simplifiedKey\":\"y\"}]},{\"binPath\":\"tk/ascend310p/Add/b.o\",\"q\":[{\"simplifiedKey\":\"z\"}]},
  {\"binPath\":\"tk/ascend310p/Add/c.o\",\"v\":$(printf '[%.0s' $(seq 60))-0.0e+00$(printf ']%.0s' $(seq 60))}]},
 \"A$(printf '\177')dd\":{\"staticList\":[{\"binPath\":\"tk/ascend310p/Add/a.o\",\"s\":\"x$(printf '\177')y \\t\\u00e9\"}]},
 \"Ädd中\":{\"staticList\":[{\"binPath\":\"tk/ascend310p/Add/c.o\",\"n\":123456789012345678901234567890}]}}" \
        'ascend950={"Add":{"staticList":[{"binPath":"tk/ascend950/Add/a.o","simplifiedKey":"k1"}]},"Mul":{"staticList":[]}}'
    mkdir rec parsed ref
    logging_cat wrap "$W/reads"
    PATH="$W/wrap:$PATH" sh tk-1.run --install-path="$W/rec" -q
    [ ! -e reads ] # every index came from the records
    SKFORGE_INDEX_RECORDS=0 PATH="$W/wrap:$PATH" sh tk-1.run --install-path="$W/parsed" -q
    [ "$(grep -c index-read reads)" = 3 ]
    "$SKINSTALL" install tk-1.run --install-path ref -q
    same_indexes rec ref
    same_indexes parsed ref
    [ "$(grep -c binPath "ref/$AI/config/ascend910b/binary_info_config.json")" = 1701 ]
    [ "$(grep -c binPath "ref/$AI/config/ascend310p/binary_info_config.json")" = 6 ]
}

@test "through a package's life (install, another process's install, upgrade to another index, uninstall of one of two, downgrade) the scripts' global index, from records or from the files, is skinstall's (issue 37)" {
    index_pkg tk 1 'ascend910b={"Add":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"k1"},{"binPath":"tk/ascend910b/Add/b.o","simplifiedKey":"k2"}]},"Mul":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"m1"}]}}' \
        'ascend310p={"Add":{"staticList":[{"binPath":"tk/ascend310p/Add/a.o"}]}}'
    index_pkg tk2 1 'ascend910b={"Add":{"staticList":[{"binPath":"tk2/ascend910b/Add/a.o","simplifiedKey":"k1"},{"binPath":"tk2/ascend910b/Add/b.o","simplifiedKey":"k3"}]}}' \
        'ascend310p={"Sub":{"staticList":[{"binPath":"tk2/ascend310p/Add/a.o"}]}}'
    index_pkg tk 2 'ascend910b={"Add":{"staticList":[{"binPath":"tk/ascend910b/Add/b.o","simplifiedKey":"k2"},{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"k3","v":2}]},"Div":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o"}]}}' \
        'ascend310p={"Zed":{"staticList":[]}}'
    mkdir rec parsed ref
    # step SKINSTALL_ARGS -- RUN_ARGS: the same change by skinstall in ref and by the .run alone
    # in rec (records) and parsed (SKFORGE_INDEX_RECORDS=0); then the three global indexes agree.
    step() {
        local a=() t
        while [ "$1" != -- ]; do a+=("$1"); shift; done
        shift
        [ "${#a[@]}" = 0 ] || "$SKINSTALL" "${a[@]}" --install-path ref -q
        for t in rec parsed; do
            if [ "$t" = rec ]; then sh "$@" --install-path="$W/$t" -q; else SKFORGE_INDEX_RECORDS=0 sh "$@" --install-path="$W/$t" -q; fi
        done
        same_indexes rec ref
        same_indexes parsed ref
    }
    step install tk-1.run -- tk-1.run
    step install tk2-1.run -- tk2-1.run
    step -- tk-1.run # another process's install: already installed, the index brought up to date
    step upgrade tk-2.run -- tk-2.run --upgrade
    step -- tk-2.run
    step uninstall tk2 -- tk2-1.run --uninstall
    step install tk2-1.run -- tk2-1.run
    step upgrade tk-1.run --allow-downgrade -- tk-1.run --upgrade --allow-downgrade
    step uninstall tk -- tk-1.run --uninstall
    grep -q '"tk2/ascend910b/Add/a.o","simplifiedKey":"k1"' "rec/$AI/config/ascend910b/binary_info_config.json"
}

@test "skinstall --dry-run refuses a package whose install.sh carries other index records, in the real command's words, and writes nothing (issue 37)" {
    index_pkg tk 1 'ascend910b={"Add":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"Add/1"}]}}'
    sh tk-1.run --noexec >/dev/null
    sed 's|\tk:"Add/1"\t|\tk:"Add/2"\t|' tk/install.sh >edited.sh
    ! cmp -s tk/install.sh edited.sh
    mkdir bad root
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" tk-1.run bad/tk.run install.sh edited.sh --fix-header-scripts
    local why="bad/tk.run: refusing: its install.sh's index records are not the entries of its index files"
    run "$SKINSTALL" install bad/tk.run --install-path root --dry-run
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$why"* ]]
    [ -z "$(ls -A root)" ]
    # Over an installed version, as an upgrade: refused; the tree as it was.
    "$SKINSTALL" install tk-1.run --install-path root -q
    local before
    before=$(state_digest root)
    run "$SKINSTALL" upgrade bad/tk.run --install-path root --reinstall --dry-run
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$why"* ]]
    run "$SKINSTALL" upgrade bad/tk.run --install-path root --reinstall
    [ "$status" -eq 1 ]
    [[ "$output" == *"$why"* ]]
    [ "$(state_digest root)" = "$before" ]
    # The package as packed still passes, and what is already installed is not read again.
    run "$SKINSTALL" upgrade tk-1.run --install-path root --reinstall --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == "would reinstall tk 1"* ]]
    run "$SKINSTALL" install tk-1.run --install-path root --dry-run
    [ "$status" -eq 0 ]
    [[ "$output" == *"would leave tk 1 as it is (already installed)" ]]
}

@test "a dry run reads the payload as the real command does: a .run whose file differs from its manifest (header digests fixed) is refused by install --dry-run and verify --fix --dry-run in the real command's words (issue 37)" {
    index_pkg tk 1 'ascend910b={"Add":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"Add/1"}]}}'
    mkdir root other
    cp tk-1.run kept.run
    "$SKINSTALL" install kept.run --install-path root -q
    # The .run the package was installed from, rewritten: a kernel of the same size, other bytes,
    # the manifest as it was; the header's payload size and digest fixed.
    printf 'tk 1 ascend910b X\n' >new.o
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" tk-1.run kept.run ascend910b/Add/a.o new.o --stale-manifest
    local why="payload entry 'ascend910b/Add/a.o' does not match its manifest SHA-256"
    run "$SKINSTALL" install kept.run --install-path other --dry-run
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"kept.run: $why"* ]]
    [ -z "$(ls -A other)" ]
    # A changed installed kernel: verify --fix would restore it from kept.run, which it cannot.
    printf 'tk 1 ascend910b Y\n' >"root/$AI/tk/ascend910b/Add/a.o"
    local before
    before=$(state_digest root)
    run "$SKINSTALL" verify --fix --dry-run --install-path root
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot restore it: $W/kept.run: $why"* ]]
    [[ "$output" == *"0 problem(s) would be fixed, 1 left"* ]]
    [ "$(state_digest root)" = "$before" ]
    run "$SKINSTALL" verify --fix --install-path root
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot restore it: $W/kept.run: $why"* ]]
}

@test "the .run alone refuses a payload that holds its manifest.json or uninstall.sh twice, as skinstall does, instead of installing the unchecked last copy (issue 37, the package's own manifest)" {
    index_pkg tk 1 'ascend910b={"Add":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"Add/1"}]}}'
    sh tk-1.run --noexec >/dev/null
    # A second manifest.json after the payload's last entry, one skinstall's parser refuses (a
    # repeated key); a second uninstall.sh that is not skforge's.
    sed 's/"format"/"format": 1, "format"/' tk/manifest.json >twice.json
    printf '#!/bin/sh\necho not skforge\n' >twice.sh
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" tk-1.run m.run manifest.json twice.json --twice
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" tk-1.run u.run uninstall.sh twice.sh --twice
    local r
    for r in m u; do
        mkdir "root$r" "ref$r"
        run sh "$r.run" --install-path="$W/root$r" -q
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"'$W/$r.run': its payload holds '"*"' more than once (skinstall refuses it too); nothing was installed"* ]]
        [ -z "$(ls -A "root$r/$AI")" ] || [ "$(ls -A "root$r/$AI")" = config ]
        [ ! -e "root$r/$AI/tk" ] && [ ! -e "root$r/$AI/config.ini" ]
        run "$SKINSTALL" install "$r.run" --install-path "ref$r"
        [ "$status" -ne 0 ]
        [ ! -e "ref$r/$AI/tk" ]
    done
    [[ "$(sh m.run --install-path="$W/rootm" 2>&1)" == *"holds 'manifest.json' more than once"* ]]
    [[ "$(sh u.run --install-path="$W/rootu" 2>&1)" == *"holds 'uninstall.sh' more than once"* ]]
    # The package as packed installs the same way.
    sh tk-1.run --install-path="$W/rootm" -q
    [ -f "rootm/$AI/tk/manifest.json" ]
    cmp tk/uninstall.sh "rootm/$AI/tk/uninstall.sh"
}

@test "installed neighbours' indexes come from their own install.sh's records and their manifests are checked by their own blanked digests; an install.sh other than the one its manifest lists is not trusted, its package's files are read (issue 37)" {
    local p
    for p in ta tb tc; do
        index_pkg "$p" 1 "ascend910b={\"Add\":{\"staticList\":[{\"binPath\":\"$p/ascend910b/Add/a.o\",\"simplifiedKey\":\"k1\"},{\"binPath\":\"$p/ascend910b/Add/b.o\",\"simplifiedKey\":\"$p\"}]}}"
    done
    mkdir rec ref
    for p in ta tb; do
        sh "$p-1.run" --install --install-path="$W/rec" -q
        "$SKINSTALL" install "$p-1.run" --install-path ref -q
    done
    logging_cat wrap "$W/reads"
    logging_awk wrap "$W/passes"
    # A third service's package: ta's and tb's indexes from their records, their manifests by
    # digest; nothing read as JSON.
    PATH="$W/wrap:$PATH" sh tc-1.run --install --install-path="$W/rec" -q
    "$SKINSTALL" install tc-1.run --install-path ref -q
    [ ! -e reads ] && [ ! -e passes ]
    same_indexes rec ref
    grep -q '"tc/ascend910b/Add/a.o","simplifiedKey":"k1"' "rec/$AI/config/ascend910b/binary_info_config.json"
    # An operator's uninstall of tb merges ta and tc from their records.
    PATH="$W/wrap:$PATH" sh "rec/$AI/tb/uninstall.sh" --operator -q
    "$SKINSTALL" uninstall tb --install-path ref -q
    [ ! -e reads ] && [ ! -e passes ]
    same_indexes rec ref
    # ta's install.sh edited after installation: no longer the script its manifest lists, so
    # neither its records nor its blanked digest are taken; its index and manifest are read.
    printf '# edited\n' >>"rec/$AI/ta/install.sh"
    PATH="$W/wrap:$PATH" sh tc-1.run --install-path="$W/rec" -q
    [ "$(cat reads)" = index-read ]
    [ "$(cat passes)" = manifest-json-pass ]
    same_indexes rec ref
}

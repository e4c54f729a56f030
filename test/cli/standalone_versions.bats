#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The .run alone replaces an installed version by skinstall's rules (transaction.cpp,
# version_outcome), in its words: --upgrade to a newer version, an older one only with
# --allow-downgrade, the same version's other files only with --reinstall; versions in dpkg's
# order (lib/install/src/version.cpp), compared by the scripts' awk as by skinstall.
load helpers

AI=opp/static_kernel/ai_core

# versions V...: ./p-V.run for each V, one package p whose kernel says its version.
versions() {
    local v
    mkdir -p t/ascend910b/Add
    for v in "$@"; do
        printf '%s\n' "$v" >t/ascend910b/Add/a.o
        "$SKC" pack t --name p -o "p-$v.run" --package-version "$v" -q >/dev/null
    done
}

# outcome TREE OLD NEW ACTION...: installs OLD fresh into TREE (by the .run alone, or by
# skinstall when TREE is "sk"), then NEW with ACTION; prints "ok <installed version>" or the
# error without its program's prefix and the tree's path.
outcome() {
    local tree=$1 old=$2 new=$3 out rc
    shift 3
    rm -rf "$tree"
    mkdir "$tree"
    if [ "$tree" = sk ]; then
        "$SKINSTALL" install "p-$old.run" --install-path sk -q
        out=$("$SKINSTALL" "$@" "p-$new.run" --install-path sk -q 2>&1) && rc=0 || rc=$?
    else
        SKFORGE_NO_SKINSTALL=1 sh "p-$old.run" --install --install-path="$W/$tree" -q
        out=$(SKFORGE_NO_SKINSTALL=1 sh "p-$new.run" "$@" --install-path="$W/$tree" -q 2>&1) && rc=0 || rc=$?
    fi
    if [ "$rc" = 0 ]; then
        echo "ok $(cat "$tree/$AI/p/ascend910b/Add/a.o")"
    else
        out=${out##*ERROR: }
        out=${out#"$W/p-$new.run: "}
        out=${out#"p-$new.run: "}
        echo "${out//$W\/$tree/ROOT}" | sed "s|'$tree/|'ROOT/|g"
    fi
}

@test "the .run alone upgrades, downgrades and reinstalls by skinstall's rules and in its words; versions compared in dpkg's order as skinstall compares them" {
    versions 1.0 1.2 1.10 1.10~rc1 1.10-1 1.10-1a 1.10+b 2 02
    local c old new sh_out sk_out
    # OLD NEW | .run option -- skinstall arguments
    local cases=(
        "1.2 1.10|--upgrade|upgrade"
        "1.10 1.2|--upgrade|upgrade"
        "1.10 1.2|--upgrade --allow-downgrade|upgrade --allow-downgrade"
        "1.10 1.10~rc1|--upgrade|upgrade"
        "1.10~rc1 1.10|--upgrade|upgrade"
        "1.10 1.10-1|--upgrade|upgrade"
        "1.10-1 1.10-1a|--upgrade|upgrade"
        "1.10+b 1.10-1|--upgrade|upgrade"
        "2 02|--upgrade|upgrade"
        "02 2|--reinstall|install --reinstall"
        "1.0 1.2|--reinstall|install --reinstall"
        "1.2 1.0|--reinstall|install --reinstall"
        "1.0 1.2|--install|install"
    )
    for c in "${cases[@]}"; do
        IFS='|' read -r vers runopt skargs <<<"$c"
        old=${vers% *}
        new=${vers#* }
        # shellcheck disable=SC2086 # the options are words
        sh_out=$(outcome sh "$old" "$new" $runopt)
        # shellcheck disable=SC2086
        sk_out=$(outcome sk "$old" "$new" $skargs)
        echo "$old -> $new ($runopt): .run alone: $sh_out; skinstall: $sk_out"
        # The same outcome; a refusal in the same words up to what to type instead (the .run's
        # option, skinstall's command).
        if [ "$runopt" != --install ]; then
            sk_out=${sk_out#*error: }
            [ "${sh_out%%; use*}" = "${sk_out%%; use*}" ]
        fi
    done
    # The ones that matter, spelled out.
    [ "$(outcome sh 1.2 1.10 --upgrade)" = "ok 1.10" ]
    [[ "$(outcome sh 1.10 1.2 --upgrade)" == "p 1.2 is older than the installed 1.10 in 'ROOT/$AI/p'; use --allow-downgrade to replace it" ]]
    [ "$(outcome sh 1.10 1.2 --upgrade --allow-downgrade)" = "ok 1.2" ]
    [[ "$(outcome sh 2 02 --upgrade)" == "p 2 is installed in 'ROOT/$AI/p' with different content under the same version; replacing it needs --reinstall" ]]
    [ "$(outcome sh 2 02 --reinstall)" = "ok 02" ]
    # --allow-downgrade is --upgrade's: a usage error elsewhere, nothing touched.
    run sh p-1.0.run --install --allow-downgrade --install-path="$W/none"
    [ "$status" -eq 2 ]
    [[ "$output" == *"--allow-downgrade applies only to --upgrade"* ]]
    [ ! -e none ]
}

@test "with skinstall on PATH the .run hands --allow-downgrade and --reinstall over to it" {
    versions 1.2 1.10 2 02
    mkdir bin h
    ln -s "$SKINSTALL" bin/skinstall
    unset SKFORGE_NO_SKINSTALL
    PATH="$W/bin:$PATH" sh p-1.10.run --install --install-path="$W/h" -q
    run env PATH="$W/bin:$PATH" sh p-1.2.run --upgrade --install-path="$W/h"
    [ "$status" -eq 1 ]
    [[ "$output" == *"skinstall upgrade: error: p 1.2 is older than the installed 1.10"* ]]
    PATH="$W/bin:$PATH" sh p-1.2.run --upgrade --allow-downgrade --install-path="$W/h" -q
    [ "$(cat "h/$AI/p/ascend910b/Add/a.o")" = 1.2 ]
    PATH="$W/bin:$PATH" sh p-2.run --upgrade --install-path="$W/h" -q
    PATH="$W/bin:$PATH" sh p-02.run --reinstall --install-path="$W/h" -q
    [ "$(cat "h/$AI/p/ascend910b/Add/a.o")" = 02 ]
    "$SKINSTALL" verify --install-path h -q
}

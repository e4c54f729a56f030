#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The per-key record (config/static_kernel.keys): installs, upgrades and uninstalls merge from it
# and must write the global index a full rebuild writes; whatever it does not describe (the
# package's own scripts ran, it is damaged or gone) is rebuilt from the packages.
load helpers

AI=opp/static_kernel/ai_core
IDX=opp/static_kernel/ai_core/config/soc/binary_info_config.json

# mkpkg NAME VERSION KEYS...: NAME-VERSION.run whose index has one Add entry per key (and a Mul
# entry for the first), each naming the package's own kernel.
mkpkg() {
    local name=$1 v=$2 d="src-$1-$2" entries="" k
    shift 2
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s %s\n' "$name" "$v" >"$d/soc/Add/add.o"
    for k in "$@"; do
        entries="$entries${entries:+,}{\"simplifiedKey\":\"Add/$k\",\"binPath\":\"$name/soc/Add/add.o\",\"v\":\"$v\"}"
    done
    printf '{"Add":{"staticList":[%s]},"Mul":{"staticList":[{"simplifiedKey":"Mul/%s","binPath":"%s/soc/Add/add.o"}]}}\n' \
        "$entries" "$name" "$name" >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$name-$v.run" --name "$name" --package-version "$v" -q
}

# same_as_rebuild: the global index of `root` is byte for byte what recover writes from the
# packages alone (a copy of the tree without the record).
same_as_rebuild() {
    rm -rf copy && cp -a root copy
    rm -f "copy/$AI/config/static_kernel.keys"
    "$SKINSTALL" recover --install-path "$W/copy" -q
    [ -f "copy/$AI/config/static_kernel.keys" ]
    if [ -f "root/$IDX" ] || [ -f "copy/$IDX" ]; then cmp "root/$IDX" "copy/$IDX"; fi
}

@test "random installs, upgrades and uninstalls write the global index a full rebuild writes" {
    for p in a b c d e; do
        mkpkg "$p" 1 1 2 "$p" 3
        mkpkg "$p" 2 3 4 "$p"
    done
    mkdir root
    declare -A v
    RANDOM=22
    for step in $(seq 1 24); do
        p=$(printf 'a\nb\nc\nd\ne\n' | sed -n "$((RANDOM % 5 + 1))p")
        if [ -n "${v[$p]:-}" ] && [ $((RANDOM % 3)) = 0 ]; then
            "$SKINSTALL" uninstall "$p" --install-path "$W/root" -q
            v[$p]=
        elif [ -n "${v[$p]:-}" ]; then
            v[$p]=$((3 - v[$p]))
            "$SKINSTALL" upgrade "$p-${v[$p]}.run" --allow-downgrade --install-path "$W/root" -q
        else
            v[$p]=$((RANDOM % 2 + 1))
            "$SKINSTALL" install "$p-${v[$p]}.run" --install-path "$W/root" -q
        fi
        same_as_rebuild || { echo "step $step ($p): not the full rebuild"; return 1; }
    done
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "installs and uninstalls by the packages' own scripts between skinstall commands: the record is rebuilt" {
    mkpkg a 1 1 2
    mkpkg b 1 2 3
    mkpkg c 1 1 3
    mkpkg d 1 4
    mkdir root
    "$SKINSTALL" install a-1.run b-1.run --install-path "$W/root" -q
    SKFORGE_NO_SKINSTALL=1 sh c-1.run --install-path="$W/root" -q
    "$SKINSTALL" uninstall b --install-path "$W/root" -q
    same_as_rebuild
    grep -q '"binPath":"c/soc/Add/add.o"' "root/$IDX"
    SKFORGE_NO_SKINSTALL=1 sh "root/$AI/c/uninstall.sh" -q
    "$SKINSTALL" install d-1.run --install-path "$W/root" -q
    same_as_rebuild
    ! grep -q 'c/soc' "root/$IDX"
    grep -q 'Add/1' "root/$IDX"
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "a record cut short, with a wrong digest or gone is rebuilt; a current one makes recover write nothing" {
    mkpkg a 1 1 2
    mkpkg b 1 2
    mkpkg c 1 3
    mkdir root
    "$SKINSTALL" install a-1.run b-1.run --install-path "$W/root" -q
    keys=root/$AI/config/static_kernel.keys
    before=$(tree_digest root)
    "$SKINSTALL" recover --install-path "$W/root" -q
    [ "$(tree_digest root)" = "$before" ]
    head -c 100 "$keys" >cut && cat cut >"$keys"
    "$SKINSTALL" uninstall b --install-path "$W/root" -q
    same_as_rebuild
    sed -i 's/^\(p\t[0-9]*\ta\t\)ok/\1ok /' "$keys"
    grep -q '^p.[0-9]*.a.ok ' "$keys"
    "$SKINSTALL" install b-1.run --install-path "$W/root" -q
    same_as_rebuild
    rm "$keys"
    "$SKINSTALL" install c-1.run --install-path "$W/root" -q
    [ -f "$keys" ]
    same_as_rebuild
    "$SKINSTALL" verify --install-path "$W/root" -q
}

@test "an index edited in place is seen by its stamp: the package is reported damaged, as without the record" {
    mkpkg a 1 1 2
    mkpkg b 1 2
    mkpkg c 1 3
    mkdir root
    "$SKINSTALL" install a-1.run b-1.run --install-path "$W/root" -q
    sed -i 's/Add\/1/Add\/9/' "root/$AI/a/config/soc/binary_info_config.json"
    run "$SKINSTALL" install c-1.run --install-path "$W/root" -q
    [ "$status" -eq 0 ]
    [[ "$output" == *"package a contributes no kernels to the global index"* ]]
    ! grep -q '"a/soc' "root/$IDX"
    same_as_rebuild
}

@test "a package's config/ swapped for a symbolic link to a copy is seen by its stamp: the record is not used" {
    mkpkg a 1 1 2
    mkpkg b 1 2
    mkpkg c 1 3
    mkdir root elsewhere
    "$SKINSTALL" install a-1.run b-1.run --install-path "$W/root" -q
    grep -q '"a/soc' "root/$IDX"
    # The same files, mtimes kept (cp -a), reached through a link: only the modes on the way
    # tell.
    cp -a "root/$AI/a/config" elsewhere/config
    rm -rf "root/$AI/a/config"
    ln -s "$W/elsewhere/config" "root/$AI/a/config"
    run "$SKINSTALL" install c-1.run --install-path "$W/root" -q
    [ "$status" -eq 0 ]
    ! grep -q '"a/soc' "root/$IDX"
    grep -q '"c/soc' "root/$IDX"
    [ ! -L "root/$AI/config" ]
    same_as_rebuild
}

@test "the record numbers packages in install order and keeps their numbers: a change rewrites only its lines" {
    mkpkg a 1 1 2
    mkpkg b 1 2 3
    mkpkg c 1 4
    mkdir root
    "$SKINSTALL" install a-1.run b-1.run c-1.run --install-path "$W/root" -q
    keys=root/$AI/config/static_kernel.keys
    [ "$(grep '^p' "$keys" | cut -f2,3 | tr '\t\n' ': ')" = "0:a 1:b 2:c " ]
    "$SKINSTALL" uninstall b --install-path "$W/root" -q
    "$SKINSTALL" install b-1.run --install-path "$W/root" -q
    [ "$(grep '^p' "$keys" | cut -f2,3 | tr '\t\n' ': ')" = "0:a 2:c 3:b " ]
    same_as_rebuild
    # verify compares the record renumbered: this one is current.
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" != *"out of date"* ]]
}

@test "an install reads no other package's index: one edited with its stamp kept (touch -r) is not seen until verify" {
    mkpkg a 1 1 2
    mkpkg b 1 2
    mkpkg c 1 3
    mkdir root
    "$SKINSTALL" install a-1.run b-1.run --install-path "$W/root" -q
    idx=root/$AI/a/config/soc/binary_info_config.json
    cp -p "$idx" saved
    # The same size, the same mtime: the stamp cannot tell (installer.md, "What a stamp cannot
    # see"); the install merges from the record and so keeps a's entries as they were.
    sed -i 's/Add\/1/Add\/9/' "$idx"
    touch -r saved "$idx"
    "$SKINSTALL" install c-1.run --install-path "$W/root" -q
    grep -q '"simplifiedKey":"Add/1"' "root/$IDX"
    ! grep -q '"simplifiedKey":"Add/9"' "root/$IDX"
    # verify compares by content and says so; --fix rebuilds from the packages.
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -ne 0 ]
}

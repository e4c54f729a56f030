#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# CANN's run user (issue 14, item 12): skinstall, the .run and its own scripts, run for real as
# an unprivileged user (uid/gid 65534 through setpriv) in a tree that user owns, and refused
# with a plain message in one it does not.
load helpers

HW=65534

# as_hw COMMAND...: runs COMMAND as uid/gid 65534 with no supplementary groups.
as_hw() { setpriv --reuid=$HW --regid=$HW --clear-groups -- "$@"; }

setup() {
    W=$(mktemp -d "${BATS_TMPDIR:-/tmp}/skforge-cli-XXXXXX")
    cd "$W"
    export SOURCE_DATE_EPOCH=1700000000
    [ "$(id -u)" = 0 ] || skip "needs root to run commands as another user (setpriv)"
    command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
    # The scratch directory is 0700 and the build tree may not be reachable for another user:
    # the binaries are copied where uid 65534 can run them.
    chmod 0755 "$W"
    mkdir bin
    cp "$SKINSTALL" bin/skinstall
    chmod 0755 bin bin/skinstall
    HWSK="$W/bin/skinstall"
    export PATH="$W/bin:$PATH"
    export SKFORGE_NO_SKINSTALL=1
    # The names the messages use for uid/gid 65534 (nobody and nogroup on Debian).
    HWUSER=$(getent passwd $HW | cut -d: -f1)
    HWGROUP=$(getent group $HW | cut -d: -f1)
    [ -n "$HWUSER" ] && [ -n "$HWGROUP" ] || skip "uid/gid $HW has no name on this host"
}

# mkpkg NAME VERSION: NAME-VERSION.run holding package NAME with one kernel, an index and a tool.
mkpkg() {
    local d="src-$1-$2"
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s %s\n' "$1" "$2" >"$d/soc/Add/add.o"
    printf '#!/bin/sh\necho tool\n' >"$d/tool.sh"
    chmod 0755 "$d/tool.sh"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/%s","binPath":"%s/soc/Add/add.o"}]}}\n' "$1" "$1" \
        >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1-$2.run" --name "$1" --package-version "$2" -q
    chmod 0644 "$1-$2.run"
}

# hwroot: an install root owned by the run user, as the admin prepares it for CANN's run user.
hwroot() {
    mkdir hw
    chown $HW:$HW hw
    chmod 0770 hw
    AI="$W/hw/opp/static_kernel/ai_core"
}

# modes_are DIRMODE FILEMODE EXECMODE: every directory, plain file and executable the tree has.
modes_are() {
    [ -z "$(find hw/opp -type d ! -perm "$1")" ]
    # The lock's mode does not matter (flock needs only a read-only descriptor); the history
    # is 0640 for every installer.
    [ -z "$(find hw/opp -type f ! -name '*.sh' ! -name static_kernel.lock ! -name 'skinstall.log*' ! -perm "$2")" ]
    [ -z "$(find hw/opp -type f -name '*.sh' ! -perm "$3")" ]
    [ -z "$(find hw/opp ! -uid $HW)" ]
    [ -z "$(find hw/opp ! -gid $HW)" ]
}

@test "skinstall as the run user: install, verify, upgrade, uninstall; 0770 directories, 0640 files" {
    hwroot
    mkpkg k 1
    mkpkg k 2
    mkpkg other 1
    run as_hw "$HWSK" install k-1.run other-1.run --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" == *"installed k 1 into $AI/k"* ]]
    modes_are 0770 0640 0750
    [ "$(stat -c %a "$AI/config.ini")" = 640 ]
    [ "$(stat -c %a "$AI/log/skinstall.log")" = 660 ]
    run as_hw "$HWSK" verify --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" == *"verified 2 package(s)"*": 0 problem(s)"* ]]
    run as_hw "$HWSK" upgrade k-2.run --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" == *"upgraded k 2 into $AI/k, replacing 1"* ]]
    modes_are 0770 0640 0750
    # root reads the run user's tree as it is: the package directory's mode says how it was
    # installed.
    run "$SKINSTALL" verify --install-path "$W/hw"
    [ "$status" -eq 0 ]
    chmod 0644 "$AI/k/soc/Add/add.o"
    run as_hw "$HWSK" verify k --install-path "$W/hw"
    [ "$status" -eq 1 ]
    [[ "$output" == *"k: soc/Add/add.o: changed mode: 0644, expected 0640"* ]]
    run as_hw "$HWSK" uninstall k other --force --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [ ! -e "$AI/k" ]
    [ ! -e "$AI/other" ]
    run as_hw "$HWSK" history --install-path "$W/hw"
    [[ "$output" == *"$HWUSER upgraded k 1 -> 2 ok"* ]]
}

@test "--install-for-all as the run user lets others read: 0775 directories, 0644 files" {
    hwroot
    mkpkg k 1
    run as_hw "$HWSK" install --install-for-all k-1.run --install-path "$W/hw"
    [ "$status" -eq 0 ]
    modes_are 0775 0644 0755
    run as_hw "$HWSK" verify --install-path "$W/hw"
    [ "$status" -eq 0 ]
    # The same through the .run.
    run as_hw sh k-1.run --uninstall --install-path "$W/hw"
    [ "$status" -eq 0 ]
    run as_hw sh k-1.run --install-for-all --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [ "$(stat -c %a "$AI/k/soc/Add/add.o")" = 644 ]
    [ "$(stat -c %a "$AI/k")" = 775 ]
}

@test "the .run and its own scripts as the run user, with and without skinstall, agree on modes" {
    hwroot
    mkpkg k 1
    mkpkg k 2
    # Without skinstall on PATH: the package's install.sh and uninstall.sh.
    run as_hw sh k-1.run --install-path "$W/hw"
    [ "$status" -eq 0 ]
    modes_are 0770 0640 0750
    run as_hw "$HWSK" verify --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" == *": 0 problem(s)"* ]]
    run as_hw sh k-2.run --upgrade --install-path "$W/hw"
    [ "$status" -eq 0 ]
    modes_are 0770 0640 0750
    # Upgraded by an operator: persistent, so its script removes it with --operator.
    run as_hw sh "$AI/k/uninstall.sh" --operator
    [ "$status" -eq 0 ]
    [ ! -e "$AI/k" ]
    # With skinstall on PATH the .run hands over to it.
    run as_hw env -u SKFORGE_NO_SKINSTALL sh k-1.run --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" == *"installed k 1 into $AI/k"* ]]
    [ -f "$AI/k/.skforge-installed.json" ]
    modes_are 0770 0640 0750
    run as_hw env -u SKFORGE_NO_SKINSTALL sh k-2.run --upgrade --install-path "$W/hw"
    [ "$status" -eq 0 ]
    run as_hw env -u SKFORGE_NO_SKINSTALL sh k-2.run --uninstall --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [ ! -e "$AI/k" ]
}

@test "a tree the run user does not own: the message names its owner and group, nothing changes" {
    mkdir root
    mkpkg k 1
    mkpkg new 1
    "$SKINSTALL" install k-1.run --install-path "$W/root" -q
    chmod 0755 root
    before=$(state_digest root)
    who="belongs to user root (uid 0) and group root (gid 0) with mode 0755, and you are user $HWUSER (uid 65534) in group $HWGROUP (gid 65534)"
    for cmd in "install new-1.run" "upgrade new-1.run" "uninstall k" "uninstall --force k" "repair k --from k-1.run" "recover"; do
        run as_hw "$HWSK" $cmd --install-path "$W/root"
        [ "$status" -eq 1 ]
        [[ "$output" == *"'$W/root/opp/static_kernel/ai_core' $who, who may not write it. Run this as root (the user the tree expects)"* ]]
        [ "$(state_digest root)" = "$before" ]
    done
    # The package's own scripts say the same in their words.
    run as_hw sh new-1.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot change '$W/root/opp/static_kernel/ai_core': it belongs to user root (uid 0) and group root (gid 0) with mode 755, and you are user $HWUSER (uid 65534, groups $HWGROUP)"* ]]
    run as_hw sh k-1.run --uninstall --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot change '$W/root/opp/static_kernel/ai_core': it belongs to user root"* ]]
    [ "$(state_digest root)" = "$before" ]
    # Queries still work: they only read.
    run as_hw "$HWSK" list --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"k "*"1"* ]]
    # An empty install root of root's: the first directory cannot be made.
    mkdir empty
    run as_hw "$HWSK" install new-1.run --install-path "$W/empty"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot create directory '$W/empty/opp': '$W/empty' belongs to user root (uid 0)"* ]]
    [ -z "$(ls -A empty)" ]
}

@test "a package root installed into the run user's tree: the run user is told before anything changes" {
    hwroot
    mkpkg k 1
    mkpkg mine 1
    as_hw "$HWSK" install mine-1.run --install-path "$W/hw" -q
    "$SKINSTALL" install k-1.run --install-path "$W/hw" -q
    [ "$(stat -c %U:%a "$AI/k")" = root:755 ]
    before=$(state_digest hw)
    run as_hw "$HWSK" uninstall k --install-path "$W/hw"
    [ "$status" -eq 1 ]
    [[ "$output" == *"'$AI/k' belongs to user root (uid 0) and group root (gid 0) with mode 0755"*"Run this as root"* ]]
    run as_hw sh k-1.run --uninstall --install-path "$W/hw"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot change '$AI/k': it belongs to user root"* ]]
    [ "$(state_digest hw)" = "$before" ]
    # Its own packages stay the run user's to change.
    run as_hw "$HWSK" uninstall mine --install-path "$W/hw"
    [ "$status" -eq 0 ]
}

@test "another member of the run user's group installs and uninstalls in the 0770 tree too" {
    hwroot
    mkpkg a 1
    mkpkg b 1
    as_hw "$HWSK" install a-1.run --install-path "$W/hw" -q
    # uid 65533 in the run user's group only.
    as_member() { setpriv --reuid=65533 --regid=$HW --clear-groups -- "$@"; }
    member=$(getent passwd 65533 | cut -d: -f1)
    member=${member:-uid 65533}
    run as_member "$HWSK" install b-1.run --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" != *"WARN"* ]]
    [ "$(stat -c %u:%g:%a "$AI/b/soc/Add/add.o")" = 65533:$HW:640 ]
    run as_member "$HWSK" verify --install-path "$W/hw"
    [ "$status" -eq 0 ]
    run as_member "$HWSK" uninstall a --install-path "$W/hw"
    [ "$status" -eq 0 ]
    [[ "$output" != *"WARN"* ]]
    [ ! -e "$AI/a" ]
    run as_hw "$HWSK" uninstall b --install-path "$W/hw"
    [ "$status" -eq 0 ]
    run as_hw "$HWSK" history --install-path "$W/hw" --json
    [ "$(echo "$output" | python3 -c 'import json,sys; print([(l["user"], l["action"], l["package"]) for l in json.load(sys.stdin)])')" = "[('$HWUSER', 'installed', 'a'), ('$member', 'installed', 'b'), ('$member', 'uninstalled', 'a'), ('$HWUSER', 'uninstalled', 'b')]" ]
}

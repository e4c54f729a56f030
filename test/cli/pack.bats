#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
load helpers

# expect_refusal PATTERN: `skc pack tree` must exit 1, name the path and reason, write nothing.
expect_refusal() {
    run "$SKC" pack tree -o out.run --package-version 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"$1"* ]] || { echo "missing '$1' in: $output"; return 1; }
    [ ! -e out.run ]
    [ -z "$(find . -maxdepth 1 -name '.out.run.tmp*')" ]
}

@test "pack writes an executable .run named after its stem" {
    make_tree tree
    run "$SKC" pack tree -o kernels_v1.run --package-version 1.2.3 --npu-arch dav-2201 --soc Ascend910B1
    [ "$status" -eq 0 ]
    [[ "$output" == *"packed kernels_v1 1.2.3 into kernels_v1.run"* ]]
    [ -x kernels_v1.run ]
    [ "$(header_value kernels_v1.run NAME)" = kernels_v1 ]
    [ "$(header_value kernels_v1.run SOC_VERSION)" = Ascend910B1 ]
}

@test "pack is byte-for-byte reproducible, whatever the mtimes and the directory" {
    make_tree tree
    pack_tree a
    cp -a tree tree2
    touch -d '2001-01-01' tree2/tool.sh tree2/ascend910b/AddCustom/AddCustom_1.o
    mkdir other && "$SKC" pack tree2 -o other/a.run --package-version 1.2.3 --npu-arch dav-2201 --soc Ascend910B1 -q
    cmp a.run other/a.run
    SOURCE_DATE_EPOCH=1700000001 pack_tree b
    mv b.run other/b.run && pack_tree b
    ! cmp -s b.run other/b.run
}

@test "zstd packages are reproducible and run under sh" {
    pack_tree z --compress zstd --level 5
    mkdir o && (cd o && "$SKC" pack ../tree -o z.run --package-version 1.2.3 --npu-arch dav-2201 --soc Ascend910B1 -q --compress zstd --level 5)
    cmp z.run o/z.run
    [ "$(header_value z.run COMPRESSION)" = zstd ]
    run sh z.run --check
    [ "$status" -eq 0 ]
    sh z.run --extract=x -q
    cmp x/ascend910b/AddCustom/AddCustom_1.o tree/ascend910b/AddCustom/AddCustom_1.o
}

@test "pack normalises modes to 0644 and 0755" {
    make_tree tree
    chmod 0600 tree/ascend910b/AddCustom/AddCustom_1.json
    chmod 0700 tree/ascend910b
    pack_tree m
    "$SKC" inspect m.run --list | grep -q '^f 0644 .* ascend910b/AddCustom/AddCustom_1.json$'
    "$SKC" inspect m.run --list | grep -q '^d 0755 .* ascend910b$'
    "$SKC" inspect m.run --list | grep -q '^f 0755 .* tool.sh$'
}

@test "pack refuses a symlink" {
    make_tree tree
    ln -s /etc/passwd tree/ascend910b/evil
    expect_refusal "tree/ascend910b/evil' is a symbolic link"
}

@test "pack refuses a hardlink" {
    make_tree tree
    ln tree/tool.sh tree/tool2.sh
    expect_refusal "is a hard link (2 names for one file)"
}

@test "pack refuses a FIFO" {
    make_tree tree
    mkfifo tree/pipe
    expect_refusal "tree/pipe' is a FIFO"
}

@test "pack refuses a socket" {
    make_tree tree
    python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' tree/sock
    expect_refusal "tree/sock' is a socket"
}

@test "pack refuses a device" {
    [ "$(id -u)" = 0 ] || skip "needs root to create a device node"
    make_tree tree
    mknod tree/null c 1 3 || skip "mknod not permitted here"
    expect_refusal "tree/null' is a character device"
}

@test "pack refuses setuid, setgid and sticky modes" {
    make_tree tree
    chmod 4755 tree/tool.sh
    expect_refusal "tree/tool.sh' is setuid"
    chmod 2755 tree/tool.sh
    expect_refusal "tree/tool.sh' is setgid"
    chmod 0755 tree/tool.sh
    chmod 1755 tree/config
    expect_refusal "tree/config' is sticky"
}

@test "pack refuses group- and world-writable modes" {
    make_tree tree
    chmod 0664 tree/tool.sh
    expect_refusal "tree/tool.sh' is group-writable"
    chmod 0646 tree/tool.sh
    expect_refusal "tree/tool.sh' is world-writable"
}

@test "pack refuses control characters and invalid UTF-8 in names" {
    make_tree tree
    touch "tree/$(printf 'a\tb')"
    expect_refusal "path contains a control character"
    rm -f "tree/$(printf 'a\tb')"
    touch "tree/$(printf 'bad\377name')"
    expect_refusal "path is not valid UTF-8"
}

@test "what pack tells on stderr shows control characters as '?'" {
    make_tree tree
    d=$(printf 'o\033]0;title\007')
    mkdir "$d"
    "$SKC" pack tree -o "$d/k.run" --package-version 1 --npu-arch dav-2201 --soc Ascend910B1 2>err.txt
    grep -q "packed k 1 into o?]0;title?/k.run" err.txt
    ! grep -q "$(printf '\033')" err.txt
    ! grep -q "$(printf '\007')" err.txt
}

@test "pack refuses paths over 4096 bytes" {
    make_tree tree
    (cd tree && for i in $(seq 1 17); do n=$(printf '%0250d' "$i"); mkdir "$n" && cd "$n" || exit 1; done) ||
        skip "filesystem refuses deep paths"
    expect_refusal "path is longer than 4096 bytes"
}

@test "pack lists every refused entry at once" {
    make_tree tree
    ln -s x tree/l1
    mkfifo tree/f1
    chmod 0666 tree/tool.sh
    expect_refusal "3 entries the installer would refuse"
    [[ "$output" == *"l1' is a symbolic link"* ]]
    [[ "$output" == *"f1' is a FIFO"* ]]
    [[ "$output" == *"tool.sh' is group-writable"* ]]
}

@test "pack refuses names skforge generates" {
    make_tree tree
    touch tree/install.sh
    expect_refusal "uses a name skforge generates (install.sh)"
}

@test "pack refuses a SoC directory under config/ that is not a SoC family's name, naming it (not an internal error)" {
    make_tree tree
    mkdir tree/config/Ascend910
    printf '{}\n' >tree/config/Ascend910/binary_info_config.json
    expect_refusal "tree/config/Ascend910': SoC directory 'config/Ascend910' may contain only lower-case letters"
    [[ "$output" != *"internal error"* ]]
}

@test "pack refuses a package name with '.o', whose every binPath CANN's runtime would cut short" {
    make_tree tree
    why="has '.o' in it: every binPath of the package (my.ops/<soc dir>/<OpType>/<kernel>.o) would have '.o' before its end, and CANN's runtime cuts a binPath at its first '.o'"
    # --name, the stem of OUT, and the name the index's binPaths give.
    run "$SKC" pack tree -o out.run --name my.ops --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"--name 'my.ops' $why"* ]]
    run "$SKC" pack tree -o my.ops.run --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"package name 'my.ops' (the stem of 'my.ops.run') $why"* ]]
    printf '{"AddCustom":{"staticList":[{"simplifiedKey":"AddCustom/k","binPath":"my.ops/ascend910b/AddCustom/AddCustom_1.o"}]}}\n' \
        >tree/config/ascend910b/binary_info_config.json
    run "$SKC" pack tree -o out.run --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"package name 'my.ops' (the one its index's binPaths start with) $why"* ]]
    [ -z "$(ls -A | grep -v '^tree$')" ] # nothing written
    # A name with a dot but no '.o' packs.
    sed -i 's/my\.ops/my.v2/' tree/config/ascend910b/binary_info_config.json
    "$SKC" pack tree -o out.run --package-version 1 -q
    [ "$(header_value out.run NAME)" = my.v2 ]
}

@test "pack usage errors exit 2" {
    make_tree tree
    run "$SKC" pack tree -o out.run
    [ "$status" -eq 2 ]
    [[ "$output" == *"version"* ]]
    run "$SKC" pack tree -o out.tar --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"must be a file name ending in .run"* ]]
    run "$SKC" pack tree -o .hidden.run --package-version 1
    [ "$status" -eq 2 ]
    run "$SKC" pack tree -o out.run --package-version 1 --compress xz
    [ "$status" -eq 2 ]
    run "$SKC" pack tree -o out.run --package-version 1 --level 12
    [ "$status" -eq 2 ]
    run "$SKC" pack tree -o out.run --package-version 'a b'
    [ "$status" -eq 2 ]
    run "$SKC" pack tree -o out.run --package-version 1 --bogus
    [ "$status" -eq 2 ]
    run env SOURCE_DATE_EPOCH=yesterday "$SKC" pack tree -o out.run --package-version 1
    [ "$status" -eq 2 ]
    [ ! -e out.run ]
}

@test "pack of a missing directory names it" {
    run "$SKC" pack nowhere -o out.run --package-version 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"nowhere"*"No such file or directory"* ]]
}

@test "pack with a wrong signing key writes nothing" {
    make_tree tree
    echo junk >bad.pem
    run "$SKC" pack tree -o out.run --package-version 1 --sign-key bad.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad.pem"* ]]
    [ ! -e out.run ]
}

@test "skc with no command or an unknown one exits 2" {
    run "$SKC"
    [ "$status" -eq 2 ]
    run "$SKC" frobnicate
    [ "$status" -eq 2 ]
    [[ "$output" == *"unknown command 'frobnicate'"* ]]
    run "$SKC" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"pack"*"inspect"*"keygen"* ]]
}

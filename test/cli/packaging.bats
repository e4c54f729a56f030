#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skforge's own packages: `cpack -G DEB` from the build under test (an ASan build: the package
# then needs libasan, which is fine for a test), checked by lintian, unpacked into a scratch root
# with dpkg-deb -x and used from there: the tools, the man pages, the bash completions. `cpack -G
# RPM` where rpmbuild exists. Needs SKFORGE_BINARY_DIR (the build directory).

bats_require_minimum_version 1.5.0
load helpers

DOCGEN="$SKFORGE_SOURCE_DIR/packaging/docgen.py"

setup_file() {
    : "${SKFORGE_BINARY_DIR:?SKFORGE_BINARY_DIR must point to the build directory}"
    export PKG="$BATS_FILE_TMPDIR/pkg" ROOT="$BATS_FILE_TMPDIR/root" LC_ALL=C.UTF-8
    cpack --config "$SKFORGE_BINARY_DIR/CPackConfig.cmake" -G DEB -B "$PKG" >"$BATS_FILE_TMPDIR/cpack.log" 2>&1
    export VERSION=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$SKFORGE_BINARY_DIR/CPackConfig.cmake")
    arch=$(dpkg --print-architecture)
    export DEB="$PKG/skforge_${VERSION}_$arch.deb"
    # libskforge_runtime in Debian's split: the library, and the files to link against it.
    export LIB_DEB="$PKG/libskforge-runtime0_${VERSION}_$arch.deb"
    export DEV_DEB="$PKG/libskforge-runtime-dev_${VERSION}_$arch.deb"
    for d in "$DEB" "$LIB_DEB" "$DEV_DEB"; do
        dpkg-deb -x "$d" "$ROOT"
    done
    arm64_setup
}

# The aarch64 cross build (scripts/cross-build.sh arm64; scripts/test.sh builds it before ctest
# runs this), when there is one: DEB_ARM64 is its .deb, unpacked into ROOT_ARM64.
ARM64_BUILD=${SKFORGE_ARM64_BUILD:-$SKFORGE_SOURCE_DIR/build/arm64}
arm64_setup() {
    export VERSION DEB_ARM64= ROOT_ARM64="$BATS_FILE_TMPDIR/root-arm64"
    [ -f "$ARM64_BUILD/CPackConfig.cmake" ] || return 0
    cpack --config "$ARM64_BUILD/CPackConfig.cmake" -G DEB -B "$BATS_FILE_TMPDIR/pkg-arm64" \
        >"$BATS_FILE_TMPDIR/cpack-arm64.log" 2>&1 || { cat "$BATS_FILE_TMPDIR/cpack-arm64.log"; return 1; }
    DEB_ARM64="$BATS_FILE_TMPDIR/pkg-arm64/skforge_${VERSION}_arm64.deb"
    dpkg-deb -x "$DEB_ARM64" "$ROOT_ARM64"
}

# need_arm64: skips a test when there is no arm64 build (scripts/test.sh makes one only with
# SKFORGE_TEST_ARM64=1 for now; share/doc/aarch64.md says why).
need_arm64() {
    [ -z "$DEB_ARM64" ] || return 0
    skip "no arm64 build in $ARM64_BUILD (scripts/cross-build.sh arm64 makes one)"
}

# qemu_arm64 TOOL ARG...: runs an aarch64 executable through qemu-user, with the multiarch
# :arm64 libraries (share/doc/aarch64.md says why not -L).
qemu_arm64() {
    "$(command -v qemu-aarch64-static || command -v qemu-aarch64)" "$@"
}

# commands_of TOOL: the commands TOOL --help lists, one a line.
commands_of() {
    "$1" --help | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p'
}

# options_of TOOL COMMAND: the long options TOOL COMMAND --help lists, one a line.
options_of() {
    "$1" "$2" --help | grep -oE '^ +(-[a-zA-Z],? ?(\[ )?)?--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z][a-z0-9-]*'
}

# complete_words LINE...: what the installed bash completion offers for the words given, the
# last one being completed.
complete_words() {
    bash -c '. "$1"; shift
             fn=$(complete -p "$1" | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
             COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$fn"; printf "%s\n" "${COMPREPLY[@]}"' \
        _ "$ROOT/usr/share/bash-completion/completions/$1" "$@"
}

# cli_has TOOL: whether share/doc/cli.md has a `# TOOL` section (the per-tool shape).
cli_has() {
    grep -q "^# $1\$" "$SKFORGE_SOURCE_DIR/share/doc/cli.md"
}

@test "cpack -G DEB writes skforge_<version>_<arch>.deb depending on the libraries the tools link" {
    [ -f "$DEB" ]
    [ "$(dpkg-deb -f "$DEB" Package)" = skforge ]
    [ "$(dpkg-deb -f "$DEB" Section)" = devel ]
    [ "$(dpkg-deb -f "$DEB" Priority)" = optional ]
    depends=$(dpkg-deb -f "$DEB" Depends)
    for lib in libarchive13 libboost-program-options libyaml-cpp0.7 libssl3 libc6 libstdc++6; do
        [[ $depends == *"$lib"* ]] || { echo "Depends lacks $lib: $depends"; false; }
    done
}

@test "libskforge_runtime is split as Debian wants a shared library: libskforge-runtime0 and -dev" {
    [ "$(dpkg-deb -f "$LIB_DEB" Section)" = libs ]
    [ "$(dpkg-deb -f "$DEV_DEB" Section)" = libdevel ]
    [[ "$(dpkg-deb -f "$DEB" Depends)" == *"libskforge-runtime0 (= $VERSION)"* ]]
    [[ "$(dpkg-deb -f "$DEV_DEB" Depends)" == *"libskforge-runtime0 (= $VERSION)"* ]]
    dpkg-deb -c "$LIB_DEB" | grep -q './usr/lib/libskforge_runtime.so.0.1.0$'
    ! dpkg-deb -c "$LIB_DEB" | grep -q 'libskforge_runtime.so ->'
    dpkg-deb -c "$DEV_DEB" | grep -q './usr/include/skforge/runtime.h$'
    dpkg-deb --ctrl-tarfile "$LIB_DEB" | tar -xO ./shlibs | grep -qx "libskforge_runtime 0 libskforge-runtime0 (= $VERSION)"
}

@test "lintian finds no error and no warning in the .deb" {
    run lintian --fail-on error,warning "$DEB" "$LIB_DEB" "$DEV_DEB"
    echo "$output"
    [ "$status" -eq 0 ]
    ! grep -E '^[EW]: ' <<<"$output"
}

@test "the .deb puts each file in its FHS place, binaries stripped and without RPATH" {
    for f in usr/bin/skc usr/bin/skinstall usr/bin/skrun usr/bin/skforge-op-compiler \
        usr/share/man/man1/skforge-op-compiler.1.gz usr/share/man/man1/skc.1.gz usr/share/man/man8/skinstall.8.gz \
        usr/share/man/man1/skrun.1.gz usr/share/man/man5/skforge-run.5.gz \
        usr/share/bash-completion/completions/skc usr/share/bash-completion/completions/skinstall \
        usr/share/bash-completion/completions/skrun usr/include/skforge/skforge_host_kernel.h \
        usr/share/skforge/graph.schema.json usr/share/skforge/examples/moe_block/graph.yaml \
        usr/share/doc/skforge/copyright usr/share/doc/skforge/changelog.gz \
        usr/share/doc/skforge/cli.md usr/share/doc/skforge/runtime.md \
        usr/lib/libskforge_runtime.so.0 usr/include/skforge/runtime.h \
        usr/lib/python3/dist-packages/skforge/__init__.py \
        usr/lib/python3/dist-packages/skforge/runtime.py; do
        [ -f "$ROOT/$f" ] || { echo "missing: /$f"; false; }
    done
    [ "$(readlink "$ROOT/usr/lib/libskforge_runtime.so.0")" = libskforge_runtime.so.0.1.0 ]
    # The op_compiler front end's masquerade link (op-compiler.md), relative so any prefix works.
    [ "$(readlink "$ROOT/usr/lib/skforge/masquerade/op_compiler")" = ../../../bin/skforge-op-compiler ]
    [ "$(ls "$ROOT")" = usr ]
    grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
        "$ROOT/usr/share/doc/skforge/copyright"
    grep -q '^License: Apache-2.0$' "$ROOT/usr/share/doc/skforge/copyright"
    ! grep -qi unspecified "$ROOT/usr/share/doc/skforge/copyright"
    for tool in skc skinstall skrun skforge-op-compiler; do
        file "$ROOT/usr/bin/$tool" | grep -q ', stripped'
        ! readelf -d "$ROOT/usr/bin/$tool" | grep -E 'RPATH|RUNPATH'
    done
}

@test "the unpacked tools run: help, check of the installed example, pack and install" {
    bin="$ROOT/usr/bin"
    "$bin/skc" --help | grep -q compile
    "$bin/skinstall" --help | grep -q uninstall
    # Unpacked, not installed: the loader does not know the scratch root's library directory.
    LD_LIBRARY_PATH="$ROOT/usr/lib" "$bin/skrun" --help | grep -q -- --compare-unfused
    "$bin/skc" check "$ROOT/usr/share/skforge/examples/moe_block/graph.yaml"
    cp -r "$ROOT/usr/share/skforge/examples/package" tree
    "$bin/skc" pack tree -o demo_kernels.run --package-version 1.0.0 -q
    mkdir toolkit
    "$bin/skinstall" install demo_kernels.run --install-path "$W/toolkit" -q
    [ -f "$W/toolkit/opp/static_kernel/ai_core/demo_kernels/manifest.json" ]
}

@test "the .deb's Python module loads the .deb's library and reports its version" {
    preload=
    if readelf -d "$ROOT/usr/lib/libskforge_runtime.so.0" | grep -q libasan; then
        preload=$(cc -print-file-name=libasan.so):$(cc -print-file-name=libstdc++.so) # this build is sanitized
    fi
    run env PYTHONPATH="$ROOT/usr/lib/python3/dist-packages" LD_PRELOAD="$preload" \
        ASAN_OPTIONS=detect_leaks=0 python3 -c 'import skforge.runtime as r; print(r.library, r.version())'
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "$ROOT/usr/lib/libskforge_runtime.so.0 0.1.0" ]
}

@test "every man page renders without a groff warning and names its tool's commands" {
    for page in man1/skc.1.gz man8/skinstall.8.gz man1/skrun.1.gz man5/skforge-run.5.gz; do
        for locale in C.UTF-8 C; do # C: groff's ASCII device, where some glyphs do not exist
            run --separate-stderr env LC_ALL=$locale MANWIDTH=80 man --warnings -l "$ROOT/usr/share/man/$page"
            [ "$status" -eq 0 ]
            [ -z "$stderr" ] || { echo "$page ($locale): $stderr"; false; }
            [ "${#lines[@]}" -gt 10 ]
        done
    done
    text=$(MANWIDTH=200 man -l "$ROOT/usr/share/man/man1/skc.1.gz")
    for cmd in $(commands_of "$SKC"); do
        grep -q "^   skc $cmd\$" <<<"$text" || { echo "skc(1) lacks 'skc $cmd'"; false; }
    done
    MANWIDTH=80 man -l "$ROOT/usr/share/man/man5/skforge-run.5.gz" | grep -q '^THE SIGNATURE TRAILER'
}

@test "skinstall(8) has a section for every command skinstall --help lists" {
    cli_has skinstall || skip "share/doc/cli.md has no '# skinstall' section yet"
    text=$(MANWIDTH=200 man -l "$ROOT/usr/share/man/man8/skinstall.8.gz")
    for cmd in $(commands_of "$SKINSTALL"); do
        grep -q "^   skinstall $cmd\$" <<<"$text" || { echo "skinstall(8) lacks $cmd"; false; }
    done
}

@test "the bash completions load and complete skc's commands, options and option values" {
    for tool in skc skinstall skrun; do
        bash -c ". '$ROOT/usr/share/bash-completion/completions/$tool' && complete -p $tool"
    done
    [ "$(complete_words skc co)" = compile ]
    [ "$(complete_words skc "")" = "$(commands_of "$SKC")" ]
    [ "$(complete_words skc pack --comp)" = --compress ]
    [ "$(complete_words skc pack --compress "")" = "$(printf 'gzip\nzstd')" ]
    [ "$(complete_words skc compile g.yaml --npu-arch "")" = "$(printf 'host\ndav-2201\ndav-3510')" ]
    [ "$(complete_words skc compile --npu-arch d)" = "$(printf 'dav-2201\ndav-3510')" ]
    [ "$(complete_words skc plan x.yaml --format j)" = json ]
}

@test "skinstall's and skrun's completions offer every command and option their --help lists" {
    cli_has skinstall && cli_has skrun || skip "share/doc/cli.md has no '# skinstall'/'# skrun' sections yet"
    [ "$(complete_words skinstall "")" = "$(commands_of "$SKINSTALL")" ]
    for cmd in $(commands_of "$SKINSTALL"); do
        for opt in $(options_of "$SKINSTALL" "$cmd"); do
            complete_words skinstall "$cmd" "$opt" | grep -qx -- "$opt" ||
                { echo "skinstall $cmd: $opt not completed"; false; }
        done
    done
    complete_words skrun NAME --compare | grep -qx -- --compare-unfused
}

# write_cli_sample FILE: a cli.md in the per-tool shape built from the tools' real --help.
write_cli_sample() {
    {
        echo '<!-- a comment the pages must not show -->'
        echo 'Text common to every tool.'
        for tool in "$SKC" "$SKINSTALL" "$SKRUN"; do
            name=$(basename "$tool")
            printf '\n# %s\n\n```\n' "$name"
            "$tool" --help
            printf '```\n\nWhat %s is for.\n' "$name"
            [ "$name" = skrun ] && continue
            for cmd in $(commands_of "$tool"); do
                printf '\n## %s %s\n\n```\n' "$name" "$cmd"
                "$tool" "$cmd" --help
                printf '```\n\nWhat %s does.\n' "$cmd"
            done
        done
    } >"$1"
}

@test "docgen.py reads the per-tool shape: every command and option of the real --help reaches the page and the completion" {
    write_cli_sample cli.md
    for tool in skc skinstall skrun; do
        python3 "$DOCGEN" completion --cli cli.md --tool $tool --out $tool.bash
        python3 "$DOCGEN" man --cli cli.md --tool $tool --version 9.9 --out $tool.gz
        [ -z "$(MANWIDTH=80 man --warnings -l $tool.gz 2>&1 >/dev/null)" ]
        ! MANWIDTH=80 man -l $tool.gz | grep -q 'comment the pages'
    done
    ROOT=$W
    mkdir -p usr/share/bash-completion/completions
    for tool in skc skinstall skrun; do cp $tool.bash usr/share/bash-completion/completions/$tool; done
    for tool in "$SKC" "$SKINSTALL"; do
        name=$(basename "$tool")
        text=$(MANWIDTH=200 man -l $name.gz)
        [ "$(complete_words "$name" "")" = "$(commands_of "$tool")" ]
        for cmd in $(commands_of "$tool"); do
            grep -q "^   $name $cmd\$" <<<"$text"
            for opt in $(options_of "$tool" "$cmd"); do
                complete_words "$name" "$cmd" "$opt" | grep -qx -- "$opt" ||
                    { echo "$name $cmd: $opt not completed"; false; }
            done
        done
    done
    complete_words skrun NAME --ite | grep -qx -- --iterations
}

@test "cmake --install to another prefix puts the same files under that prefix" {
    cmake --install "$SKFORGE_BINARY_DIR" --prefix "$W/prefix" >/dev/null
    for f in bin/skc share/man/man8/skinstall.8.gz share/bash-completion/completions/skrun \
        include/skforge/skforge_host_kernel.h share/skforge/graph.schema.json \
        share/doc/skforge/copyright; do
        [ -f "$W/prefix/$f" ] || { echo "missing: $f"; false; }
    done
}

@test "cpack -G RPM lists the same files with rpm -qpl and claims no shared directory" {
    command -v rpmbuild >/dev/null || skip "rpmbuild is not installed (Debian package rpm)"
    cpack --config "$SKFORGE_BINARY_DIR/CPackConfig.cmake" -G RPM -B rpm >cpack.log 2>&1 ||
        { cat cpack.log; false; }
    rpmfile=$(echo rpm/skforge-*.rpm)
    rpm -qpl "$rpmfile" >files
    for f in /usr/bin/skc /usr/bin/skinstall /usr/bin/skrun /usr/share/man/man1/skc.1.gz \
        /usr/share/man/man8/skinstall.8.gz /usr/share/man/man1/skrun.1.gz \
        /usr/share/man/man5/skforge-run.5.gz /usr/share/bash-completion/completions/skc \
        /usr/include/skforge/skforge_host_kernel.h /usr/share/skforge/graph.schema.json \
        /usr/share/skforge/examples/moe_block/graph.yaml /usr/share/doc/skforge/copyright; do
        grep -qx "$f" files || { echo "rpm lacks $f"; false; }
    done
    for d in /usr /usr/bin /usr/share /usr/share/man /usr/share/man/man1 /usr/include \
        /usr/share/bash-completion/completions; do
        ! grep -qx "$d" files || { echo "rpm claims $d"; false; }
    done
    rpm -qpR "$rpmfile" | grep -q '^libarchive.so.13'
    [ "$(rpm -qp --queryformat '%{LICENSE}' "$rpmfile")" = Apache-2.0 ]
}

@test "the arm64 .deb: skforge_<version>_arm64.deb with the amd64 one's files, aarch64 tools, arm64 Depends" {
    need_arm64
    [ -f "$DEB_ARM64" ]
    [ "$(dpkg-deb -f "$DEB_ARM64" Architecture)" = arm64 ]
    [ "$(dpkg-deb -f "$DEB" Architecture)" = "$(dpkg --print-architecture)" ]
    # The same files, but for CMake's per-configuration export (skforgeTargets-<config>.cmake):
    # this test's amd64 package is the Debug test build's, the arm64 one a Release build.
    files() {
        dpkg-deb -c "$1" | awk '{print $1, $6}' |
            sed 's#/skforgeTargets-[a-z]*\.cmake$#/skforgeTargets-CONFIG.cmake#'
    }
    diff <(files "$DEB") <(files "$DEB_ARM64")
    dpkg-deb -c "$DEB_ARM64" | grep -q '/usr/lib/cmake/skforge/skforgeTargets-release\.cmake$'
    depends=$(dpkg-deb -f "$DEB_ARM64" Depends)
    for lib in libarchive13 libboost-program-options1.74.0 \
        libyaml-cpp0.7 libssl3 libdeflate0 libzstd1 libc6 libstdc++6; do
        [[ $depends == *"$lib "* || $depends == *"$lib," || $depends == *"$lib" ]] ||
            { echo "Depends lacks $lib: $depends"; false; }
    done
    for tool in skc skinstall skrun; do
        file "$ROOT_ARM64/usr/bin/$tool" | grep -q 'ELF 64-bit LSB .*ARM aarch64.*, stripped'
        ! readelf -d "$ROOT_ARM64/usr/bin/$tool" | grep -E 'RPATH|RUNPATH'
    done
}

@test "lintian finds no error and no warning in the arm64 .deb" {
    need_arm64
    run lintian --fail-on error,warning "$DEB_ARM64"
    echo "$output"
    [ "$status" -eq 0 ]
    ! grep -E '^[EW]: ' <<<"$output"
}

@test "the unpacked arm64 tools run under qemu: check, pack and install the installed example" {
    need_arm64
    bin="$ROOT_ARM64/usr/bin"
    qemu_arm64 "$bin/skc" --version | grep -q "^skc $VERSION"
    qemu_arm64 "$bin/skc" check "$ROOT_ARM64/usr/share/skforge/examples/moe_block/graph.yaml"
    cp -r "$ROOT_ARM64/usr/share/skforge/examples/package" tree
    qemu_arm64 "$bin/skc" pack tree -o demo_kernels.run --package-version 1.0.0 -q
    mkdir toolkit
    qemu_arm64 "$bin/skinstall" install demo_kernels.run --install-path "$W/toolkit" -q
    qemu_arm64 "$bin/skinstall" verify --install-path "$W/toolkit" -q
}

@test "cpack -G RPM from the arm64 build: an aarch64 .rpm with the same files, requiring the 64-bit libraries" {
    need_arm64
    command -v rpmbuild >/dev/null || skip "rpmbuild is not installed (Debian package rpm)"
    cpack --config "$ARM64_BUILD/CPackConfig.cmake" -G RPM -B rpm >cpack.log 2>&1 ||
        { cat cpack.log; false; }
    rpmfile=$(echo rpm/skforge-*.aarch64.rpm)
    [ -f "$rpmfile" ]
    [ "$(rpm -qp --queryformat '%{ARCH}' "$rpmfile")" = aarch64 ]
    dpkg-deb -c "$DEB_ARM64" | awk '$1 !~ /^d/ {print substr($6, 2)}' | sort >deb-files
    rpm -qpl "$rpmfile" | sort >rpm-files
    comm -23 deb-files rpm-files >missing
    [ ! -s missing ] || { echo "rpm lacks:"; cat missing; false; }
    rpm -qpR "$rpmfile" | grep -qx 'libarchive.so.13()(64bit)'
    rpm -qpR "$rpmfile" | grep -qx 'libyaml-cpp.so.0.7()(64bit)'
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Red-team regressions for issue 13 (installer and package hardening): each test is an attack or
# an unlucky operation that once broke a stated guarantee of share/doc/installer.md.
load helpers

# mkpkg NAME: a package with one kernel and a valid static-kernel index.
mkpkg() {
    local d="src-$1"
    mkdir -p "$d/soc/Add" "$d/config/soc"
    printf 'kernel %s\n' "$1" >"$d/soc/Add/add.o"
    printf '{"Add":{"staticList":[{"simplifiedKey":"Add/x","binPath":"%s/soc/Add/add.o"}]}}\n' "$1" \
        >"$d/config/soc/binary_info_config.json"
    "$SKC" pack "$d" -o "$1.run" --package-version 1 -q
}

@test "shell fallback: an install path ending in a newline never installs into its namesake without one" {
    mkpkg k1
    nl='
'
    mkdir "root$nl" root
    before=$(tree_digest root)
    run sh k1.run --install-path="$W/root$nl" -q
    # The sibling 'root' (what command substitution makes of 'root\n') is untouched.
    [ "$(tree_digest root)" = "$before" ]
    [ -z "$(ls -A root)" ]
    [ "$status" -eq 0 ]
    [ -f "$W/root$nl/opp/static_kernel/ai_core/k1/manifest.json" ]
    # The installed uninstall.sh finds its own tree, not the namesake.
    mkdir -p root/opp/static_kernel/ai_core
    cp -R "$W/root$nl/opp/static_kernel/ai_core/." root/opp/static_kernel/ai_core/
    before=$(tree_digest root)
    run sh "$W/root$nl/opp/static_kernel/ai_core/k1/uninstall.sh" -q
    [ "$status" -eq 0 ]
    [ ! -e "$W/root$nl/opp/static_kernel/ai_core/k1" ]
    [ "$(tree_digest root)" = "$before" ]
    run sh k1.run --uninstall --install-path="$W/root$nl" -q
    [ "$status" -eq 1 ]
    [ "$(tree_digest root)" = "$before" ]
}

@test "skinstall install: a FIFO named X.run is refused, not waited on" {
    mkfifo k1.run
    mkdir root
    run timeout 20 "$SKINSTALL" install k1.run --install-path "$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"k1.run"*"not a regular file"* ]]
    [ -z "$(ls -A root)" ]
}

@test "refusals quoting a package's text never send its control characters to the terminal" {
    mkdir -p src-k1/soc/Add src-k1/config/soc
    printf 'kernel\n' >src-k1/soc/Add/add.o
    # binPath with ESC sequences (a colour change and an xterm title) and a BEL.
    printf '{"Add":{"staticList":[{"binPath":"k1/\\u001b[31mRED\\u001b]0;title\\u0007"}]}}\n' \
        >src-k1/config/soc/binary_info_config.json
    run "$SKC" pack src-k1 -o k1.run --package-version 1 -q
    [ "$status" -eq 1 ]
    [[ "$output" == *"binPath 'k1/?[31mRED?]0;title?'"* ]]
    ! printf '%s' "$output" | LC_ALL=C grep -q "$(printf '[\033\007]')"
    [ ! -e k1.run ]
}

@test "sh X.run hands skinstall the very file it was run as, even in a directory whose name ends in a newline" {
    nl='
'
    mkpkg k1
    mkdir "d$nl" d bin root
    mv k1.run "d$nl/k1.run"
    # A different version of the same package where command substitution would point.
    printf 'kernel v2\n' >src-k1/soc/Add/add.o
    "$SKC" pack src-k1 -o d/k1.run --package-version 2 -q
    ln -s "$SKINSTALL" bin/skinstall
    PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 run sh "d$nl/k1.run" --install-path="$W/root" -q
    [ "$status" -eq 0 ]
    grep -q '"version": "1"' root/opp/static_kernel/ai_core/k1/manifest.json
}

@test "skc compile: kernel metadata nested 200,000 deep is refused with its path, not a stack overflow" {
    EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
    mkdir -p g/k
    cp "$EX/host_kernels/add.cpp" g/k/
    python3 - "$EX/host_kernels/add.json" g/k/add.json <<'PY'
import sys
text = open(sys.argv[1]).read().rstrip().rstrip("}")
open(sys.argv[2], "w").write(text + ', "junk": ' + "[" * 200000 + "]" * 200000 + "}\n")
PY
    cat >g/graph.yaml <<'EOF2'
name: deep
inputs: [{name: x, shape: [64], dtype: float32}]
ops:
  - {name: add, type: Add, kernel: {json_path: k/add.json}, inputs: [x, x],
     outputs: [{name: y, shape: [64], dtype: float32}]}
EOF2
    run "$SKC" compile g/graph.yaml --npu-arch host -o out --no-cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"kernel metadata 'k/add.json': nests arrays and objects more than 64 deep"* ]]
    [[ "$output" != *"AddressSanitizer"* ]]
}

@test "shell upgrade SIGKILLed between its two renames: skinstall recover puts the old version back" {
    mkpkg k1
    mkdir v2 root wrap
    printf 'kernel v2\n' >src-k1/soc/Add/add.o
    "$SKC" pack src-k1 -o v2/k1.run --package-version 2 -q
    # An operator's install, as the upgrade is (a held one would become persistent before the
    # kill: installer.md, "Lifecycle").
    sh k1.run --install --install-path="$W/root" -q
    "$SKINSTALL" recover --install-path "$W/root" -q
    before=$(state_digest root) # the history gains recover's line
    # mv that SIGKILLs the script right when it would move the new version into place: the old
    # one is already aside at .skforge-stage-k1.old.XXXXXX.
    local real_mv
    real_mv=$(command -v mv)
    cat >wrap/mv <<EOF2
#!/bin/sh
case \$3 in
./.skforge-stage-*.old.*) ;;
./.skforge-stage-*) [ "\$4" = k1 ] && kill -9 "\$PPID" && exit 1 ;;
esac
exec $real_mv "\$@"
EOF2
    chmod +x wrap/mv
    PATH="$W/wrap:$PATH" run sh v2/k1.run --upgrade --install-path="$W/root" -q
    [ "$status" -eq 137 ]
    ls -a root/opp/static_kernel/ai_core | grep -q '^\.skforge-stage-k1\.old\.'
    [ ! -e root/opp/static_kernel/ai_core/k1 ]
    run "$SKINSTALL" recover --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" == *"restored k1"* ]]
    [ "$(state_digest root)" = "$before" ]
    run "$SKINSTALL" verify --install-path "$W/root"
    [ "$status" -eq 0 ]
}

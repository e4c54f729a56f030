#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Whole-program smoke test of one build of the tools, for a build whose binaries this machine
# runs only through an emulator (scripts/test-arm64.sh runs it on the aarch64 build under
# qemu-aarch64) or on the target machine itself. What an operator on a Kunpeng host does: pack,
# inspect, install, verify, repair and uninstall a package with skinstall; the .run under sh, with
# skinstall on PATH and with sh alone; skc compile for the host target and skrun the result.
#   SKC, SKINSTALL, SKRUN  the tools (commands: a wrapper that runs them under qemu will do)
#   CXX                    the compiler host kernels are built with (one for the tools' machine)
#   REFERENCE_SKC          optional: another machine's skc; its .run must be byte-identical

bats_require_minimum_version 1.5.0
load ../cli/helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
AI=root/opp/static_kernel/ai_core

setup_file() {
    : "${SKINSTALL:?SKINSTALL must point to skinstall}" "${SKRUN:?SKRUN must point to skrun}"
    : "${SKFORGE_SOURCE_DIR:?SKFORGE_SOURCE_DIR must point to the source tree}"
}

# pack_example: the example kernel tree packed and signed as ./demo_kernels.run (the name its
# index gives), key ./key.pub.pem.
pack_example() {
    cp -r "$EX/package" tree
    "$SKC" keygen -o key >/dev/null
    "$SKC" pack tree -o demo_kernels.run --package-version 1.0.0 --sign-key key.pem -q
}

@test "the tools start and report their version; skc checks an example graph" {
    "$SKC" --version | grep -q '^skc '
    "$SKINSTALL" --version | grep -q '^skinstall '
    "$SKRUN" --version | grep -q '^skrun '
    "$SKC" check "$EX/moe_block/graph.yaml"
}

@test "pack, inspect --verify, install, verify, repair a damaged file, uninstall: the tree is clean" {
    pack_example
    "$SKC" inspect demo_kernels.run --verify --trusted-key key.pub.pem | grep -q '^Verify signature: verified'
    mkdir root
    "$SKINSTALL" install demo_kernels.run --install-path root --require-signature --trusted-key key.pub.pem -q
    "$SKINSTALL" verify demo_kernels --install-path root -q
    victim=$(find "$AI/demo_kernels" -name '*.o' | head -n 1)
    printf 'x' >>"$victim"
    run "$SKINSTALL" verify demo_kernels --install-path root
    [ "$status" -eq 1 ]
    [[ "$output" == *"${victim#"$AI/demo_kernels/"}: changed size"* ]]
    "$SKINSTALL" repair demo_kernels --from demo_kernels.run --install-path root --trusted-key key.pub.pem -q
    "$SKINSTALL" verify --install-path root -q
    "$SKINSTALL" uninstall demo_kernels --install-path root -q
    [ ! -e "$AI/demo_kernels" ]
    grep -qx 'install_order=' "$AI/config.ini"
}

@test "the .run under sh installs through skinstall on PATH and with sh alone; skinstall verifies both" {
    pack_example
    sh demo_kernels.run --check
    mkdir -p bin root
    # skinstall on PATH, recording how the stub calls it.
    printf '#!/bin/sh\necho "$*" >>%s\nexec %s "$@"\n' "$W/calls" "$SKINSTALL" >bin/skinstall
    chmod +x bin/skinstall
    PATH="$W/bin:$PATH" SKFORGE_NO_SKINSTALL=0 sh demo_kernels.run --install-path="$W/root" -q
    grep -q "^install .*demo_kernels.run" calls
    "$SKINSTALL" verify --install-path root -q
    SKFORGE_NO_SKINSTALL=1 sh "$AI/demo_kernels/uninstall.sh"
    [ ! -e "$AI/demo_kernels" ]
    SKFORGE_NO_SKINSTALL=1 sh demo_kernels.run --install-path="$W/root"
    "$SKINSTALL" verify --install-path root -q
    "$SKINSTALL" uninstall demo_kernels --install-path root -q
    [ ! -e "$AI/demo_kernels" ]
}

@test "the same inputs give a byte-identical .run on this machine and on the reference's" {
    [ -n "${REFERENCE_SKC:-}" ] || skip "REFERENCE_SKC is not set"
    cp -r "$EX/package" tree
    for c in gzip zstd; do
        mkdir this-$c reference-$c
        "$SKC" pack tree -o this-$c/demo_kernels.run --package-version 1.0.0 --compress $c -q
        "$REFERENCE_SKC" pack tree -o reference-$c/demo_kernels.run --package-version 1.0.0 --compress $c -q
        cmp this-$c/demo_kernels.run reference-$c/demo_kernels.run
    done
}

@test "skc compile builds host kernels for this machine; skrun runs them fused and op-by-op, bitwise equal" {
    "$SKC" compile "$EX/two_stream/graph.yaml" --npu-arch host -o out --name ts -q >/dev/null
    mkdir root
    "$SKINSTALL" install out/ts.run --install-path root -q
    run "$SKRUN" ts --install-path root --compare-unfused --iterations 1
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"bitwise identical"* ]]
    "$SKINSTALL" uninstall ts --install-path root -q
    [ ! -e "$AI/ts" ]
}

@test "the op_compiler front end with a remote store: one host compiles and stores, a second fetches it without compiling" {
    [ -n "${OP_COMPILER:-}" ] || skip "OP_COMPILER is not set"
    command -v nginx >/dev/null || skip "no nginx for the WebDAV store"
    local cli="$SKFORGE_SOURCE_DIR/test/cli"
    chmod 0711 "$W" # nginx's workers run as nobody
    REMOTE=$("$cli/dav_server.sh" "$W/ngx")
    mkdir -p toolkit d
    printf 'Version=9.1.0\n' >toolkit/version.info
    printf '{"op_type": "Add", "inputs": [{"name": "x", "index": 0, "dtype": "float16", "format": "ND", "shape": [8], "param_type": "required"}], "outputs": [{"name": "y", "index": 0, "dtype": "float16", "format": "ND", "shape": [8]}], "attrs": [], "deterministic": "false", "impl_mode": ""}\n' >d/Add_1.json
    export ASCEND_HOME_PATH="$W/toolkit" SKFORGE_OP_COMPILER="$cli/standin_op_compiler.py" \
        STANDIN_LOG="$W/calls" SKFORGE_REMOTE_STORE=$REMOTE
    SKFORGE_OP_STORE="$W/s1" run "$OP_COMPILER" -p d -v Ascend910B1 -o r1
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"stored in the remote store $REMOTE"* ]]
    SKFORGE_OP_STORE="$W/s2" run "$OP_COMPILER" -p d -v Ascend910B1 -o r2
    echo "$output"
    kill "$(cat "$W/ngx/nginx.pid")" 2>/dev/null || true
    [ "$status" -eq 0 ]
    [[ "$output" == *"hit in the remote store $REMOTE"* ]]
    [ "$(wc -l <calls)" -eq 1 ]
    cmp r1/*.run r2/*.run
    "$SKC" inspect r2/*.run --verify | grep -q '^Verify entries:  ok'
}

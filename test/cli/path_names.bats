#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Names from a graph or its kernel metadata become path components of what `skc compile` writes
# (scope -> SuperKernel files, OpType -> kernel directory, kernelName -> kernel files). A name that
# is not one safe component is refused by `skc check` with its file:line:col, and `skc compile`
# refuses it before writing anything: files placed where an escape would land stay untouched.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
# Deep enough that every escape below lands inside this test's directory, where it is watched.
OUT=deep/er/out

# mkgraph SCOPE TYPE KERNEL_NAME [GRAPH_NAME]: g/graph.yaml, two host Add operators fused in
# SCOPE, of OpType TYPE, whose kernel metadata has kernelName KERNEL_NAME.
mkgraph() {
    mkdir -p g/k
    cp "$EX/host_kernels/add.cpp" g/k/
    python3 - "$EX/host_kernels/add.json" g/k/add.json "$3" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
meta["kernelName"] = sys.argv[3]
json.dump(meta, open(sys.argv[2], "w"))
PY
    cat >g/graph.yaml <<EOF
name: ${4:-names}
inputs: [{name: x, shape: [64], dtype: float32}]
ops:
  - {name: a, type: $2, kernel: {json_path: k/add.json}, inputs: [x, x],
     outputs: [{name: y, shape: [64], dtype: float32}], scope: $1}
  - {name: b, type: $2, kernel: {json_path: k/add.json}, inputs: [y, y],
     outputs: [{name: z, shape: [64], dtype: float32}], scope: $1}
EOF
}

# Canaries where the escapes would land: beside and above the output directory.
plant_canaries() {
    for d in . deep deep/er; do
        mkdir -p "$d/ESC_T"
        echo canary >"$d/ESC_T/keep"
        for f in ESC.cpp ESC.so ESC.map ESC.json ESC_K.cpp ESC_K.o ESC_K.so ESC_K.json; do
            echo canary >"$d/$f"
        done
    done
}

# Everything in the test directory except the output directory, for before/after checks.
outside_digest() {
    (cd "$W" && find . -path "./$OUT" -prune -o -printf '%y %m %s %p %l\n' | sort &&
        find . -path "./$OUT" -prune -o -type f -exec sha256sum {} + | sort) | sha256sum
}

# compile_refused WHAT: skc compile fails saying WHAT; nothing outside the output directory
# changed, and in it no .run.
compile_refused() {
    local before
    before=$(outside_digest)
    run "$SKC" compile g/graph.yaml --npu-arch host -o "$OUT" --name names_host
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$1"* ]]
    [ "$(outside_digest)" = "$before" ]
    [ ! -e "$OUT/names_host.run" ]
    [ ! -e "$OUT/x" ]
}

@test "a scope that is a path is refused by check and by compile, and nothing escapes" {
    plant_canaries
    mkgraph ../../../../ESC Add Add_host
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:4:5: error: scope name '../../../../ESC' contains '/'"* ]]
    compile_refused "g/graph.yaml:4:5: error: scope name '../../../../ESC' contains '/'"
}

@test "an OpType that is a path is refused by check and by compile, and nothing escapes" {
    plant_canaries
    for t in ../../x/OPT ../../../../ESC_T; do
        rm -rf g
        mkgraph s "$t" Add_host
        run "$SKC" check g/graph.yaml
        [ "$status" -eq 1 ]
        [[ "$output" == *"g/graph.yaml:4:5: error: OpType '$t' of operator 'a' contains '/'"* ]]
        [[ "$output" == *"g/graph.yaml:6:5: error: OpType '$t' of operator 'b' contains '/'"* ]]
        compile_refused "g/graph.yaml:4:5: error: OpType '$t' of operator 'a' contains '/'"
    done
}

@test "a kernelName that is a path is refused against its metadata file, and nothing escapes" {
    plant_canaries
    mkgraph s Add ../../../../ESC_K
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:4:"*"kernel metadata 'k/add.json': 'kernelName' '../../../../ESC_K' contains '/'"* ]]
    compile_refused "kernel metadata 'k/add.json': 'kernelName' '../../../../ESC_K' contains '/'"
}

@test "a binFileName with '..' and a graph name that is a path are refused by check" {
    mkgraph s Add Add_host ../../ESC_G
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:1:7: error: graph name '../../ESC_G' contains '/'"* ]]
    rm -rf g
    mkgraph s Add Add_host
    sed -i 's/"binFileName": *"[^"]*"/"binFileName": ".."/' g/k/add.json
    grep -q '"binFileName": ".."' g/k/add.json
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:4:"*"kernel metadata 'k/add.json': 'binFileName' '..' is '.' or '..'"* ]]
}

@test "compile refuses to write through a symbolic link leading out of its output directory" {
    mkgraph s Add Add_host
    mkdir -p "$OUT" elsewhere/cache elsewhere/log
    echo canary >elsewhere/cache/keep
    ln -s "$W/elsewhere/cache" "$OUT/static_kernel_cache"
    compile_refused "refusing to write under '$OUT/static_kernel_cache': it is a symbolic link leading out of '$OUT'"
    # The compile log directory likewise.
    rm "$OUT/static_kernel_cache"
    ln -s "$W/elsewhere/log" "$OUT/names_host_compile_log"
    compile_refused "'$OUT/names_host_compile_log': it is a symbolic link leading out of"
    [ -z "$(ls elsewhere/log)" ]
}

@test "valid names still compile" {
    mkgraph s Add Add_host
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 0 ]
    run "$SKC" compile g/graph.yaml --npu-arch host -o "$OUT" --name names_host
    [ "$status" -eq 0 ]
    [ -f "$OUT/names_host.run" ]
}

@test "the longest name pack and compile accept installs, upgrades and uninstalls everywhere" {
    long=$(printf 'n%.0s' $(seq 1 229))
    make_tree tree
    "$SKC" pack tree -o long.run --name "$long" --package-version 1.0 --npu-arch dav-2201 --soc Ascend910B1 -q
    "$SKC" pack tree -o long2.run --name "$long" --package-version 2.0 --npu-arch dav-2201 --soc Ascend910B1 -q
    # skinstall: install, upgrade, verify, uninstall.
    mkdir -p "$W/a"
    "$SKINSTALL" install long.run --install-path "$W/a" -q
    "$SKINSTALL" upgrade long2.run --install-path "$W/a" -q
    "$SKINSTALL" verify "$long" --install-path "$W/a"
    "$SKINSTALL" uninstall "$long" --install-path "$W/a" -q
    [ ! -e "$W/a/opp/static_kernel/ai_core/$long" ]
    # The package's own scripts, whose stage and upgrade names are the longest.
    mkdir -p "$W/b"
    sh long.run --install --install-path="$W/b" -q
    sh long2.run --upgrade --install-path="$W/b" -q
    [ -f "$W/b/opp/static_kernel/ai_core/$long/manifest.json" ]
    sh "$W/b/opp/static_kernel/ai_core/$long/uninstall.sh" --operator -q
    [ ! -e "$W/b/opp/static_kernel/ai_core/$long" ]
    # One byte more is refused at pack, with the rule, and nothing is written.
    run "$SKC" pack tree -o longer.run --name "${long}n" --package-version 1.0 --npu-arch dav-2201
    [ "$status" -eq 2 ]
    [[ "$output" == *"is longer than 229 bytes (the installers' stage directory"* ]]
    [ ! -e longer.run ]
}

@test "compile writes its logs and cache for a name of the longest length" {
    mkgraph sk1 Add Add_host
    long=$(printf 'c%.0s' $(seq 1 229))
    run "$SKC" compile g/graph.yaml --npu-arch host -o out --name "$long" --jobs 1 -q
    echo "$output"
    [ "$status" -eq 0 ]
    [ -f "out/$long.run" ]
    [ -f "out/${long}_compile_log/${long}_compile_succ.log" ]
    [ -z "$(find out -name '.*')" ]
}

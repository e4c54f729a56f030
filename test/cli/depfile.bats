#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc compile --depfile: the Makefile rule listing every input of a compile, read by the real
# ninja and GNU make, with names holding a space, '$' and '#'.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
K='ker nel$#1' # the kernel directory: a space, a dollar and a hash

# mkgraph: graph.yaml with one host Add kernel in "$K", and a signing key.
mkgraph() {
    mkdir -p "$K"
    cp "$EX/host_kernels/add.json" "$EX/host_kernels/add.cpp" "$K/"
    cat >graph.yaml <<EOF2
name: dep
inputs:
  - {name: x, shape: [64], dtype: float32}
  - {name: y, shape: [64], dtype: float32}
ops:
  - {name: add, type: Add, kernel: {json_path: "$K/add.json"}, inputs: [x, y],
     outputs: [{name: z, shape: [64], dtype: float32}]}
EOF2
    "$SKC" keygen -o key >/dev/null
}

compile_dep() { # OUTDIR
    "$SKC" compile graph.yaml -o "$1" --name dep --npu-arch host --sign-key key.pem \
        --depfile "$1/dep.d"
}

@test "--depfile lists the graph, the kernel's metadata and source, the key and skc, escaped" {
    mkgraph
    run compile_dep out
    [ "$status" -eq 0 ]
    skc=$(readlink -f "$SKC")
    cat >expected <<EOF2
out/dep.run: \\
  graph.yaml \\
  ./ker\\ nel\$\$\\#1/add.json \\
  ./ker\\ nel\$\$\\#1/add.cpp \\
  key.pem \\
  $skc
EOF2
    diff expected out/dep.d
}

@test "a cache hit rewrites the depfile and marks the .run newer than its inputs" {
    mkgraph
    compile_dep out >/dev/null
    rm out/dep.d
    touch -d '2020-01-01' out/dep.run
    sum=$(sha256sum <out/dep.run)
    run compile_dep out
    [ "$status" -eq 0 ]
    [[ "$output" == *"cache hit"* ]]
    [ -f out/dep.d ]
    [ out/dep.run -nt "$K/add.cpp" ]
    [ "$(sha256sum <out/dep.run)" = "$sum" ]
}

@test "a failed compile removes its depfile; --depfile with --sources-only is a usage error" {
    mkgraph
    compile_dep out >/dev/null
    echo 'not a kernel' >"$K/add.cpp"
    run compile_dep out
    [ "$status" -eq 1 ]
    [ ! -e out/dep.d ]
    run "$SKC" compile graph.yaml --npu-arch dav-2201 --sources-only --depfile x.d
    [ "$status" -eq 2 ]
    [[ "$output" == *"--depfile"* ]]
}

@test "ninja reads every name of the depfile and rebuilds when one changes" {
    mkgraph
    cat >build.ninja <<EOF2
rule skc
  command = '$SKC' compile graph.yaml -o out --name dep --npu-arch host --sign-key key.pem --depfile out/dep.d
  depfile = out/dep.d
  deps = gcc
build out/dep.run: skc
EOF2
    ninja >/dev/null
    run ninja -t deps out/dep.run
    [[ "$output" == *"    ker nel\$#1/add.json"* ]]
    [[ "$output" == *"    ker nel\$#1/add.cpp"* ]]
    [[ "$output" == *"    key.pem"* ]]
    [ "$(ninja -n)" = "ninja: no work to do." ]
    sleep 1
    touch "$K/add.cpp"
    run ninja -n -d explain
    [[ "$output" == *"ker nel\$#1/add.cpp"* ]]
    [[ "$output" == *"[1/1]"* ]]
    ninja >/dev/null
    [ "$(ninja -n)" = "ninja: no work to do." ]
}

@test "GNU make reads every name of the depfile and rebuilds when one changes" {
    mkgraph
    printf 'out/dep.run:\n\t%s compile graph.yaml -o out --name dep --npu-arch host --sign-key key.pem --depfile out/dep.d\n-include out/dep.d\n' \
        "'$SKC'" >Makefile
    make -s >/dev/null
    make -q out/dep.run # 0: up to date, every name in the depfile found
    sleep 1
    touch "$K/add.json"
    run make -q out/dep.run
    [ "$status" -eq 1 ]
    make -s >/dev/null
    make -q out/dep.run
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The host target end to end: skc compile builds host kernels and threaded SuperKernels, skinstall
# installs the package, skrun runs it fused and op-by-op and compares every output bitwise.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
OUT=static_kernel_compile_outputs

# mkhost: g/graph.yaml, an Add and a stateful Counter kernel (block 0 writes how often it was
# called), the Counter used twice: once fused with the Add, once alone (no_fusion).
mkhost() {
    mkdir -p g/k
    cp "$EX/host_kernels/add.json" "$EX/host_kernels/add.cpp" g/k/
    sed 's/Add_host/Counter_host/g' "$EX/host_kernels/add.json" >g/k/counter.json
    cat >g/k/counter.cpp <<'EOF2'
#include "skforge_host_kernel.h"
static int calls;
SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t b, e;
    sk_block_range(ctx, sk_numel(y), &b, &e);
    if (ctx->block_idx == 0)
        ++calls;
    for (int64_t i = b; i < e; ++i)
        sk_store(y, i, sk_load(x, i) + (i == 0 ? static_cast<float>(calls) : 0.0f));
}
EOF2
    cat >g/graph.yaml <<'EOF2'
name: hostdemo
inputs: [{name: x, shape: [64], dtype: float32}]
scopes: {s: "early-start=0"}
ops:
  - {name: add, type: Add, kernel: {json_path: k/add.json}, inputs: [x, x],
     outputs: [{name: y, shape: [64], dtype: float32}], scope: s}
  - {name: count_fused, type: Counter, kernel: {json_path: k/counter.json}, inputs: [y],
     outputs: [{name: z, shape: [64], dtype: float32}], scope: s}
  - {name: count_alone, type: Counter, kernel: {json_path: k/counter.json}, inputs: [y],
     outputs: [{name: w, shape: [64], dtype: float32}], no_fusion: true}
EOF2
}

compile_install() { # GRAPH NAME
    "$SKC" compile "$1" --npu-arch host -o "$OUT" --name "$2" >/dev/null
    mkdir -p root
    "$SKINSTALL" install "$OUT/$2.run" --install-path root --quiet
}

@test "host: the MoE block runs fused with fewer launches and bitwise the same results" {
    compile_install "$EX/moe_block/graph.yaml" moe
    run "$SKRUN" moe --install-path root --compare-unfused --iterations 3
    [ "$status" -eq 0 ]
    [[ "$output" == *"fused:"*"5 launches per run"* ]]
    [[ "$output" == *"op-by-op:"*"8 launches per run"* ]]
    [[ "$output" == *"7 tensors bitwise identical"* ]]
    run "$SKRUN" moe --install-path root --compare-unfused --iterations 1 --json --cores 3
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["identical"] and j["differences"] == [], j
assert j["fused"]["launches"] == 5 and j["unfused"]["launches"] == 8, j
assert j["workers"] == 3 and j["superkernels"] == 2 and j["operators"] == 8, j'
}

@test "host: every example graph gives the same bits fused and op-by-op, on 1 to 4 workers" {
    for g in two_stream tbe_cut decoder; do
        compile_install "$EX/$g/graph.yaml" "$g"
        for cores in 1 2 4; do
            run "$SKRUN" "$g" --install-path root --compare-unfused --iterations 1 --cores "$cores" --seed 7
            echo "$g on $cores: $output"
            [ "$status" -eq 0 ]
            [[ "$output" == *"bitwise identical"* ]]
        done
    done
}

@test "host: the package carries the generated source, metadata and program; builds are reproducible" {
    "$SKC" compile "$EX/two_stream/graph.yaml" --npu-arch host -o a --no-cache >/dev/null
    "$SKC" compile "$EX/two_stream/graph.yaml" --npu-arch host -o b --no-cache >/dev/null
    cmp a/two_stream_host.run b/two_stream_host.run
    run "$SKC" inspect a/two_stream_host.run --list
    [[ "$output" == *"host/SuperKernel/sk_dual.cpp"* ]]
    [[ "$output" == *"host/SuperKernel/sk_dual.so"* ]]
    [[ "$output" == *"host/SuperKernel/sk_dual.json"* ]]
    [[ "$output" == *"host/program.json"* ]]
    [[ "$output" == *"config/host/binary_info_config.json"* ]]
    sh a/two_stream_host.run --noexec --extract=x >/dev/null
    grep -q 'sk_flag_wait(sk_event_flag(params, [0-9]*), core->count_in\[1\]); // event 1 from \[0\]' x/host/SuperKernel/sk_dual.cpp
    python3 - x <<'PY'
import json, sys, hashlib
root = sys.argv[1]
meta = json.load(open(root + "/host/SuperKernel/sk_dual.json"))
assert meta["magic"] == "RT_DEV_BINARY_MAGIC_SKFORGE_HOST", meta["magic"]
assert meta["binFileSuffix"] == ".so" and meta["kernelName"] == "sk_entry_sk_dual"
assert meta["sha256"] == hashlib.sha256(open(root + "/host/SuperKernel/sk_dual.so", "rb").read()).hexdigest()
k = json.load(open(root + "/host/MatMul/MatMul_55ee.json"))
assert k["sha256"] == hashlib.sha256(open(root + "/host/MatMul/MatMul_55ee.o", "rb").read()).hexdigest()
prog = json.load(open(root + "/host/program.json"))
assert prog["steps"] == [{"segment": 0}], prog["steps"]
PY
}

@test "host: the cache hits on the same inputs and misses when a kernel source changes" {
    mkhost
    run "$SKC" compile g/graph.yaml --npu-arch host
    [[ "$output" == *"cache miss"* ]]
    run "$SKC" compile g/graph.yaml --npu-arch host
    [[ "$output" == *"cache hit"* ]]
    echo "// changed" >>g/k/add.cpp
    run "$SKC" compile g/graph.yaml --npu-arch host
    [[ "$output" == *"cache miss"* ]]
}

@test "host: a kernel that keeps state between calls is caught: skrun names the tensor, exits 1" {
    mkhost
    compile_install g/graph.yaml hostdemo
    run "$SKRUN" hostdemo --install-path root --compare-unfused --iterations 2
    echo "$output"
    [ "$status" -eq 1 ]
    # Fused, each copy of the kernel counted its own calls; op-by-op one copy counted both.
    [[ "$output" == *"2 of 3 tensors DIFFER"* ]]
    [[ "$output" == *"z differs fused vs op-by-op after run 1: "*" bytes, first at byte 0"* ]]
    [[ "$output" == *"w differs fused vs op-by-op after run 1: "*" bytes, first at byte 0"* ]]
    # The first run is compared, and the JSON says which run each difference was seen after.
    run "$SKRUN" hostdemo --install-path root --compare-unfused --iterations 2 --json
    [ "$status" -eq 1 ]
    echo "$output" | sed -n '/^{/,/^}/p' | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert not j["identical"], j
assert sorted((d["tensor"], d["run"]) for d in j["differences"]) == [("w", 1), ("z", 1)], j'
    # Without the comparison there is nothing to disagree with.
    run "$SKRUN" hostdemo --install-path root
    [ "$status" -eq 0 ]
}

@test "host: build failures name the kernel and keep the compiler's message; nothing is left" {
    mkhost
    echo "this is not C++" >>g/k/counter.cpp
    run "$SKC" compile g/graph.yaml --npu-arch host
    [ "$status" -eq 1 ]
    [[ "$output" == *"building kernel Counter_host"*"counter.cpp"* ]]
    grep -q "error" "$OUT/hostdemo_host_compile_error.log"
    grep -q -- "-DSKFORGE_KERNEL_NAME=Counter_host -c src/Counter_host.cpp" "$OUT/hostdemo_host_compile_error.log"
    [ ! -e "$OUT/hostdemo_host.run" ]
    [ -z "$(find "$OUT" -name '.skc-build.*')" ]
    # No source at all.
    rm g/k/counter.cpp
    run "$SKC" compile g/graph.yaml --npu-arch host
    [ "$status" -eq 1 ]
    [[ "$output" == *"operator 'count_fused': kernel "*"counter.json has no host implementation"* ]]
    # Kernels that synchronise all cores cannot run on host workers.
    mkhost
    sed -i 's/"sub_op_with_sync_all": 0/"sub_op_with_sync_all": 1/' g/k/add.json
    run "$SKC" compile g/graph.yaml --npu-arch host
    [ "$status" -eq 1 ]
    [[ "$output" == *"sub_op_with_sync_all kernels cannot run on the host target"* ]]
}

@test "skrun: usage errors exit 2, missing or damaged packages are refused with the reason" {
    run "$SKRUN"
    [ "$status" -eq 2 ]
    [[ "$output" == *"skrun: missing NAME (see skrun --help)"* ]]
    run "$SKRUN" x --bogus
    [ "$status" -eq 2 ]
    run "$SKRUN" --help
    [ "$status" -eq 0 ]
    [[ "$output" == *"--compare-unfused"* ]]
    run "$SKRUN" moe --install-path root
    [ "$status" -eq 1 ]
    [[ "$output" == *"install path 'root' does not exist"*"nothing is installed there"* ]]
    mkdir root
    run "$SKRUN" moe --install-path root
    [ "$status" -eq 1 ]
    [[ "$output" == *"no static kernels are installed under root"* ]]
    mkhost
    compile_install g/graph.yaml hostdemo
    run "$SKRUN" nothere --install-path root
    [ "$status" -eq 1 ]
    [[ "$output" == *"package 'nothere' is not installed"*"(installed: hostdemo)"* ]]
    # A changed file: skrun checks the manifest before it loads any code.
    printf 'x' >>root/opp/static_kernel/ai_core/hostdemo/host/Add/Add_host.so
    run "$SKRUN" hostdemo --install-path root
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not match its manifest (host/Add/Add_host.so"* ]]
}

@test "skrun --inputs DIR reads every graph input and refuses a missing or short file" {
    mkhost
    compile_install g/graph.yaml hostdemo
    mkdir in
    head -c 255 /dev/zero >in/x.bin
    run "$SKRUN" hostdemo --install-path root --inputs in
    [ "$status" -eq 1 ]
    [[ "$output" == *"in/x.bin: 255 bytes, but x (float32) needs 256"* ]]
    rm in/x.bin
    run "$SKRUN" hostdemo --install-path root --inputs in
    [ "$status" -eq 1 ]
    [[ "$output" == *"in/x.bin: missing"* ]]
    head -c 256 /dev/zero >in/x.bin
    run "$SKRUN" hostdemo --install-path root --inputs in --json --iterations 1
    [ "$status" -eq 0 ]
    [[ "$output" == *'"superkernels": 1'* ]]
}

#!/usr/bin/env bats
# skc compile: static packaging of precompiled kernels, compile logs, the cache, and the targets
# this version refuses.
load helpers

# mkgraph [super_kernel_optimize]: two precompiled kernels with metadata and a graph using them.
mkgraph() {
    mkdir -p g/kernels
    for k in add mul; do
        head -c 3000 /dev/urandom >"g/kernels/$k.o"
        sha=$(sha256sum "g/kernels/$k.o" | cut -d' ' -f1)
        printf '{"kernelName":"%s_k","blockDim":8,"magic":"RT_DEV_BINARY_MAGIC_ELF_AIVEC","sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY","supportSuperKernel":1,"sha256":"%s"}\n' "$k" "$sha" >"g/kernels/$k.json"
    done
    cat >g/graph.yaml <<EOF
name: static_demo
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: ${1:-false}
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o}, inputs: [x], outputs: [{name: y, shape: [16], dtype: float16}], scope: s}
  - {name: m, type: Mul, kernel: {json_path: kernels/mul.json, bin_path: kernels/mul.o}, inputs: [y], outputs: [{name: z, shape: [16], dtype: float16}], scope: s}
EOF
}

OUT=static_kernel_compile_outputs

@test "compile packages precompiled kernels as static kernels that skinstall installs" {
    mkgraph
    run "$SKC" compile g/graph.yaml
    [ "$status" -eq 0 ]
    [[ "$output" == *"cache miss"* ]]
    [ -f "$OUT/static_demo_dav-2201.run" ]
    [ -f "$OUT/static_demo_dav-2201_compile_log/static_demo_dav-2201_compile_succ.log" ]
    [ ! -e "$OUT/static_demo_dav-2201_compile_error.log" ]
    mkdir root
    "$SKINSTALL" install "$OUT/static_demo_dav-2201.run" --install-path "$W/root" -q
    ai=root/opp/static_kernel/ai_core
    cmp "$ai/static_demo_dav-2201/ascend910b1/Add/add.o" g/kernels/add.o
    grep -q '"static_demo_dav-2201/ascend910b1/Mul/mul.json"' "$ai/config/ascend910b1/binary_info_config.json"
}

@test "the cache hits only while the .run is there and unchanged" {
    mkgraph
    "$SKC" compile g/graph.yaml >/dev/null
    run "$SKC" compile g/graph.yaml
    [[ "$output" == *"cache hit"* ]]
    run "$SKC" compile g/graph.yaml --no-cache
    [[ "$output" == *"cache disabled"* ]]
    printf 'x' >>"$OUT/static_demo_dav-2201.run"
    run "$SKC" compile g/graph.yaml
    [[ "$output" == *"cache miss"* ]]
    "$SKC" inspect "$OUT/static_demo_dav-2201.run" --verify >/dev/null
    echo "# changed" >>g/graph.yaml
    run "$SKC" compile g/graph.yaml
    [[ "$output" == *"cache miss"* ]]
    [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$OUT/static_kernel_cache/skforge-0.1.0_dav-2201.json")" -eq 1 ]
}

@test "the same inputs compile to the same bytes" {
    mkgraph
    "$SKC" compile g/graph.yaml -o a >/dev/null
    "$SKC" compile g/graph.yaml -o b --no-cache >/dev/null
    cmp a/static_demo_dav-2201.run b/static_demo_dav-2201.run
}

@test "a failed compile leaves its error log and no .run, not even an old one" {
    mkgraph
    "$SKC" compile g/graph.yaml >/dev/null
    head -c 10 /dev/urandom >>g/kernels/mul.o
    run "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not match the sha256"* ]]
    [ -f "$OUT/static_demo_dav-2201_compile_error.log" ]
    grep -q "does not match the sha256" "$OUT/static_demo_dav-2201_compile_error.log"
    [ ! -e "$OUT/static_demo_dav-2201.run" ]
    [ ! -e "$OUT/static_demo_dav-2201_compile_log" ]
    [ -z "$(ls -A "$OUT" | grep '^\.skc-build')" ]
}

@test "fusion without bisheng says what to install" {
    mkgraph true
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"needs the CANN compiler 'bisheng' on PATH"* ]]
    [[ "$output" == *"super_kernel_optimize: false"* ]]
    grep -q bisheng "$OUT/static_demo_dav-2201_compile_error.log"
}

@test "NPU binaries are not host kernels, and unknown targets are usage errors" {
    mkgraph
    run "$SKC" compile g/graph.yaml --npu-arch host
    [ "$status" -eq 1 ]
    [[ "$output" == *"operator 'a': kernel "*"add.json has no host implementation"* ]]
    [ -f "$OUT/static_demo_host_compile_error.log" ]
    [ ! -e "$OUT/static_demo_host.run" ]
    run "$SKC" compile g/graph.yaml --npu-arch dav-9999
    [ "$status" -eq 2 ]
    run "$SKC" compile
    [ "$status" -eq 2 ]
}

@test "the SoC comes from the environment first" {
    mkgraph
    SUPERKERNEL_COMPILE_SOC_VERSION=Ascend910B3 "$SKC" compile g/graph.yaml --name soc_env >/dev/null
    "$SKC" inspect "$OUT/soc_env.run" --list | grep -q ' ascend910b3/Add/add.o$'
}

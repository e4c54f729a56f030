#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc compile: static packaging of precompiled kernels, compile logs, the cache, and the targets
# this version refuses.
load helpers

# mkgraph [super_kernel_optimize]: two precompiled kernels with metadata and a graph using them.
mkgraph() {
    npu_kernels g/kernels add mul
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
    cmp "$ai/static_demo_dav-2201/ascend910b/Add/add.o" g/kernels/add.o
    grep -q '"static_demo_dav-2201/ascend910b/Mul/mul.o"' "$ai/config/ascend910b/binary_info_config.json"
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
    SUPERKERNEL_COMPILE_SOC_VERSION=Ascend910_9391 "$SKC" compile g/graph.yaml --name soc_env >/dev/null
    "$SKC" inspect "$OUT/soc_env.run" --list | grep -q ' ascend910_93/Add/add.o$'
}

@test "with bisheng on PATH: the vendor's build commands, and a SuperKernel package with its source" {
    # The scope sets no option: the vendor's defaults (early start on) give the -D options.
    mkgraph true
    fake_bisheng
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --npu-arch dav-3510 --jobs 1 >/dev/null
    A=/opt/cann/$(uname -m)-linux
    inc=""
    # The default line (9.0): asc-devkit 1ea13f3b's directories (basic_api/reg_compute, asc/).
    for d in impl/adv_api impl/basic_api impl/c_api impl/basic_api/reg_compute impl/simt_api \
        impl/utils include include/adv_api include/basic_api include/aicpu_api include/c_api \
        include/basic_api/reg_compute include/simt_api include/utils; do
        inc="$inc -I$A/asc/$d"
    done
    inc="$inc -I$A/ascendc/act -I$A/asc/impl -I$A/asc -I$A/tikcpp -I/opt/cann/include -I/opt/cann/include/ascendc"
    inc="$inc -I$A/tikcpp/tikcfw -I$A/tikcpp/tikcfw/impl -I$A/tikcpp/tikcfw/interface"
    diff - bisheng.log <<EOF2
bisheng --version
llvm-objcopy --redefine-sym=add_k=add_k_split1 obj/add_k.o obj/add_k_split1.o
llvm-objcopy --redefine-sym=add_k=add_k_split2 obj/add_k.o obj/add_k_split2.o
llvm-objcopy --redefine-sym=add_k=add_k_split3 obj/add_k.o obj/add_k_split3.o
llvm-objcopy --redefine-sym=mul_k=mul_k_split1 obj/mul_k.o obj/mul_k_split1.o
llvm-objcopy --redefine-sym=mul_k=mul_k_split2 obj/mul_k.o obj/mul_k_split2.o
llvm-objcopy --redefine-sym=mul_k=mul_k_split3 obj/mul_k.o obj/mul_k_split3.o
bisheng -c -O3 -x cce$inc -D__ASCENDC_ENABLE_SET_NEXT_TASK_START -D__ASCENDC_ENABLE_WAIT_PRE_TASK_END -D__ASCENDC_SUPERKERNEL_EARLY_START_V2 -DASCENDC_DUMP=0 --cce-disable-kernel-global-attr-check --cce-no-dcache-flush gen/s.cpp --cce-aicore-arch=dav-c310-vec -D__DAV_C310__ --cce-aicore-only -o obj/s_mix_aiv.o -mllvm -cce-aicore-stack-size=0x8000 -mllvm -cce-aicore-function-stack-size=0x8000 -mllvm -cce-aicore-record-overflow=false -mllvm -cce-aicore-addr-transform -mllvm --cce-aicore-jump-expand=true -mllvm -cce-aicore-dcci-insert-for-scalar=false -mllvm -cce-aicore-jump-expand=true --cce-long-call=true -mllvm -cce-aicore-long-call -std=c++17 -Dauto_gen_static_demo_s_kernel=static_demo_s_mix_aiv -DTILING_KEY_VAR=0UL -Dstatic_demo_s=static_demo_s_0_tilingkey
ld.lld -m aicorelinux -r -Ttext=0 -q -x obj/s_mix_aiv.o obj/add_k.o obj/add_k_split1.o obj/add_k_split2.o obj/add_k_split3.o obj/mul_k.o obj/mul_k_split1.o obj/mul_k_split2.o obj/mul_k_split3.o -static -o lib/s.o
ld.lld -m aicorelinux -Ttext=0 lib/s.o -static -o lib/s.o -q
llvm-objcopy --localize-symbol=add_k --localize-symbol=add_k_split1 --localize-symbol=add_k_split2 --localize-symbol=add_k_split3 --localize-symbol=mul_k --localize-symbol=mul_k_split1 --localize-symbol=mul_k_split2 --localize-symbol=mul_k_split3 lib/s.o
EOF2
    run "$SKC" inspect "$OUT/static_demo_dav-3510.run" --list
    [[ "$output" == *" ascend950/SuperKernel/s.o"* ]]
    [[ "$output" == *" ascend950/SuperKernel/s.json"* ]]
    [[ "$output" == *" ascend950/SuperKernel/s.cpp"* ]]
    [[ "$output" != *"ascend950/Add/"* ]] # fused: no static kernel of its own
    sh "$OUT/static_demo_dav-3510.run" --noexec --extract=x >/dev/null
    grep -q 'extern "C" __global__ __attribute__((aligned(512))) __aicore__ void auto_gen_static_demo_s_kernel(void)' x/ascend950/SuperKernel/s.cpp # the vendor's func-align
    grep -q ' add_k(0);$' x/ascend950/SuperKernel/s.cpp # dav-3510: no FFTS slot
    python3 - x <<'PY'
import hashlib, json, sys
root = sys.argv[1]
meta = json.load(open(root + "/ascend950/SuperKernel/s.json"))
assert meta["kernelName"] == "static_demo_s" and meta["binFileName"] == "s", meta
# An all-vector SuperKernel is built as MIX_AIV_1_0: JSON and index both say MIX (0).
assert meta["coreType"] == "MIX", meta
assert meta["sha256"] == hashlib.sha256(open(root + "/ascend950/SuperKernel/s.o", "rb").read()).hexdigest()
index = json.load(open(root + "/config/ascend950/binary_info_config.json"))
entry = {"binDesc": {"blockDim": meta["blockDim"], "kernelName": "static_demo_s",
                     "workspace": meta["workspace"]["size"]},
         "coreType": 0, "binPath": "static_demo_dav-3510/ascend950/SuperKernel/s.o",
         "simplifiedKey": "SuperKernel/static_demo_dav-3510/s"}
assert index == {"SuperKernel": {"dynamicRankSupport": True, "simplifiedKeyMode": 0,
                                 "staticList": [entry]}}, index
PY
    # The same inputs give the same package.
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --npu-arch dav-3510 -o again --no-cache >/dev/null
    cmp "$OUT/static_demo_dav-3510.run" again/static_demo_dav-3510.run
}

@test "a bisheng failure: its message in the error log, the command that failed, no .run" {
    mkgraph true
    fake_bisheng
    run env PATH="$PWD/fakebin:$PATH" BISHENG_FAIL=1 "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"building SuperKernel s failed (exit 1)"* ]]
    grep -q "use of undeclared identifier" "$OUT/static_demo_dav-2201_compile_error.log"
    grep -q -- "gen/s.cpp --cce-aicore-arch=dav-c220-vec --cce-aicore-only -o obj/s_mix_aiv.o" "$OUT/static_demo_dav-2201_compile_error.log"
    [ ! -e "$OUT/static_demo_dav-2201.run" ]
    [ -z "$(ls -A "$OUT" | grep '^\.skc-build')" ]
}

@test "strict-scope-check=abort fails the compile when its scope loses an operator" {
    mkgraph true
    sed -i -e 's/^inputs:/scopes: {s: "strict-scope-check=abort"}\ninputs:/' \
        -e '/name: m,/s/scope: s}/scope: s, no_fusion: true}/' g/graph.yaml
    run "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"graph.yaml:"*"scope 's' has strict-scope-check=abort and cannot be fused whole: 'm' is left out (NO_FUSION_MARK"* ]]
    grep -q "strict-scope-check=abort" "$OUT/static_demo_dav-2201_compile_error.log"
    [ ! -e "$OUT/static_demo_dav-2201.run" ]
    # bypass lets it through: the scope is split (here: one operator fused, one left out).
    sed -i 's/strict-scope-check=abort/strict-scope-check=bypass/' g/graph.yaml
    run "$SKC" plan g/graph.yaml
    [ "$status" -eq 0 ]
    [[ "$output" == *"m  Mul  NO_FUSION_MARK"* ]]
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skinstall explain (which installed kernel each CANN line's runtime finds for a call, or the
# nearest and why) and skinstall doctor (what the runtime will see; exit 1 when it would miss a
# kernel), on packages compiled by skc and installed by skinstall.
load helpers

# package NAME: Add (ND float16[16]), Conv (NCHW float32[1,3,8,8]), Nz (FRACTAL_NZ bfloat16
# storage [2,1,16,16], view [16,32]), Det (deterministic only) and Lvl (platformInfo 24/48 cores,
# deterministicLevel 1), compiled for Ascend910B1 and installed in $W/root.
package() {
    static_kernel g/k add KERNEL_TYPE_AIV_ONLY
    static_kernel g/k conv KERNEL_TYPE_AIC_ONLY
    static_kernel g/k nz KERNEL_TYPE_AIV_ONLY
    static_kernel g/k det KERNEL_TYPE_AIV_ONLY 8 ',"deterministic":"true"'
    static_kernel g/k lvl KERNEL_TYPE_AIV_ONLY 8 ',"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":1}'
    cat >g/graph.yaml <<'YAML'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: x, shape: [16], dtype: float16}, {name: img, shape: [1, 3, 8, 8], dtype: float32, format: NCHW}, {name: w, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [16], dtype: float16}]}
  - {name: c, type: Conv, kernel: {json_path: k/conv.json, bin_path: k/conv.o}, inputs: [img], outputs: [{name: o, shape: [1, 3, 8, 8], dtype: float32, format: NCHW}]}
  - {name: n, type: Nz, kernel: {json_path: k/nz.json, bin_path: k/nz.o}, inputs: [w], outputs: [{name: z, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]}
  - {name: d, type: Det, kernel: {json_path: k/det.json, bin_path: k/det.o}, inputs: [x], outputs: [{name: dy, shape: [16], dtype: float16}]}
  - {name: l, type: Lvl, kernel: {json_path: k/lvl.json, bin_path: k/lvl.o}, inputs: [x], outputs: [{name: ly, shape: [16], dtype: float16}]}
YAML
    "$SKC" compile g/graph.yaml --name "$1" >/dev/null
    mkdir -p "$W/root"
    "$SKINSTALL" install "static_kernel_compile_outputs/$1.run" --install-path "$W/root" -q
}

explain() { run "$SKINSTALL" explain --install-path "$W/root" "$@"; echo "$output"; }

# winner LINE PATH: what explain's output says LINE's PATH ("aclnn executor", "op-kernel
# engine") finds.
winner() { grep "^$1 $2: " <<<"$output" | sed "s/^$1 $2: //"; }

@test "explain names the kernel each line finds for ND, NCHW, FRACTAL_NZ, strided and deterministic calls" {
    package p1
    local add="p1/ascend910b/Add/add.o (package p1"
    explain --op-type Add --tensor float16:ND:16 --tensor float16:ND:16 --tensor float16:ND:16
    [ "$status" -eq 0 ]
    for line in 9.0.x 9.1.x master; do
        [[ "$(winner $line "aclnn executor")" == "$add"* ]]
        [[ "$(winner $line "op-kernel engine")" == "$add"* ]]
    done
    # 9.0.x keys no strides and looks up once; 9.1.x and master find it with strides at once.
    [[ "$output" == *"9.0.x aclnn executor: $add"*"  key without strides Add/d=0,p=0/1,2,(10)/1,2,(10)/1,2,(10): found"*"9.0.x op-kernel engine"* ]]
    [[ "$output" == *"9.1.x aclnn executor: $add"*"  key with strides Add/d=0,p=0/1,2,(10),(1),0/1,2,(10),(1),0/1,2,(10),(1),0: found"*"9.1.x op-kernel"* ]]

    # NCHW: the executor keys it as ND, the engine as NCHW; both find the kernel.
    explain --op-type Conv --tensor float32:NCHW:1,3,8,8 --tensor float32:NCHW:1,3,8,8
    [ "$status" -eq 0 ]
    [[ "$output" == *"key with strides Conv/d=0,p=0/0,2,(1,3,8,8),(c0,40,8,1),0/"*": found"* ]]
    [[ "$output" == *"key with strides Conv/d=0,p=2/0,0,(1,3,8,8),(),0/0,0,(1,3,8,8),(),0: found"* ]]
    [ "$(grep -c ': p1/ascend910b/Conv/conv.o (package p1' <<<"$output")" -eq 6 ]

    # FRACTAL_NZ: the executor keys the view shape, the engine the storage shape.
    explain --op-type Nz --tensor bfloat16:FRACTAL_NZ:2,1,16,16:16,32 --tensor bfloat16:FRACTAL_NZ:2,1,16,16:16,32
    [ "$status" -eq 0 ]
    [[ "$output" == *"Nz/d=0,p=0/1b,1d,(10,20),(20,1),0/1b,1d,(10,20),(20,1),0: found"* ]]
    [[ "$output" == *"Nz/d=0,p=2/1b,1d,(2,1,10,10),(),0/1b,1d,(2,1,10,10),(),0: found"* ]]
    [ "$(grep -c ': p1/ascend910b/Nz/nz.o (package p1' <<<"$output")" -eq 6 ]

    # Strided: 9.1.x and master miss with strides (2) and find it on the second lookup.
    explain --op-type Add --tensor float16:ND:16:16:2 --tensor float16:ND:16 --tensor float16:ND:16
    [ "$status" -eq 0 ]
    [[ "$output" == *"9.1.x aclnn executor: $add"*"  key with strides Add/d=0,p=0/1,2,(10),(2),0/1,2,(10),(1),0/1,2,(10),(1),0: none"*"  key without strides Add/d=0,p=0/1,2,(10)/1,2,(10)/1,2,(10): found"* ]]
    [[ "$(winner master "aclnn executor")" == "$add"* ]]

    # Deterministic: Det has only d=1 entries.
    explain --op-type Det --tensor float16:ND:16 --tensor float16:ND:16 --deterministic
    [ "$status" -eq 0 ]
    [ "$(grep -c ': p1/ascend910b/Det/det.o (package p1' <<<"$output")" -eq 6 ]
    # Lvl's platformInfo says deterministicLevel 1: skc keys it d=1 only (the only mode master
    # selects it in), so a call that is not deterministic finds it on no line, 9.0.x and 9.1.x
    # (core counts only) included; a deterministic one finds it on every line.
    explain --op-type Lvl --tensor float16:ND:16 --tensor float16:ND:16 --soc Ascend910B1
    [ "$status" -eq 0 ]
    [ "$(grep -c ': no static kernel' <<<"$output")" -eq 6 ]
    [[ "$output" == *"nearest p1/ascend910b/Lvl/lvl.o (package p1, key Lvl/d=1,p=0/1,2,(10),(1),0/1,2,(10),(1),0): determinism: d=1 in the entry, d=0 for the call"* ]]
    explain --op-type Lvl --tensor float16:ND:16 --tensor float16:ND:16 --soc Ascend910B1 --deterministic
    [ "$status" -eq 0 ]
    [[ "$(winner 9.0.x "aclnn executor")" == "p1/ascend910b/Lvl/lvl.o"* ]]
    [[ "$(winner 9.1.x "op-kernel engine")" == "p1/ascend910b/Lvl/lvl.o"* ]]
    [[ "$(winner master "aclnn executor")" == "p1/ascend910b/Lvl/lvl.o"* ]]
    # Other core counts: no line finds it.
    explain --op-type Lvl --tensor float16:ND:16 --tensor float16:ND:16 --cores 20,40 --deterministic
    [ "$(grep -c ': no static kernel' <<<"$output")" -eq 6 ]
}

@test "explain reads dump JSONs; a directory of them gives a table per line, path and package" {
    package p1
    mkdir d
    printf '{"op_type": "Add", "inputs": [{"name": "x1", "dtype": "float16", "format": "ND", "shape": [16]}, {"name": "x2", "dtype": "float16", "format": "ND", "shape": [16]}], "outputs": [{"name": "y", "dtype": "float16", "format": "ND", "shape": [16]}], "attrs": [], "deterministic": "false", "impl_mode": ""}\n' >d/add.json
    printf '{"op_type": "Nz", "inputs": [{"dtype": "bfloat16", "format": "FRACTAL_NZ", "shape": [2,1,16,16], "origin_format": "ND", "origin_shape": [16,32]}], "outputs": [{"dtype": "bfloat16", "format": "FRACTAL_NZ", "shape": [2,1,16,16], "origin_format": "ND", "origin_shape": [16,32]}], "deterministic": "true", "impl_mode": "high_performance"}\n' >d/nz.json
    printf '{"op_type": "Add", "inputs": [{"dtype": "float16", "format": "ND", "shape": [17]}], "outputs": [], "deterministic": false}\n' >d/miss.json
    explain d/add.json --json
    [ "$status" -eq 0 ]
    python3 - "$output" <<'PY'
import json, sys
x = json.loads(sys.argv[1])
for line in x["lines"]:
    for p in line["paths"]:
        assert p["kernel"]["binPath"] == "p1/ascend910b/Add/add.o", p
        assert p["kernel"]["package"] == "p1"
PY
    explain d
    [ "$status" -eq 0 ]
    diff - <(echo "$output") <<'EOF'
line     path              calls  found  none  by package
9.0.x    aclnn executor        3      2     1  p1 2
9.0.x    op-kernel engine      3      2     1  p1 2
9.1.x    aclnn executor        3      2     1  p1 2
9.1.x    op-kernel engine      3      2     1  p1 2
master   aclnn executor        3      2     1  p1 2
master   op-kernel engine      3      2     1  p1 2
EOF
    run "$SKINSTALL" explain --install-path "$W/root" d --json
    [ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["table"][0]["packages"]["p1"])' <<<"$output")" = 2 ]
    for cmd in explain doctor; do
        run "$SKINSTALL" "$cmd" --help
        [ "$status" -eq 0 ]
        [[ "$output" == "Usage: skinstall $cmd "*"--install-path"*"--soc"*"--json"* ]]
    done
    # No call at all, or an unknown SoC: usage errors.
    explain
    [ "$status" -eq 2 ]
    [[ "$output" == *"give DUMP.json, a directory of them, or --op-type with --tensor"* ]]
    explain d --soc 'Ascend 910'
    [ "$status" -eq 2 ]
    [[ "$output" == *"--soc 'Ascend 910' is neither a SoC directory"* ]]
    # A dump without op_type is refused naming the file.
    echo '{}' >bad.json
    explain bad.json
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad.json: no op_type string"* ]]
}

@test "a call no kernel serves lists the nearest entries and why they differ" {
    package p1
    explain --op-type Add --tensor float16:ND:17 --tensor float16:ND:16 --tensor float16:ND:16
    [ "$status" -eq 0 ]
    [ "$(grep -c ': no static kernel' <<<"$output")" -eq 6 ]
    [[ "$output" == *"9.0.x aclnn executor: no static kernel"*"  nearest p1/ascend910b/Add/add.o (package p1, key Add/d=0,p=0/1,2,(10)/1,2,(10)/1,2,(10)): tensor 0: dims (16) in the entry, (17) in the call"* ]]
    # The NZ call keyed with the view shape on the engine's path: view vs storage shape.
    explain --op-type Nz --tensor bfloat16:FRACTAL_NZ:16,32 --tensor bfloat16:FRACTAL_NZ:16,32
    [[ "$output" == *"9.0.x op-kernel engine: no static kernel"*"nearest p1/ascend910b/Nz/nz.o"*"tensor 0: dims (2,1,16,16) in the entry, (16,32) in the call"* ]]
    # An NCHW kernel asked for as NHWC on the engine's path: the format differs; the executor
    # keys both as ND and finds it.
    explain --op-type Conv --tensor float32:NHWC:1,3,8,8 --tensor float32:NHWC:1,3,8,8
    [[ "$(winner 9.1.x "aclnn executor")" == "p1/ascend910b/Conv/conv.o"* ]]
    [[ "$output" == *"tensor 0: format NCHW (0) in the entry, NHWC (1) keyed for the call (the op-kernel engine keys the storage format as it is)"* ]]
    # Determinism: Det has only d=1 entries.
    explain --op-type Det --tensor float16:ND:16 --tensor float16:ND:16
    [[ "$output" == *"nearest p1/ascend910b/Det/det.o"*"determinism: d=1 in the entry, d=0 for the call"* ]]
    # An OpType with no entry at all.
    explain --op-type Nope --tensor float16:ND:16
    [[ "$output" == *"nearest: none (no entry of Nope)"* ]]
}

@test "explain's master line selects what the opbase-logic reader selects, on both paths" {
    package p1
    printf '%s\n' "Add 1,2,16 1,2,16 1,2,16" "Conv 0,0,1x3x8x8 0,0,1x3x8x8" \
        "Nz 27,29,2x1x16x16,16x32 27,29,2x1x16x16,16x32" "Add 1,2,17 1,2,16 1,2,16" >c.txt
    run "$OPBASE_READ" "$W/root/opp" ascend910b --select c.txt
    echo "$output"
    local reader=$output i=0 spec op a h
    for spec in "Add float16:ND:16 float16:ND:16 float16:ND:16" \
        "Conv float32:NCHW:1,3,8,8 float32:NCHW:1,3,8,8" \
        "Nz bfloat16:FRACTAL_NZ:2,1,16,16:16,32 bfloat16:FRACTAL_NZ:2,1,16,16:16,32" \
        "Add float16:ND:17 float16:ND:16 float16:ND:16"; do
        set -- $spec
        op=$1
        shift
        local args=()
        for t in "$@"; do args+=(--tensor "$t"); done
        explain --op-type "$op" "${args[@]}" --soc Ascend910B1
        a=$(winner master "aclnn executor" | cut -d' ' -f1)
        h=$(winner master "op-kernel engine" | cut -d' ' -f1)
        [ "$a" != no ] || a=none
        [ "$h" != no ] || h=none
        i=$((i + 1))
        [[ "$(sed -n "${i}p" <<<"$reader")" == "$op aclnn=$a hostapi1="*" hostapi2=$h" ]]
    done
    [ "$a" = none ] # the last call is served by no kernel
}

# toolkit VERSION: $W/root as a toolkit of that CANN version whose runtime reads this tree.
toolkit() {
    mkdir -p "$W/root"
    printf 'Version=%s\n' "$1" >"$W/root/version.info"
    export ASCEND_HOME_PATH="$W/root" ASCEND_OPP_PATH="$W/root/opp"
}

# doctor ARGS...: skinstall doctor on $W/root for the SoC $SOC (default Ascend910B1).
doctor() { run "$SKINSTALL" doctor --install-path "$W/root" --soc "${SOC:-Ascend910B1}" "$@"; echo "$output"; }

@test "doctor is clean on a healthy tree and says what the runtime sees" {
    package p1
    toolkit 9.1.0
    doctor
    [ "$status" -eq 0 ]
    [[ "$output" == *"base path: $W/root/opp (from \$ASCEND_OPP_PATH)"* ]]
    [[ "$output" == *"toolkit: 9.1.0, line 9.1.x"* ]]
    [[ "$output" == *"SoC directories: ascend910b"* ]]
    [[ "$output" == *"package p1 "*" SoC Ascend910B1"* ]]
    [[ "$output" == *"ok: nothing would make the runtime miss a kernel"* ]]
    doctor --json
    [ "$status" -eq 0 ]
    [ "$(python3 -c 'import json,sys; x=json.load(sys.stdin); print(x["problems"], x["toolkit"]["line"], x["packages"][0]["matches_soc"])' <<<"$output")" = "[] 9.1.x True" ]
}

@test "doctor finds a package for another SoC, an unreadable index, an unreadable kernel JSON, a stale lock and another base, with exit 1" {
    package p1
    toolkit 9.0.1
    # Kernel JSONs without runInfo are fine on 9.0.x (it reads runInfo for MC2 operators only).
    doctor
    [ "$status" -eq 0 ]
    # A kernel JSON the runtime cannot read: it would register the kernel without its run info.
    local json=$W/root/opp/static_kernel/ai_core/p1/ascend910b/Add/add.json
    cp "$json" saved_kernel.json
    echo '{"blockDim": ' >"$json"
    doctor
    [ "$status" -eq 1 ]
    [[ "$output" == *"problem: p1/ascend910b/Add/add.o: the JSON beside the kernel cannot be read; fix: skinstall verify --fix, or rebuild package p1"* ]]
    cp saved_kernel.json "$json"
    printf 'Version=9.1.0\n' >"$W/root/version.info"
    doctor
    [ "$status" -eq 0 ]

    # A stale lock: the shell scripts' mkdir lock of a process that is gone.
    local ai=$W/root/opp/static_kernel/ai_core
    mkdir "$ai/config/static_kernel.lock.d"
    sh -c 'echo $$' >"$ai/config/static_kernel.lock.d/pid"
    doctor
    [ "$status" -eq 1 ]
    [[ "$output" == *"problem: stale lock $ai/config/static_kernel.lock.d (process "*" is gone)"*"fix: rm -r '$ai/config/static_kernel.lock.d'"* ]]
    rm -r "$ai/config/static_kernel.lock.d"

    # An index the runtime cannot read.
    cp "$ai/config/ascend910b/binary_info_config.json" saved.json
    echo '{"Add": ' >"$ai/config/ascend910b/binary_info_config.json"
    doctor
    [ "$status" -eq 1 ]
    [[ "$output" == *"problem: the runtime cannot read $ai/config/ascend910b/binary_info_config.json: it is not a JSON object; fix: skinstall verify --fix"* ]]
    cp saved.json "$ai/config/ascend910b/binary_info_config.json"

    # The runtime reads another base.
    ASCEND_OPP_PATH=$W/elsewhere doctor
    [ "$status" -eq 1 ]
    [[ "$output" == *"problem: the runtime reads $W/elsewhere/static_kernel/ai_core (from \$ASCEND_OPP_PATH), not this tree"* ]]

    # A package for another SoC; doctor changes nothing in the tree.
    local before
    before=$(tree_digest "$W/root")
    SOC=ascend910_93 doctor
    [ "$status" -eq 1 ]
    [ "$(tree_digest "$W/root")" = "$before" ]
    [[ "$output" == *"problem: package 'p1' is for Ascend910B1 (ascend910b), and this host's SoC is ascend910_93 (--soc): the runtime never reads its kernels; fix: install a build of p1 for this SoC, or skinstall uninstall p1"* ]]
}

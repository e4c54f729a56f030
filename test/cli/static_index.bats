#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The static-kernel index end to end: NPU packages compiled by skc, installed, upgraded and
# uninstalled by skinstall, read the way CANN's runtime reads them ($OPBASE_READ, written from
# opbase's indv_collector.cpp: staticList, integer coreType, binPath to an existing .o, binDesc,
# the JSON beside each kernel without a run-info warning; --select: which kernel each of the
# runtime's two lookup paths selects for a call).
load helpers

# graph DIR ARCH SOC ADD_LEN: Add (AIV only) on float16[ADD_LEN] and Mul (AIC only) on
# bfloat16[16,32] FRACTAL_NZ, both left out of SuperKernels.
graph() {
    static_kernel "$1/k" add KERNEL_TYPE_AIV_ONLY
    static_kernel "$1/k" mul KERNEL_TYPE_AIC_ONLY
    cat >"$1/graph.yaml" <<EOF
name: g
npu_arch: $2
soc_version: $3
super_kernel_optimize: false
inputs: [{name: x, shape: [$4], dtype: float16}, {name: w, shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [$4], dtype: float16}]}
  - {name: m, type: Mul, kernel: {json_path: k/mul.json, bin_path: k/mul.o}, inputs: [w], outputs: [{name: z, shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]}
EOF
}

ai() { echo "$W/root/opp/static_kernel/ai_core"; }

# read_index SOC_DIR: what the runtime finds; fails the test when it would skip anything.
read_index() {
    run "$OPBASE_READ" "$W/root/opp" "$1"
    echo "$output"
    [ "$status" -eq 0 ]
}

# skinst COMMAND ARGS...: skinstall on the test's install root.
skinst() {
    mkdir -p "$W/root"
    "$SKINSTALL" "$@" --install-path "$W/root" -q
}

@test "dav-2201: every static kernel of a compiled, installed package is found" {
    graph g dav-2201 Ascend910B1 16
    "$SKC" compile g/graph.yaml --name p1 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    read_index ascend910b
    diff - <(echo "$output") <<'EOF'
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=0,p=0/1,2,(10),(1),0/1,2,(10),(1),0/1,2,(10),(1),0
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=0,p=0/1,2,(10)/1,2,(10)/1,2,(10)
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=0,p=1/1,2,(10),(),0/1,2,(10),(),0/1,2,(10),(),0
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=0,p=1/1,2,(10)/1,2,(10)/1,2,(10)
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=0,p=2/1,2,(10),(),0/1,2,(10),(),0/1,2,(10),(),0
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=0,p=2/1,2,(10)/1,2,(10)/1,2,(10)
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=1,p=0/1,2,(10),(1),0/1,2,(10),(1),0/1,2,(10),(1),0
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=1,p=0/1,2,(10)/1,2,(10)/1,2,(10)
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=1,p=1/1,2,(10),(),0/1,2,(10),(),0/1,2,(10),(),0
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=1,p=1/1,2,(10)/1,2,(10)/1,2,(10)
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=1,p=2/1,2,(10),(),0/1,2,(10),(),0/1,2,(10),(),0
Add core=2 bin=p1/ascend910b/Add/add.o blockDim=8 kernel=add_k ws=64 key=Add/d=1,p=2/1,2,(10)/1,2,(10)/1,2,(10)
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=0,p=0/1b,1d,(10,20),(20,1),0/1b,1d,(10,20),(20,1),0
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=0,p=0/1b,1d,(10,20)/1b,1d,(10,20)
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=0,p=1/1b,1d,(10,20),(),0/1b,1d,(10,20),(),0
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=0,p=1/1b,1d,(10,20)/1b,1d,(10,20)
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=0,p=2/1b,1d,(10,20),(),0/1b,1d,(10,20),(),0
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=0,p=2/1b,1d,(10,20)/1b,1d,(10,20)
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=1,p=0/1b,1d,(10,20),(20,1),0/1b,1d,(10,20),(20,1),0
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=1,p=0/1b,1d,(10,20)/1b,1d,(10,20)
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=1,p=1/1b,1d,(10,20),(),0/1b,1d,(10,20),(),0
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=1,p=1/1b,1d,(10,20)/1b,1d,(10,20)
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=1,p=2/1b,1d,(10,20),(),0/1b,1d,(10,20),(),0
Mul core=1 bin=p1/ascend910b/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=1,p=2/1b,1d,(10,20)/1b,1d,(10,20)
EOF
    cmp "$(ai)/p1/ascend910b/Add/add.o" g/k/add.o
    # The op compiler's JSON, every field kept, with what the runtime reads filled in.
    python3 - "$(ai)/p1/ascend910b/Add/add.json" g/k/add.json <<'PY'
import json, sys
got, given = (json.load(open(p)) for p in sys.argv[1:])
assert {k: got[k] for k in given} == given, got
assert {k: got[k] for k in set(got) - set(given)} == {"localMemorySize": 0, "schedule_mode": 0}, got
PY
    # Nothing where the runtime does not look.
    [ ! -e "$(ai)/config/ascend910b1" ]
}

@test "dav-2201: later packages win per key; uninstalls bring the earlier kernels back" {
    graph g1 dav-2201 Ascend910_9391 16
    graph g2 dav-2201 Ascend910_9392 32 # Add on another shape; Mul the same call
    "$SKC" compile g1/graph.yaml --name p1 >/dev/null
    "$SKC" compile g2/graph.yaml --name p2 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    skinst install static_kernel_compile_outputs/p2.run
    read_index ascend910_93
    [ "$(grep -c 'bin=p1/ascend910_93/Add/add.o' <<<"$output")" -eq 12 ]
    [ "$(grep -c 'bin=p2/ascend910_93/Add/add.o .*key=Add/d=0,p=0/1,2,(20)/' <<<"$output")" -eq 1 ]
    [ "$(grep -c '^Mul .*bin=p2/' <<<"$output")" -eq 12 ]
    [ "$(grep -c '^Mul .*bin=p1/' <<<"$output")" -eq 0 ]
    skinst uninstall p2
    read_index ascend910_93
    [ "$(grep -c 'bin=p1/' <<<"$output")" -eq 24 ]
    [ "$(grep -c 'bin=p2/' <<<"$output")" -eq 0 ]
    skinst uninstall p1
    read_index ascend910_93
    [[ "$output" != *"bin="* ]]
}

@test "dav-2201: an upgraded package's kernels are the ones found" {
    graph g dav-2201 Ascend910B3 16
    "$SKC" compile g/graph.yaml --name p1 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    static_kernel g/k add KERNEL_TYPE_AIV_ONLY 40
    "$SKC" compile g/graph.yaml --name p1 --package-version 1.1.0 >/dev/null
    skinst upgrade static_kernel_compile_outputs/p1.run
    read_index ascend910b
    [ "$(grep -c '^Add core=2 bin=p1/ascend910b/Add/add.o blockDim=40 ' <<<"$output")" -eq 12 ]
    [ "$(grep -c 'blockDim=8 kernel=add_k' <<<"$output")" -eq 0 ]
    cmp "$(ai)/p1/ascend910b/Add/add.o" g/k/add.o
}

@test "dav-3510: SuperKernels and operators left out are found under ascend950, across installs, upgrades and uninstalls" {
    static_kernel g/k add KERNEL_TYPE_AIV_ONLY
    static_kernel g/k add2 KERNEL_TYPE_AIV_ONLY
    static_kernel g/k mul KERNEL_TYPE_AIC_ONLY
    cat >g/graph.yaml <<'EOF'
name: g
npu_arch: dav-3510
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [16], dtype: float16}], scope: s}
  - {name: a2, type: Add, kernel: {json_path: k/add2.json, bin_path: k/add2.o}, inputs: [y, y], outputs: [{name: y2, shape: [16], dtype: float16}], scope: s}
  - {name: m, type: Mul, kernel: {json_path: k/mul.json, bin_path: k/mul.o}, inputs: [y2], outputs: [{name: z, shape: [16], dtype: float16}], no_fusion: true}
EOF
    fake_bisheng
    # No SoC in the graph: dav-3510's default, Ascend950PR_9599.
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --name p3 >/dev/null
    skinst install static_kernel_compile_outputs/p3.run
    read_index ascend950
    [ "$(grep -c '^SuperKernel core=0 bin=p3/ascend950/SuperKernel/s.o blockDim=[0-9]* kernel=g_s ws=[0-9]* key=SuperKernel/p3/s$' <<<"$output")" -eq 1 ]
    [ "$(grep -c '^Mul core=1 bin=p3/ascend950/Mul/mul.o blockDim=8 kernel=mul_k ws=64 key=Mul/d=[01],p=0/1,2,(10)/1,2,(10)$' <<<"$output")" -eq 2 ]
    [ "$(grep -c '^Mul core=1 bin=p3/ascend950/Mul/mul.o ' <<<"$output")" -eq 12 ]
    # The SuperKernel's packaged JSON has what the runtime reads (read_index: no warning), and no
    # platformInfo: skforge does not know Ascend950PR_9599's core counts.
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["localMemorySize"] == 0 and m["schedule_mode"] == 0 and "num" in m["workspace"] and "platformInfo" not in m, m' "$(ai)/p3/ascend950/SuperKernel/s.json"
    [ "$(grep -c '^Add ' <<<"$output")" -eq 0 ] # fused
    # The object the build linked last (helpers.bash's stand-ins: ld.lld twice, then
    # llvm-objcopy in place), installed as packaged.
    cmp "$(ai)/p3/ascend950/SuperKernel/s.o" <(printf 'linked object lib/s.o\nlinked object lib/s.o\nobjcopied\n')
    # A second package of the same graph: both SuperKernels stay, its Mul wins the shared key.
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --name p4 >/dev/null
    skinst install static_kernel_compile_outputs/p4.run
    read_index ascend950
    [ "$(grep -c '^SuperKernel .*key=SuperKernel/p[34]/s$' <<<"$output")" -eq 2 ]
    [ "$(grep -c '^Mul .*bin=p4/' <<<"$output")" -eq 12 ]
    [ "$(grep -c '^Mul .*bin=p3/' <<<"$output")" -eq 0 ]
    # Upgrading p3 (a new Mul kernel) keeps every kernel readable.
    static_kernel g/k mul KERNEL_TYPE_AIC_ONLY 20
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --name p3 --package-version 1.1.0 >/dev/null
    skinst upgrade static_kernel_compile_outputs/p3.run
    read_index ascend950
    [ "$(grep -c '^SuperKernel ' <<<"$output")" -eq 2 ]
    [ "$(grep -c '^Mul ' <<<"$output")" -eq 12 ]
    skinst uninstall p4
    read_index ascend950
    [ "$(grep -c '^Mul core=1 bin=p3/ascend950/Mul/mul.o blockDim=20 ' <<<"$output")" -eq 12 ]
    [ "$(grep -c '^SuperKernel .*key=SuperKernel/p3/s$' <<<"$output")" -eq 1 ]
    [ "$(grep -c 'p4/' <<<"$output")" -eq 0 ]
    skinst uninstall p3
    read_index ascend950
    [[ "$output" != *"bin="* ]]
}

# calls FILE LINE...: the calls opbase_read --select looks up.
calls() {
    local f=$1
    shift
    printf '%s\n' "$@" >"$f"
}

@test "NCHW and FRACTAL_NZ calls are selected on both of the runtime's lookup paths, at the first lookup" {
    static_kernel g/k conv KERNEL_TYPE_AIC_ONLY
    static_kernel g/k nz KERNEL_TYPE_AIV_ONLY
    cat >g/graph.yaml <<'EOF'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: img, shape: [1, 3, 224, 224], dtype: float32, format: NCHW}, {name: w, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]
ops:
  - {name: c, type: Conv, kernel: {json_path: k/conv.json, bin_path: k/conv.o}, inputs: [img], outputs: [{name: o, shape: [1, 3, 224, 224], dtype: float32, format: NCHW}]}
  - {name: n, type: Nz, kernel: {json_path: k/nz.json, bin_path: k/nz.o}, inputs: [w], outputs: [{name: z, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]}
EOF
    "$SKC" compile g/graph.yaml --name p1 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    read_index ascend910b
    # The issue's NCHW call as the executor keys it (ND, e0 = 224) and as the engine keys it.
    [[ "$output" == *"key=Conv/d=0,p=0/0,2,(1,3,e0,e0),(24c00,c400,e0,1),0/0,2,(1,3,e0,e0),(24c00,c400,e0,1),0"* ]]
    [[ "$output" == *"key=Conv/d=0,p=2/0,0,(1,3,e0,e0),(),0/0,0,(1,3,e0,e0),(),0"* ]]
    # FRACTAL_NZ: the executor keys the view shape, the engine the storage shape.
    [[ "$output" == *"key=Nz/d=0,p=0/1b,1d,(10,20),(20,1),0/1b,1d,(10,20),(20,1),0"* ]]
    [[ "$output" == *"key=Nz/d=0,p=1/1b,1d,(2,1,10,10),(),0/1b,1d,(2,1,10,10),(),0"* ]]
    # Ascend910B1: 24 cube and 48 vector cores (no kernel here has a platformInfo anyway).
    calls c.txt "Conv 0,0,1x3x224x224 0,0,1x3x224x224" "Nz 27,29,2x1x16x16,16x32 27,29,2x1x16x16,16x32"
    run "$OPBASE_READ" "$W/root/opp" ascend910b --select c.txt --cores 24,48
    echo "$output"
    [ "$status" -eq 0 ]
    diff - <(echo "$output") <<'EOF'
Conv aclnn=p1/ascend910b/Conv/conv.o hostapi1=p1/ascend910b/Conv/conv.o hostapi2=p1/ascend910b/Conv/conv.o
Nz aclnn=p1/ascend910b/Nz/nz.o hostapi1=p1/ascend910b/Nz/nz.o hostapi2=p1/ascend910b/Nz/nz.o
EOF
    # Another shape is another call: found on no path, and the reader says so.
    calls d.txt "Conv 0,0,1x3x224x225 0,0,1x3x224x225"
    run "$OPBASE_READ" "$W/root/opp" ascend910b --select d.txt
    [ "$status" -eq 1 ]
    [ "$output" = "Conv aclnn=none hostapi1=none hostapi2=none" ]
}

@test "the runtime of every release line hosts run (9.0.x, 9.1.x, master) reads every kernel and selects every call at its first lookup" {
    static_kernel g/k conv KERNEL_TYPE_AIC_ONLY
    static_kernel g/k nz KERNEL_TYPE_AIV_ONLY
    static_kernel g/k add KERNEL_TYPE_AIV_ONLY
    cat >g/graph.yaml <<'EOF'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: img, shape: [1, 3, 224, 224], dtype: float32, format: NCHW}, {name: w, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}, {name: x, shape: [48, 4096], dtype: float16}]
ops:
  - {name: c, type: Conv, kernel: {json_path: k/conv.json, bin_path: k/conv.o}, inputs: [img], outputs: [{name: o, shape: [1, 3, 224, 224], dtype: float32, format: NCHW}]}
  - {name: n, type: Nz, kernel: {json_path: k/nz.json, bin_path: k/nz.o}, inputs: [w], outputs: [{name: z, shape: [2, 1, 16, 16], view_shape: [16, 32], dtype: bfloat16, format: FRACTAL_NZ}]}
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [48, 4096], dtype: float16}]}
EOF
    "$SKC" compile g/graph.yaml --name p1 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    calls c.txt "Conv 0,0,1x3x224x224 0,0,1x3x224x224" "Nz 27,29,2x1x16x16,16x32 27,29,2x1x16x16,16x32" "Add 1,2,48x4096 1,2,48x4096 1,2,48x4096"
    read_index ascend910b
    local master=$output
    for line in 9.0 9.1 master; do
        # The same kernels, keys and binDescs, without a warning or a skipped entry.
        run "$OPBASE_READ" "$W/root/opp" ascend910b --cann-line "$line"
        echo "$line: $output"
        [ "$status" -eq 0 ]
        [ "$output" = "$master" ]
        run "$OPBASE_READ" "$W/root/opp" ascend910b --select c.txt --cores 24,48 --cann-line "$line"
        echo "$line: $output"
        [ "$status" -eq 0 ]
        diff - <(echo "$output") <<'EOF'
Conv aclnn=p1/ascend910b/Conv/conv.o hostapi1=p1/ascend910b/Conv/conv.o hostapi2=p1/ascend910b/Conv/conv.o
Nz aclnn=p1/ascend910b/Nz/nz.o hostapi1=p1/ascend910b/Nz/nz.o hostapi2=p1/ascend910b/Nz/nz.o
Add aclnn=p1/ascend910b/Add/add.o hostapi1=p1/ascend910b/Add/add.o hostapi2=p1/ascend910b/Add/add.o
EOF
    done
    # A line the reader does not know is a usage error.
    run "$OPBASE_READ" "$W/root/opp" ascend910b --cann-line 8.5
    [ "$status" -eq 2 ]
    [[ "$output" == *"--cann-line 9.0|9.1|master"* ]]
}

@test "a platformInfo with only deterministicLevel (asc-devkit 12c80e5d) is compiled and packaged as written; every line's runtime drops it with a warning" {
    graph g dav-2201 Ascend910B1 16
    sed -i 's/"blockDim"/"platformInfo":{"deterministicLevel":1},"blockDim"/' g/k/add.json
    "$SKC" compile g/graph.yaml --name p1 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["platformInfo"] == {"deterministicLevel": 1}, m' "$(ai)/p1/ascend910b/Add/add.json"
    for line in 9.0 9.1 master; do
        run "$OPBASE_READ" "$W/root/opp" ascend910b --cann-line "$line"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"warning: p1/ascend910b/Add/add.o: Failed to read static kernel json file of platformInfo"* ]]
        # Level 1 (d=1) keys only.
        [ "$(grep -c '^Add .*key=Add/d=0' <<<"$output")" -eq 0 ]
        [ "$(grep -c '^Add .*key=Add/d=1' <<<"$output")" -eq 6 ]
    done
}

@test "compile warns of two operators on one call whose kernels differ only in deterministicLevel; the installed tree keeps the later one" {
    static_kernel g/k a1 KERNEL_TYPE_AIV_ONLY
    static_kernel g/k a2 KERNEL_TYPE_AIV_ONLY
    sed -i 's/"blockDim"/"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":1},"blockDim"/' g/k/a1.json
    sed -i 's/"blockDim"/"platformInfo":{"cubeCoreCnt":24,"vectorCoreCnt":48,"deterministicLevel":2},"blockDim"/' g/k/a2.json
    cat >g/graph.yaml <<'EOF'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: first, type: Add, kernel: {json_path: k/a1.json, bin_path: k/a1.o}, inputs: [x], outputs: [{name: y1, shape: [16], dtype: float16}]}
  - {name: second, type: Add, kernel: {json_path: k/a2.json, bin_path: k/a2.o}, inputs: [x], outputs: [{name: y2, shape: [16], dtype: float16}]}
EOF
    run "$SKC" compile g/graph.yaml --name p1
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"operators 'first' and 'second' share the static key Add/d=1,p=0/"*"differ only in platformInfo.deterministicLevel (1, 2): an installed tree keeps one kernel per key, 'second''s, which CANN 9.0.x and 9.1.x select at every level (they do not compare it) and master at level 2 only"* ]]
    # Level 1 and 2 are both deterministic: d=1 keys only; one kernel per key once installed.
    skinst install static_kernel_compile_outputs/p1.run
    read_index ascend910b
    [ "$(grep -c 'key=Add/d=0' <<<"$output")" -eq 0 ]
    [ "$(grep -c 'bin=p1/ascend910b/Add/a1.o' <<<"$output")" -eq 0 ]
    [ "$(grep -c 'bin=p1/ascend910b/Add/a2.o .*key=Add/d=1' <<<"$output")" -eq 6 ]
}

@test "a SuperKernel's packaged JSON carries what the runtime reads, and platformInfo for a SoC whose cores skforge knows" {
    static_kernel g/k add KERNEL_TYPE_AIV_ONLY
    static_kernel g/k add2 KERNEL_TYPE_AIV_ONLY
    sed -i 's/"blockDim"/"localMemorySize":2048,"schedule_mode":1,"blockDim"/' g/k/add2.json
    cat >g/graph.yaml <<'EOF'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [16], dtype: float16}], scope: s}
  - {name: a2, type: Add, kernel: {json_path: k/add2.json, bin_path: k/add2.o}, inputs: [y, y], outputs: [{name: y2, shape: [16], dtype: float16}], scope: s}
EOF
    fake_bisheng
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --name p1 >/dev/null
    skinst install static_kernel_compile_outputs/p1.run
    read_index ascend910b
    [ "$(grep -c '^SuperKernel core=0 bin=p1/ascend910b/SuperKernel/s.o ' <<<"$output")" -eq 1 ]
    python3 - "$(ai)/p1/ascend910b/SuperKernel/s.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["localMemorySize"] == 2048 and m["schedule_mode"] == 1, m  # its sub-kernels' largest
assert m["platformInfo"] == {"cubeCoreCnt": 24, "vectorCoreCnt": 48}, m
assert "num" in m["workspace"], m
PY
    # --sources-only keeps the vendor's shape.
    "$SKC" compile g/graph.yaml --sources-only >/dev/null
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert "localMemorySize" not in m and "platformInfo" not in m, m' static_kernel_compile_outputs/g_dav-2201_sources/ascend910b/SuperKernel/s.json
}

@test "a runInfo the runtime could not read is refused at compile, naming the field" {
    graph g dav-2201 Ascend910B1 16
    sed -i 's/"blockDim"/"runInfo":{"block_dim":8},"blockDim"/' g/k/add.json
    run "$SKC" compile g/graph.yaml
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"'runInfo.aicpu_block_dim' is missing: CANN's runtime (UpdateStaticJsonExtraInfo) would drop the kernel's runInfo with a warning"* ]]
}

@test "compile refuses a SoC the architecture does not compile for, and a binPath the runtime would misread" {
    graph g dav-3510 Ascend910B1 16
    run "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"SoC 'Ascend910B1' belongs to CANN's ascend910b family, which dav-3510 does not compile for"* ]]
    [ ! -e static_kernel_compile_outputs/g_dav-3510.run ]
    graph h dav-2201 Ascend910B9 16
    run "$SKC" compile h/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"SoC 'Ascend910B9' is not one skforge knows CANN's directory for"* ]]
    graph i dav-2201 Ascend910B1 16
    # A package name with '.o' puts it before the end of every binPath: refused before building.
    run "$SKC" compile i/graph.yaml --name my.ops
    [ "$status" -eq 2 ]
    [[ "$output" == *"package name 'my.ops' has '.o' in it: every binPath of the package (my.ops/<soc dir>/<OpType>/<kernel>.o) would have '.o' before its end, and CANN's runtime cuts a binPath at its first '.o'"* ]]
    [ ! -e static_kernel_compile_outputs/my.ops.run ]
    [ ! -e static_kernel_compile_outputs/my.ops_compile_log ]
}

@test "a kernel that says nothing of its cores is refused, naming it" {
    graph g dav-2201 Ascend910B1 16
    sed -i 's/"sub_operator_kernel_type":"KERNEL_TYPE_AIC_ONLY",//' g/k/mul.json
    run "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"mul.json (operator 'm') says neither its coreType nor its sub_operator_kernel_type"* ]]
}

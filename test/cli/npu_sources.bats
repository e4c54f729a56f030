#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc compile --sources-only: every SuperKernel's source and JSON for the NPU targets, written
# without any CANN tool. The scenarios are those of the vendor's SuperKernel compiler's system
# tests (hicann/graph-autofusion super_kernel/tests/st): two vector-only sub-kernels compiled by
# CANN's op compiler for SuperKernel use, blockDim 32 and 1, on stream 1. The expectations below
# are written from reading the vendor's code and expected outputs; see
# share/doc/cann-conformance.md, "SuperKernel JSON".
load helpers

# subkernel NAME BLOCKDIM TYPE PARAMS [CORE...]: kernels/NAME.{o,json}, the JSON in the shape
# the op compiler writes for a SuperKernel sub-operator (kernelName NAME__kernel0, its entry
# renamed NAME__kernel0_middle, split_mode 4, no early-start flags). PARAMS: comma-separated
# parameter names. CORE: the sub_operator_kernel_name keys (default AiCore).
subkernel() {
    local name=$1 block=$2 type=$3 params=$4
    shift 4
    local cores=("${@:-AiCore}")
    mkdir -p g/kernels
    head -c 4000 /dev/urandom >"g/kernels/$name.o"
    python3 - "$name" "$block" "$type" "$params" "$(sha256sum "g/kernels/$name.o" | cut -d' ' -f1)" "${cores[@]}" <<'PY'
import json, sys
name, block, ktype, params, sha = sys.argv[1:6]
cores = sys.argv[6:]
kernel = name + "__kernel0"
magic = "RT_DEV_BINARY_MAGIC_ELF" if "MIX" in ktype else "RT_DEV_BINARY_MAGIC_ELF_AIVEC"
meta = {
    "binFileName": kernel, "binFileSuffix": ".o", "blockDim": int(block), "kernelName": kernel,
    "magic": magic, "sha256": sha, "supportSuperKernel": 1, "split_mode": 4,
    "sub_operator_op_type": name, "sub_operator_params": params.split(","),
    "sub_operator_kernel_type": ktype,
    "sub_operator_kernel_name": {c: {"func_name": kernel + "_middle" + ("_mix_aic" if c.endswith("cube") else "_mix_aiv" if c.endswith("vec") else ""),
                                     "obj_files": name + ".o"} for c in cores},
    "sub_operator_early_start_set_flag": False, "sub_operator_early_start_wait_flag": False,
    "sub_operator_call_dcci_before_kernel_start": False,
    "sub_operator_call_dcci_after_kernel_end": False,
    "sub_operator_call_dcci_disable_on_kernel": False, "sub_op_with_sync_all": False,
    "timestamp_option": False, "debugBufSize": 0, "debugOptions": "",
    "coreType": "MIX" if "MIX" in ktype else "VectorCore",
    "taskRation": "1:2" if "MIX" in ktype else "0:1",
    "compileInfo": {}, "opParaSize": 8,
}
json.dump(meta, open("g/kernels/%s.json" % name, "w"), indent=2)
PY
}

# st_graph OPTIONS [OPS]: graph te on dav-2201 with scope superkernel_1 (options OPTIONS) over
# the ST's operators: is_inf (blockDim 32: x, y, workspace) then pows (blockDim 1: x1, x2, y,
# workspace), and with OPS=3 is_inf again.
st_graph() {
    subkernel is_inf 32 KERNEL_TYPE_AIV_ONLY x,y,workspace
    subkernel pows 1 KERNEL_TYPE_AIV_ONLY x1,x2,y,workspace
    cat >g/graph.yaml <<EOF2
name: te
npu_arch: dav-2201
soc_version: Ascend910B1
scopes: {superkernel_1: "$1"}
inputs: [{name: x, shape: [1024], dtype: float16}, {name: e, shape: [1024], dtype: float16}]
ops:
  - {name: inf, type: IsInf, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [x], outputs: [{name: y, shape: [1024], dtype: float16}], scope: superkernel_1, stream_id: 1}
  - {name: pows, type: Pows, kernel: {json_path: kernels/pows.json, bin_path: kernels/pows.o}, inputs: [y, e], outputs: [{name: z, shape: [1024], dtype: float16}], scope: superkernel_1, stream_id: 1}
EOF2
    if [ "${2:-2}" = 3 ]; then
        echo "  - {name: inf2, type: IsInf, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [z], outputs: [{name: w, shape: [1024], dtype: float16}], scope: superkernel_1, stream_id: 1}" >>g/graph.yaml
    fi
}

# The vendor's expected outputs these tests follow are graph-autofusion 8.5.0-beta.1's, so they
# compile for that line; the tests at the end check what the 9.0 line writes differently.
CANN=8.5

# Ascend910B1 is of CANN's ascend910b family: its kernels are under the family's directory.
SRC=static_kernel_compile_outputs/te_dav-2201_sources/ascend910b/SuperKernel

# check_json FILE EXPECT [LINE]: the SuperKernel JSON has exactly the vendor's keys (plus `skforge`,
# and `workspace` when the SuperKernel needs one), with the vendor's types and values. EXPECT is
# a Python dict of what the scenario changes: "list" {core: [(func_name, blockDim, streamid,
# param_offset, notify, wait, send, recv)]}, "blockDim", "taskRation".
check_json() {
    python3 - "$1" "$2" "${3:-$CANN}" <<'PY'
import json, os, sys
meta = json.load(open(sys.argv[1]))
want = eval(sys.argv[2])
line = sys.argv[3]
# asc-devkit 9.0.0 writes blockNum for blockDim and adds two keys (compile_op.py _json_except_info)
block = "blockNum" if line == "9.0" else "blockDim"
entry_keys = {"func_name", "split_mode", block, "sub_operator_kernel_type",
              "sub_operator_early_start_set_flag", "sub_operator_early_start_wait_flag",
              "sub_operator_call_dcci_before_kernel_start",
              "sub_operator_call_dcci_after_kernel_end", "streamid",
              "send_event_list", "recv_event_list", "arg_list"}
if line == "9.0":
    entry_keys |= {"sub_operator_op_type", "sub_operator_call_dcci_disable_on_kernel"}
vendor = {"SuperkernelInfo", "binFileName", "binFileSuffix", "blockDim", "coreType",
          "intercoreSync", "kernelName", "magic", "memoryStamping", "opParaSize", "parameters",
          "sha256", "taskRation", "optionalInputMode", "optionalOutputMode", "supportSuperKernel"}
expected_keys = vendor | {"skforge"} | ({"workspace"} if "workspace" in meta else set())
assert set(meta) == expected_keys, sorted(set(meta) ^ expected_keys)
segment = os.environ.get("SEGMENT", "superkernel_1")  # a kernel_info's scope is "superkernel"
assert meta["kernelName"] == "te_" + segment, meta["kernelName"]
assert meta["binFileName"] == segment and meta["binFileSuffix"] == ".o"
assert meta["blockDim"] == want.get("blockDim", 32)
assert meta["coreType"] == "MIX"
assert meta["intercoreSync"] == 1 and type(meta["intercoreSync"]) is int
assert meta["magic"] == "RT_DEV_BINARY_MAGIC_ELF"
assert meta["memoryStamping"] == [] and meta["parameters"] == []
assert meta["opParaSize"] == 8
assert meta["optionalInputMode"] == "gen_placeholder" == meta["optionalOutputMode"]
assert meta["supportSuperKernel"] == 1 and type(meta["supportSuperKernel"]) is int
assert meta["taskRation"] == want.get("taskRation", "0:1"), meta["taskRation"]
assert meta["sha256"] == ""  # nothing was built
if "workspace" in meta:
    ws = meta["workspace"]
    assert ws["num"] == 1 and ws["type"] == [0] and len(ws["size"]) == 1, ws
    assert type(ws["size"][0]) is int and ws["size"][0] > 0, ws
assert list(meta["SuperkernelInfo"]) == ["kernelList"]
lists = meta["SuperkernelInfo"]["kernelList"]
assert sorted(lists) == sorted(want["list"]), sorted(lists)
for core, subs in want["list"].items():
    got = lists[core]
    assert len(got) == len(subs), (core, got)
    for g, (func, blocks, stream, param, notify, wait, send, recv) in zip(got, subs):
        assert set(g) == entry_keys, sorted(g)
        assert g["func_name"] == func and g[block] == blocks and g["streamid"] == stream, g
        if line == "9.0":  # the fixture's sub-kernel JSONs name their OpType, disable no dcci
            assert g["sub_operator_op_type"] == func.split("__")[0], g
            assert g["sub_operator_call_dcci_disable_on_kernel"] is False, g
        assert g["split_mode"] == 4
        assert g["sub_operator_early_start_set_flag"] is False
        assert g["sub_operator_early_start_wait_flag"] is False
        assert g["sub_operator_call_dcci_before_kernel_start"] is False
        assert g["sub_operator_call_dcci_after_kernel_end"] is False
        assert g["send_event_list"] == send and g["recv_event_list"] == recv, g
        assert g["arg_list"] == {"param_offset": param, "notify_param_offset": notify,
                                 "wait_param_offset": wait}, g["arg_list"]
PY
}

# The ST's two-operator kernel list (one "aicore" list: the vendor's default is stream-fusion=0).
TWO_OPS='{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}}'

# vendor_sources OPTIONS [OPS]: the ST graph compiled with --sources-only; no CANN on PATH.
vendor_sources() {
    st_graph "$1" "${2:-2}"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    [ "${lines[${#lines[@]}-1]}" = "static_kernel_compile_outputs/te_dav-2201_sources" ]
    [ -f "$SRC/superkernel_1.cpp" ]
    [ -f "$SRC/superkernel_1.json" ]
    [ "$(ls static_kernel_compile_outputs/te_dav-2201_sources)" = ascend910b ] # no SoC-named dir
    [ ! -e static_kernel_compile_outputs/te_dav-2201.run ]
}

@test "ST default: the vendor's SuperKernel JSON" {
    vendor_sources "stream-fusion=0:early-start=1"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
}

@test "ST early-start=0: the same JSON" {
    vendor_sources "stream-fusion=0:early-start=0"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
}

@test "ST debug-sync-all=1: the same JSON" {
    vendor_sources "stream-fusion=0:early-start=1:debug-sync-all=1"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
}

@test "ST debug-dcci-all=1: the same JSON" {
    vendor_sources "stream-fusion=0:early-start=1:debug-dcci-all=1"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
}

workspace_size() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("workspace", {"size": [0]})["size"][0])' "$1"
}

@test "ST feed-sync-all=1: the workspace grows by the vendor's SyncAll area (32 cores x 512 bytes)" {
    vendor_sources "stream-fusion=0:early-start=1"
    without=$(workspace_size "$SRC/superkernel_1.json")
    vendor_sources "stream-fusion=0:early-start=1:feed-sync-all=1"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
    [ "$(workspace_size "$SRC/superkernel_1.json")" -eq $((without + 16384)) ]
}

@test "ST preload-code=max: the same JSON" {
    vendor_sources "stream-fusion=0:early-start=1:preload-code=max"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
}

@test "ST func-align=256: the same JSON" {
    vendor_sources "stream-fusion=0:early-start=1:func-align=256"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
}

@test "ST three operators: parameter offsets 1, 4, 8" {
    vendor_sources "stream-fusion=0:early-start=1" 3
    check_json "$SRC/superkernel_1.json" '{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], []), ("is_inf__kernel0", 32, 1, 8, None, None, [], [])]}}'
}

@test "ST stream-fusion=1: the kernel list keyed by core" {
    vendor_sources "stream-fusion=1:early-start=1"
    check_json "$SRC/superkernel_1.json" '{"list": {"dav-c220-vec": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}}'
}

# mix_graph OPTIONS: a MIX 1:2 sub-kernel (blockDim 24, four parameters, entries per core) then
# is_inf (vector only, blockDim 24).
mix_graph() {
    subkernel mm 24 KERNEL_TYPE_MIX_AIC_1_2 a,b,c,workspace dav-c220-cube dav-c220-vec
    subkernel is_inf 24 KERNEL_TYPE_AIV_ONLY x,y,workspace
    cat >g/graph.yaml <<EOF2
name: te
npu_arch: dav-2201
soc_version: Ascend910B1
scopes: {superkernel_1: "$1"}
inputs: [{name: x, shape: [1024], dtype: float16}, {name: w, shape: [1024], dtype: float16}]
ops:
  - {name: mm, type: MatMul, kernel: {json_path: kernels/mm.json, bin_path: kernels/mm.o}, inputs: [x, w], outputs: [{name: y, shape: [1024], dtype: float16}], scope: superkernel_1, stream_id: 1}
  - {name: inf, type: IsInf, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [y], outputs: [{name: z, shape: [1024], dtype: float16}], scope: superkernel_1, stream_id: 1}
EOF2
}

@test "MIX 1:2: task ration 1:2, blockDim of the cube cores, the MIX sub-kernel in both core lists" {
    mix_graph "stream-fusion=0:early-start=1"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    check_json "$SRC/superkernel_1.json" '{"blockDim": 24, "taskRation": "1:2", "list": {"aicore": [("mm__kernel0", 24, 1, 1, None, None, [], []), ("is_inf__kernel0", 24, 1, 5, None, None, [], [])]}}'
    mix_graph "stream-fusion=1:early-start=1"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    check_json "$SRC/superkernel_1.json" '{"blockDim": 24, "taskRation": "1:2", "list": {"dav-c220-cube": [("mm__kernel0", 24, 1, 1, None, None, [], [])], "dav-c220-vec": [("mm__kernel0", 24, 1, 1, None, None, [], []), ("is_inf__kernel0", 24, 1, 5, None, None, [], [])]}}'
}

@test "MIX 1:2 blockDim follows the vendor's launch rule, max(aic, ceil(aiv/2)), in JSON and entry" {
    mix_graph "stream-fusion=0:early-start=1"
    subkernel is_inf 48 KERNEL_TYPE_AIV_ONLY x,y,workspace # 48 vector cores = 24 AI cores
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["blockDim"] == 24, d["blockDim"]' \
        "$SRC/superkernel_1.json"
    check_source "$SRC/superkernel_1.cpp" 'GetBlockIdx\(\) < 48'
}

# plan_matches_package: compiles g/graph.yaml with the stand-in toolchain, then checks that
# `skc plan` (JSON and text) reports the launch the package ships: the kernel type and blockDim
# its entry source was generated for, its JSON's blockDim and taskRation, the index's blockDim.
plan_matches_package() {
    fake_bisheng
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml --jobs 1 --no-cache --cann-version "$CANN" >/dev/null
    rm -rf x
    sh static_kernel_compile_outputs/te_dav-2201.run --noexec --extract=x >/dev/null
    "$SKC" plan g/graph.yaml --format json >plan.json
    "$SKC" plan g/graph.yaml >plan.txt
    python3 - x plan.json plan.txt <<'PY'
import json, re, sys
root, plan, text = sys.argv[1:]
sk = root + "/ascend910b/SuperKernel/superkernel_1"
ktype, block = re.search(r"// (KERNEL_TYPE_\w+), blockDim (\d+)", open(sk + ".cpp").read()).groups()
block = int(block)
ration = {"KERNEL_TYPE_MIX_AIV_1_0": "0:1", "KERNEL_TYPE_MIX_AIC_1_0": "1:0",
          "KERNEL_TYPE_MIX_AIC_1_1": "1:1", "KERNEL_TYPE_MIX_AIC_1_2": "1:2"}[ktype]
meta = json.load(open(sk + ".json"))
assert (meta["blockDim"], meta["taskRation"]) == (block, ration), (meta["blockDim"], meta["taskRation"], ktype, block)
(entry,) = json.load(open(root + "/config/ascend910b/binary_info_config.json"))["SuperKernel"]["staticList"]
assert entry["binDesc"]["blockDim"] == block, entry
seg = json.load(open(plan))["segments"][0]
assert (seg["kernel_meta"]["blockDim"], seg["kernel_meta"]["taskRation"]) == (block, ration), seg["kernel_meta"]
assert (seg["launch"]["block_dim"], seg["launch"]["task_ration"], seg["launch"]["kernel_type"]) == (block, ration, ktype), seg["launch"]
line = "  blockDim %d, MIX, taskRation %s, %s (largest sub-kernel blockDim " % (block, ration, ktype)
assert line in open(text).read(), (line, open(text).read())
print(ktype, block, ration)
PY
}

@test "skc plan reports the launch skc compile ships: MIX 1:2 of 24 blocks beside a 48-core vector kernel" {
    mix_graph "stream-fusion=0:early-start=1"
    subkernel is_inf 48 KERNEL_TYPE_AIV_ONLY x,y,workspace # 48 vector cores = 24 AI cores
    run plan_matches_package
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "KERNEL_TYPE_MIX_AIC_1_2 24 1:2" ] # the vendor's rule, not the largest (48)
}

@test "skc plan reports the launch skc compile ships: MIX 1:1 when no more vector than cube cores" {
    mix_graph "stream-fusion=0:early-start=1"
    subkernel mm 24 KERNEL_TYPE_MIX_AIC_1_1 a,b,c,workspace dav-c220-cube dav-c220-vec
    subkernel is_inf 8 KERNEL_TYPE_AIV_ONLY x,y,workspace
    run plan_matches_package
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "KERNEL_TYPE_MIX_AIC_1_1 24 1:1" ] # get_finale_type_and_block_dim
}

@test "two streams: stream ids, event lists, notify and wait slots after each sub-kernel's parameters" {
    subkernel is_inf 32 KERNEL_TYPE_AIV_ONLY x,y,workspace
    subkernel pows 1 KERNEL_TYPE_AIV_ONLY x1,x2,y,workspace
    cat >g/graph.yaml <<EOF2
name: te
npu_arch: dav-2201
soc_version: Ascend910B1
scopes: {superkernel_1: "stream-fusion=1:early-start=1"}
inputs: [{name: x, shape: [1024], dtype: float16}, {name: e, shape: [1024], dtype: float16}]
ops:
  - {name: a, type: IsInf, stream_id: 1, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [x], outputs: [{name: y, shape: [1024], dtype: float16}], send_event_list: [1], scope: superkernel_1}
  - {name: b, type: IsInf, stream_id: 0, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [e], outputs: [{name: f, shape: [1024], dtype: float16}], scope: superkernel_1}
  - {name: c, type: Pows, stream_id: 0, kernel: {json_path: kernels/pows.json, bin_path: kernels/pows.o}, inputs: [f, y], outputs: [{name: z, shape: [1024], dtype: float16}], recv_event_list: [1], scope: superkernel_1}
EOF2
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    # a: parameters 1..3, its notify slot 4; b: 5..7; c: 8..11, its wait slot 12.
    check_json "$SRC/superkernel_1.json" '{"list": {"dav-c220-vec": [("is_inf__kernel0", 32, 1, 1, 4, None, [1], []), ("is_inf__kernel0", 32, 0, 5, None, None, [], []), ("pows__kernel0", 1, 0, 8, None, 12, [], [1])]}}'
}

@test "dav-3510 has no FFTS slot: the first sub-kernel's parameters start at 0" {
    st_graph "stream-fusion=0:early-start=1"
    # dav-3510 compiles for Ascend950 SoCs only: the graph's Ascend910B1 is dropped for the
    # architecture's default SoC, Ascend950PR_9599 (directory ascend950).
    sed -i '/^soc_version:/d' g/graph.yaml
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --npu-arch dav-3510 --cann-version "$CANN"
    [ "$status" -eq 0 ]
    python3 - static_kernel_compile_outputs/te_dav-3510_sources/ascend950/SuperKernel/superkernel_1.json <<'PY'
import json, sys
subs = json.load(open(sys.argv[1]))["SuperkernelInfo"]["kernelList"]["aicore"]
assert [s["arg_list"]["param_offset"] for s in subs] == [0, 3], subs
PY
}

@test "--sources-only needs no CANN, writes no .run, and replaces an earlier sources directory whole" {
    st_graph "stream-fusion=0"
    mkdir -p static_kernel_compile_outputs/te_dav-2201_sources/stale
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH= "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    [ ! -e static_kernel_compile_outputs/te_dav-2201_sources/stale ]
    [ ! -e static_kernel_compile_outputs/te_dav-2201.run ]
    [ -z "$(ls -A static_kernel_compile_outputs | grep '^\.skc-build')" ]
    [ -f static_kernel_compile_outputs/te_dav-2201_compile_log/te_dav-2201_compile_succ.log ]
    # The JSON is what a real build would package, less the binary's digest.
    grep -q '"kernelName": "te_superkernel_1"' "$SRC/superkernel_1.json"
}

@test "--sources-only refuses the host target with a usage error" {
    st_graph "stream-fusion=0"
    run "$SKC" compile g/graph.yaml --sources-only --npu-arch host
    [ "$status" -eq 2 ]
    [[ "$output" == *"--sources-only writes the sources of NPU SuperKernels, not of the 'host' target"* ]]
    [ ! -e static_kernel_compile_outputs/te_host_sources ]
}

# check_source FILE PATTERN...: every extended regular expression is found in the entry source;
# a pattern starting with ! must not be.
check_source() {
    local file=$1 p
    shift
    for p in "$@"; do
        if [ "${p:0:1}" = "!" ]; then
            ! grep -Eq -- "${p:1}" "$file" || { echo "unexpected: ${p:1}"; return 1; }
        else
            grep -Eq -- "$p" "$file" || { echo "missing: $p"; return 1; }
        fi
    done
}

# The constructs every ST entry has: the entry auto_gen_<kernelName>_kernel(void) aligned by
# func-align, the parameter table from get_para_base() with the FFTS address in slot 0, each
# sub-kernel's entry from sub_operator_kernel_name called with its first parameter slot (and its
# split copies chosen by core id) on the vector cores below its blockDim, and the kernel-type
# record of a vector-only MIX SuperKernel with task ration 0:1.
COMMON=('#include "kernel_operator.h"'
    '__global__ __attribute__\(\(aligned\((512|256)\)\)\) __aicore__ void auto_gen_te_superkernel_1_kernel\(void\)'
    'get_para_base\(\)' 'param_base\[0\]' 'set_ffts_base_addr'
    'is_inf__kernel0_middle\(1\)' 'is_inf__kernel0_middle_split3\(1\)' 'pows__kernel0_middle\(4\)'
    'get_coreid\(\)' 'ASCEND_IS_AIV' 'GetBlockIdx\(\) < 32' 'GetBlockIdx\(\) < 1'
    '\.ascend\.meta\.te_superkernel_1_mix_aiv' 'K_TYPE_MIX_AIV_MAIN')

@test "ST entry sources have the vendor's constructs for each option" {
    # The vendor's defaults spelled out: skforge's scope defaults (func-align 2048, early-start 0)
    # come from GE's graph options.
    local st="stream-fusion=0:func-align=512"
    vendor_sources "$st:early-start=1"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'aligned\(512\)' 'SetNextTaskStart' \
        'WaitPreTaskEnd' 'preload\(\(const void \*\)pows__kernel0_middle'
    vendor_sources "$st:early-start=0"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" '!SetNextTaskStart' 'SYNC_AIV_ONLY_ALL'
    vendor_sources "$st:early-start=1:debug-sync-all=1"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'SYNC_AIV_ONLY_ALL'
    [ "$(grep -c 'SYNC_AIV_ONLY_ALL' "$SRC/superkernel_1.cpp")" -ge 4 ] # after each sub-kernel
    vendor_sources "$st:early-start=1:debug-dcci-all=1"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'ENTIRE_DATA_CACHE'
    vendor_sources "$st:early-start=1:feed-sync-all=1"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'param_base\[8\]' \
        'g_superKernelAutoSyncAllConfigGmBaseAddr'
    vendor_sources "$st:early-start=1:preload-code=max"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'PreLoad\('
    vendor_sources "stream-fusion=0:early-start=1:func-align=256"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'aligned\(256\)'
    vendor_sources "$st:early-start=1" 3
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'is_inf__kernel0_middle\(8\)'
}

@test "MIX 1:2 entry source: both halves on AI-core indices, the vector kernel on vector cores" {
    mix_graph "stream-fusion=0:early-start=1:func-align=512"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    check_source "$SRC/superkernel_1.cpp" 'aligned\(512\)' \
        'mm__kernel0_middle_mix_aic\(1\)' 'mm__kernel0_middle_mix_aiv\(1\)' \
        'get_block_idx\(\) < 24' 'is_inf__kernel0_middle\(5\)' 'GetBlockIdx\(\) < 24' \
        'g_super_kernel_early_start_config = 9;' \
        'te_superkernel_1_mix_aic_section' 'te_superkernel_1_mix_aiv_section' \
        'K_TYPE_MIX_AIC_MAIN\}, \{\{F_TYPE_MIX_TASK_RATION, sizeof\(unsigned int\)\}, 1, 2\}' \
        '!K_TYPE_MIX_AIV_MAIN'
}

@test "two-stream entry source: a program per kind of core, a cross-core flag for the event" {
    subkernel is_inf 48 KERNEL_TYPE_AIV_ONLY x,y,workspace
    subkernel mm 24 KERNEL_TYPE_AIC_ONLY a,b,c,workspace
    cat >g/graph.yaml <<EOF2
name: te
npu_arch: dav-2201
soc_version: Ascend910B1
scopes: {superkernel_1: "stream-fusion=1:early-start=1"}
inputs: [{name: x, shape: [1024], dtype: float16}, {name: e, shape: [1024], dtype: float16}]
ops:
  - {name: a, type: IsInf, stream_id: 0, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [x], outputs: [{name: y, shape: [1024], dtype: float16}], scope: superkernel_1}
  - {name: b, type: MatMul, stream_id: 1, kernel: {json_path: kernels/mm.json, bin_path: kernels/mm.o}, inputs: [e, e], outputs: [{name: f, shape: [1024], dtype: float16}], send_event_list: [1], scope: superkernel_1}
  - {name: c, type: IsInf, stream_id: 0, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [f], outputs: [{name: z, shape: [1024], dtype: float16}], recv_event_list: [1], scope: superkernel_1}
EOF2
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    check_source "$SRC/superkernel_1.cpp" 'void auto_gen_te_superkernel_1_kernel_aic\(void\)' \
        'void auto_gen_te_superkernel_1_kernel_aiv\(void\)' \
        'GetffstMsg\(0x02, AscendC::SYNC_AIC_AIV_FLAG\)' 'wait_flag_dev\(AscendC::SYNC_AIC_AIV_FLAG\);' \
        'mm__kernel0_middle\(4\)' 'is_inf__kernel0_middle\(9\)' '!SetNextTaskStart'
}

@test "tiling sink and prefetch: notify and wait slots in the JSON, NotifyFunc/WaitFunc on them in the entry" {
    subkernel is_inf 32 KERNEL_TYPE_AIV_ONLY x,y,workspace
    subkernel pows 1 KERNEL_TYPE_AIV_ONLY x1,x2,y,workspace
    # inf produces what pows' AICPU tiling reads (event 1: inf notifies the tiling); pows waits
    # for its tiling (event 2) and lets the prefetch of w start (event 3); inf2 waits for the
    # prefetch (event 4). Neither the tiling nor the prefetch is fused, nor cuts the scope.
    cat >g/graph.yaml <<EOF2
name: te
npu_arch: dav-2201
soc_version: Ascend910B1
scopes: {superkernel_1: "stream-fusion=0:early-start=1"}
inputs: [{name: x, shape: [1024], dtype: float16}, {name: w, shape: [1024], dtype: float16}]
ops:
  - {name: inf, type: IsInf, stream_id: 1, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [x], outputs: [{name: y, shape: [1024], dtype: float16}], send_event_list: [1], scope: superkernel_1}
  - {name: pows_tiling, type: PowsTiling, kind: aicpu_tiling, tiling_for: pows, stream_id: 3, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [y], outputs: [{name: t, shape: [8], dtype: int32}], recv_event_list: [1], send_event_list: [2]}
  - {name: pows, type: Pows, stream_id: 1, kernel: {json_path: kernels/pows.json, bin_path: kernels/pows.o}, inputs: [y, t], outputs: [{name: z, shape: [1024], dtype: float16}], recv_event_list: [2], send_event_list: [3], scope: superkernel_1}
  - {name: prefetch_w, kind: prefetch, stream_id: 2, inputs: [w], recv_event_list: [3], send_event_list: [4], scope: superkernel_1}
  - {name: inf2, type: IsInf, stream_id: 1, kernel: {json_path: kernels/is_inf.json, bin_path: kernels/is_inf.o}, inputs: [z, w], outputs: [{name: o, shape: [1024], dtype: float16}], recv_event_list: [4], scope: superkernel_1}
EOF2
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(ls "$SRC"/*.cpp)" = "$SRC/superkernel_1.cpp" ] # one SuperKernel
    # inf: parameters 1..3, notify 4; pows: 5..8, notify 9, wait 10; inf2: 11..13, wait 14.
    check_json "$SRC/superkernel_1.json" '{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, 4, None, [1], []), ("pows__kernel0", 1, 1, 5, 9, 10, [3], [2]), ("is_inf__kernel0", 32, 1, 11, None, 14, [], [4])]}}'
    check_source "$SRC/superkernel_1.cpp" \
        '// inf notifies pows_tiling \(AICPU tiling of pows, stream 3\): event 1' \
        'NotifyFunc<false>\(param_base\[4\]\);' \
        '// pows waits for pows_tiling \(AICPU tiling of pows, stream 3\): event 2' \
        'WaitFunc<false>\(param_base\[10\]\);' \
        '// pows notifies prefetch_w \(prefetch of w, stream 2\): event 3' \
        'NotifyFunc<false>\(param_base\[9\]\);' \
        '// inf2 waits for prefetch_w \(prefetch of w, stream 2\): event 4' \
        'WaitFunc<false>\(param_base\[14\]\);'
    # The order in the entry: inf, its notify, pows' wait, pows, its notify, inf2's wait, inf2.
    python3 - "$SRC/superkernel_1.cpp" <<'PY'
import sys
src = open(sys.argv[1]).read()
order = ["is_inf__kernel0_middle(1)", "NotifyFunc<false>(param_base[4])",
         "WaitFunc<false>(param_base[10])", "pows__kernel0_middle(5)",
         "NotifyFunc<false>(param_base[9])", "WaitFunc<false>(param_base[14])",
         "is_inf__kernel0_middle(11)", "*lock = 0; // event 2 of pows",
         "*lock = 0; // event 4 of inf2"]
at = [src.find(s) for s in order]
assert -1 not in at and at == sorted(at), list(zip(order, at))
PY
}

# elf_archive OUT TEXT MEMBER...: an ar archive of host ELF objects, each with a .text of TEXT
# bytes, as the op compiler packs a sub-kernel's split copies.
elf_archive() {
    local out=$1 text=$2
    shift 2
    mkdir -p elf
    for m in "$@"; do
        printf '.text\n.space %s\n.data\n.space 20000\n' "$text" | cc -c -x assembler - -o "elf/$m"
    done
    rm -f "$out"
    (cd elf && ar rcs "../$out" "$@")
}

@test "preload counts the .text the vendor measures, in the archive member obj_files names" {
    st_graph "stream-fusion=0:early-start=1"
    # is_inf: .text 4000 bytes in is_inf.o (2 lines of 2 KiB), pows: 10000 (5 lines); each
    # object also has 20000 bytes of data, which the vendor does not count.
    python3 - <<'PY'
import json
for name in ("is_inf", "pows"):
    path = "g/kernels/%s.json" % name
    meta = json.load(open(path))
    meta["sub_operator_kernel_name"]["AiCore"]["obj_files"] = name + ".o"
    meta["sub_operator_kernel_name"]["AiCore"].update(
        {"obj_files_split%d" % k: "%s_split%d.o" % (name, k) for k in (1, 2, 3)})
    json.dump(meta, open(path, "w"))
PY
    elf_archive g/kernels/is_inf.o 4000 is_inf.o is_inf_split1.o is_inf_split2.o is_inf_split3.o
    elf_archive g/kernels/pows.o 10000 pows.o pows_split1.o pows_split2.o pows_split3.o
    python3 - <<'PY'
import hashlib, json
for name in ("is_inf", "pows"):
    path = "g/kernels/%s.json" % name
    meta = json.load(open(path))
    meta["sha256"] = hashlib.sha256(open("g/kernels/%s.o" % name, "rb").read()).hexdigest()
    json.dump(meta, open(path, "w"))
PY
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    grep -q 'preload((const void \*)is_inf__kernel0_middle, 2);' "$SRC/superkernel_1.cpp"
    grep -q 'preload((const void \*)is_inf__kernel0_middle_split3, 2);' "$SRC/superkernel_1.cpp"
    grep -q 'preload((const void \*)pows__kernel0_middle, 5);' "$SRC/superkernel_1.cpp"
    ! grep -q 'preload((const void \*)pows__kernel0_middle, 8);' "$SRC/superkernel_1.cpp"
}

@test "a sub-kernel's own dcci before and after: on every core of its kind from 9.0 on, inside its block guard on 8.5" {
    st_graph "stream-fusion=0:early-start=1"
    python3 - <<'PY'
import hashlib, json
path = "g/kernels/pows.json"
meta = json.load(open(path))
meta["sub_operator_call_dcci_before_kernel_start"] = True
meta["sub_operator_call_dcci_after_kernel_end"] = True
json.dump(meta, open(path, "w"))
PY
    for line in 9.0 8.5; do
        run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version $line
        [ "$status" -eq 0 ]
        # graph-autofusion gen_call_func: at e1cbeb9b (9.0) the dcci is outside
        # `if (GetBlockIdx() < blockDim)`, at 423ae264 (8.5) inside it.
        python3 - "$SRC/superkernel_1.cpp" $line <<'PY'
import sys
src, line = open(sys.argv[1]).read(), sys.argv[2]
dcci = "dcci((__gm__ uint64_t*)0, cache_line_t::ENTIRE_DATA_CACHE, dcci_dst_t::CACHELINE_OUT);"
guard = "if (AscendC::GetBlockIdx() < 1) {"
call = "pows__kernel0_middle(4);"
at_call = src.index(call)
before = src.rfind(dcci, 0, at_call)
at_guard = src.rfind(guard, 0, at_call)
after = src.index(dcci, at_call)
block_end = src.index("\n        }\n", at_call)  # the guard's closing brace
if line == "9.0":
    assert before != -1 and at_guard > before and after > block_end, src
else:
    assert before > at_guard and after < block_end, src
PY
    done
    json_pows=$(python3 -c "import json;print(json.load(open('$SRC/superkernel_1.json'))['SuperkernelInfo']['kernelList']['aicore'][1]['sub_operator_call_dcci_before_kernel_start'])")
    [ "$json_pows" = True ]
}

# ---- Conventions per CANN release (cann-conformance.md, "Conventions per CANN release") ------

@test "--cann-version 9.0: the 9.0 line's kernel-list keys (blockNum, sub_operator_op_type, sub_operator_call_dcci_disable_on_kernel)" {
    CANN=9.0 vendor_sources "stream-fusion=0:early-start=1"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS" 9.0
    CANN=8.5 vendor_sources "stream-fusion=0:early-start=1"
    check_json "$SRC/superkernel_1.json" "$TWO_OPS" 8.5
    # The check itself tells the lines apart.
    run check_json "$SRC/superkernel_1.json" "$TWO_OPS" 9.0
    [ "$status" -ne 0 ]
}

@test "--cann-version 9.0 refuses debug-aic-num/debug-aiv-num above the SoC's cores or below the sub-kernels' blocks; 8.5 builds them" {
    # graph-autofusion e1cbeb9b super_kernel_op_infos.py (check_debug_aic_aiv_num_exceed_
    # platform_num_blocks, ..._exceed_sub_op_aic_aiv_num); 423ae264 checks neither. The ST's
    # sub-kernels are vector-only, is_inf on 32 blocks: a MIX_AIV_1_0 launch of 32.
    LOG=static_kernel_compile_outputs/te_dav-2201_compile_log/te_dav-2201_compile_fail.log
    st_graph "debug-aic-num=0:debug-aiv-num=16"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version 9.0
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:4:"*"SuperKernel superkernel_1: debug-aiv-num=16 is below the 32 vector cores its sub-kernels need (a KERNEL_TYPE_MIX_AIV_1_0 launch of 32 blocks): CANN's SuperKernel compiler (9.0 line) refuses"* ]]
    [[ "$output" == *"give debug-aiv-num at least 32"* ]]
    [ ! -e static_kernel_compile_outputs/te_dav-2201_sources ]
    # skc check and plan of the graph follow the default line, 9.0.
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"debug-aiv-num=16 is below the 32 vector cores"* ]]
    st_graph "debug-aic-num=0:debug-aiv-num=64"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version 9.0
    [ "$status" -eq 1 ]
    [[ "$output" == *"debug-aiv-num=64 exceeds the 48 vector cores of Ascend910B1: CANN's SuperKernel compiler (9.0 line) refuses a debug core count above the SoC's"* ]]
    # In range: built, the launch the counts say.
    st_graph "debug-aic-num=0:debug-aiv-num=40"
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version 9.0
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["blockDim"] == 40, m["blockDim"]' "$SRC/superkernel_1.json"
    # The 8.5 line's generator checks neither: both counts are built (capped at the SoC's cores
    # by skforge, its own choice).
    for n in 16 64; do
        st_graph "debug-aic-num=0:debug-aiv-num=$n"
        run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version 8.5
        [ "$status" -eq 0 ]
    done
}

# line_of DIR: the kernel-list key of blockDim in the compiled ST JSON, and the log's line.
compiled_line() {
    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["SuperkernelInfo"]["kernelList"]["aicore"][0]; print("blockNum" if "blockNum" in e else "blockDim")' "$SRC/superkernel_1.json"
}

@test "the CANN line: --cann-version, else the toolkit's compiler/version.info, else 9.0; the log says which" {
    st_graph "stream-fusion=0"
    LOG=static_kernel_compile_outputs/te_dav-2201_compile_log/te_dav-2201_compile_succ.log
    # No toolkit: the documented default, 9.0.
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH= "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 0 ]
    [ "$(compiled_line)" = blockNum ]
    grep -q '^CANN conventions 9.0 (the default' "$LOG"
    # A toolkit that names its version: CANN's compiler/version.info.
    mkdir -p cann/compiler
    printf 'Version=8.5.0\n' >cann/compiler/version.info
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH="$PWD/cann" "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 0 ]
    [ "$(compiled_line)" = blockDim ]
    grep -q "^CANN conventions 8.5 (the toolkit at $PWD/cann (Version=8.5.0))" "$LOG"
    # --cann-version wins.
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH="$PWD/cann" "$SKC" compile g/graph.yaml --sources-only --cann-version 9.0
    [ "$status" -eq 0 ]
    [ "$(compiled_line)" = blockNum ]
    # A 9.1 toolkit: the 9.1 row, the same kernel list; the log says what its operator JSONs
    # no longer carry.
    printf 'Version=9.1.0\n' >cann/compiler/version.info
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH="$PWD/cann" "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 0 ]
    [ "$(compiled_line)" = blockNum ]
    grep -q "^CANN conventions 9.1 (the toolkit at $PWD/cann (Version=9.1.0))" "$LOG"
    grep -q "^CANN 9.1: operator JSONs do not say whether a sub-kernel was compiled with printf" "$LOG"
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH="$PWD/cann" "$SKC" compile g/graph.yaml --sources-only --cann-version 9.0
    [ "$status" -eq 0 ]
    ! grep -q "^CANN 9.0: operator JSONs" "$LOG"
    # A toolkit of a line skforge has no table row for is refused, naming the version.
    printf 'Version=8.0.RC2\n' >cann/compiler/version.info
    run env PATH=/usr/bin:/bin ASCEND_HOME_PATH="$PWD/cann" "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 1 ]
    [[ "$output" == *"is version '8.0.RC2'"*"--cann-version 8.5, 9.0 or 9.1"* ]]
    [ ! -e static_kernel_compile_outputs/te_dav-2201_sources ]
    # Usage errors: an unknown line, and the host target (skforge's own conventions).
    run "$SKC" compile g/graph.yaml --sources-only --cann-version 7.0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--cann-version '7.0': expected 8.5, 9.0 or 9.1"* ]]
    run "$SKC" compile g/graph.yaml --npu-arch host --cann-version 9.0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--cann-version chooses the conventions of NPU SuperKernels"* ]]
}

@test "NPU targets use the vendor generator's defaults for options no scope or graph sets" {
    # The scope sets nothing: stream-fusion 0 (one "aicore" list), early start on, func-align
    # 512, as graph-autofusion's SuperOperatorInfos and super_kernel.py default them.
    st_graph ""
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    check_json "$SRC/superkernel_1.json" "$TWO_OPS"
    check_source "$SRC/superkernel_1.cpp" "${COMMON[@]}" 'aligned\(512\)' 'SetNextTaskStart'
    # skc plan plans the NPU graph with the same defaults.
    run "$SKC" plan g/graph.yaml --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; s=json.loads(sys.argv[1])["segments"][0]["options"]; assert s["stream_fusion"] is False and s["early_start"] == 1 and s["func_align"] == 512, s' "$output"
    # A graph option still wins over the vendor's default.
    sed -i 's/^scopes:/super_kernel_optimize_options: {stream_fusion: 1}\nscopes:/' g/graph.yaml
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version "$CANN"
    [ "$status" -eq 0 ]
    check_json "$SRC/superkernel_1.json" '{"list": {"dav-c220-vec": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}}'
}

# ---- The vendor's kernel_info as the graph (cann-conformance.md, "The vendor's input") -------

# st_kernel_info OPTIONS: g/te.json, the vendor's ST input as its test_smoke.py writes it (an
# op_list of stream_id, bin_path, json_path; the options string), over the ST's sub-kernels.
st_kernel_info() {
    subkernel is_inf 32 KERNEL_TYPE_AIV_ONLY x,y,workspace
    subkernel pows 1 KERNEL_TYPE_AIV_ONLY x1,x2,y,workspace
    cat >g/te.json <<EOF2
{"super_kernel_options": "$1",
 "op_list": [{"stream_id": 1, "bin_path": "kernels/is_inf.o", "json_path": "kernels/is_inf.json"},
             {"stream_id": 1, "bin_path": "kernels/pows.o", "json_path": "kernels/pows.json"}]}
EOF2
}

KI=static_kernel_compile_outputs/te_dav-2201_sources/ascend910b/SuperKernel

@test "skc compile KERNEL_INFO.json: the vendor's ST input builds the SuperKernel the equivalent graph does" {
    for opts in "stream-fusion=0:early-start=1" "stream-fusion=0:early-start=0" "stream-fusion=1:early-start=1:debug-sync-all=1"; do
        vendor_sources "$opts"
        mkdir -p want && cp "$SRC/superkernel_1.cpp" "$SRC/superkernel_1.json" want/
        st_kernel_info "$opts"
        run env PATH=/usr/bin:/bin SUPERKERNEL_COMPILE_SOC_VERSION=Ascend910B1 "$SKC" compile g/te.json --sources-only --cann-version "$CANN"
        [ "$status" -eq 0 ]
        [ "${lines[${#lines[@]}-1]}" = "static_kernel_compile_outputs/te_dav-2201_sources" ]
        if [ "$opts" != "stream-fusion=1:early-start=1:debug-sync-all=1" ]; then
            SEGMENT=superkernel check_json "$KI/superkernel.json" "$TWO_OPS"
        fi
        # The vendor's fields and the entry are the graph's, but for the names.
        python3 - want/superkernel_1.json "$KI/superkernel.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for m in (a, b):
    for k in ("skforge", "kernelName", "binFileName", "workspace"):
        m.pop(k, None)
assert a == b, (a, b)
PY
        # (comments name the graph's operators; the kernel_info's are op0, op1)
        diff <(sed 's/te_superkernel_1/te_superkernel/g' want/superkernel_1.cpp | grep -v '^ *//') \
            <(grep -v '^ *//' "$KI/superkernel.cpp")
    done
}

@test "kernel_info: events and streams as given, stream order orders operators without tensors, dynamic tasks and bad entries refused" {
    subkernel v 8 KERNEL_TYPE_AIV_ONLY x,y,workspace
    cat >g/ki.json <<'EOF2'
{"super_kernel_options": "stream-fusion=1:early-start=0",
 "op_list": [{"stream_id": 0, "bin_path": "kernels/v.o", "json_path": "kernels/v.json", "task_type": "normal", "send_event_list": [5], "recv_event_list": []},
             {"stream_id": 0, "bin_path": "kernels/v.o", "json_path": "kernels/v.json"},
             {"stream_id": 1, "bin_path": "kernels/v.o", "json_path": "kernels/v.json", "recv_event_list": [5]}]}
EOF2
    run env PATH=/usr/bin:/bin "$SKC" compile g/ki.json --sources-only --cann-version 9.0
    [ "$status" -eq 0 ]
    python3 - static_kernel_compile_outputs/ki_dav-2201_sources/ascend910_93/SuperKernel/superkernel.json <<'PY'
import json, sys
lists = json.load(open(sys.argv[1]))["SuperkernelInfo"]["kernelList"]
got = [(e["streamid"], e["send_event_list"], e["recv_event_list"], e["sub_operator_op_type"]) for e in lists["dav-c220-vec"]]
assert got == [(0, [5], [], "v"), (0, [], [], "v"), (1, [], [5], "v")], got
PY
    # No tensors: the second operator depends on the first through their stream, so the plan
    # puts a barrier before it though nothing flows between them.
    run "$SKC" plan g/ki.json --format json
    [ "$status" -eq 0 ]
    python3 -c 'import json,sys; s=json.loads(sys.argv[1])["segments"][0]; assert s["ops"] == ["op0","op1","op2"], s["ops"]; b=s["kernel_meta"]["skforge"]["barriers"]; assert [x["before"] for x in b] == [1], b' "$output"
    # The vendor's refusals and a malformed entry.
    sed -i 's/"task_type": "normal"/"task_type": "dynamic"/' g/ki.json
    run "$SKC" plan g/ki.json
    [ "$status" -eq 0 ]
    [[ "$output" == *"op0  v  DYNAMIC_TASK_UNSUPPORT  dynamic task"* ]] # skforge fuses static sub-kernels only
    sed -i 's/"stream_id": 1,/"stream_id": "one",/' g/ki.json
    run env PATH=/usr/bin:/bin "$SKC" compile g/ki.json --sources-only
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/ki.json"*"kernel_info op_list[2].stream_id: is \"one\", not a stream id"* ]]
    run "$SKC" compile g/ki.json --npu-arch host
    [ "$status" -eq 2 ]
    [[ "$output" == *"kernel_info"*"precompiled NPU sub-kernels"* ]]
}

# ---- What the vendor's generator refuses (cann-conformance.md, "Refusals of the vendor's generator")

@test "NPU targets refuse what the vendor's generator refuses: early-start flags under early-start=0, a split_mode not the scope's, a second real stream without stream fusion" {
    st_graph "stream-fusion=0:early-start=0"
    python3 -c 'import json; p="g/kernels/pows.json"; m=json.load(open(p)); m["sub_operator_early_start_wait_flag"]=True; json.dump(m, open(p,"w"))'
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"'pows' (kernel pows__kernel0) was compiled for early start (sub_operator_early_start_set_flag false, _wait_flag true) but SuperKernel 'superkernel_1' has early-start=0: CANN's SuperKernel compiler refuses a sub-kernel whose early-start mode does not match the SuperKernel's"* ]]
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 1 ]
    [ ! -e static_kernel_compile_outputs/te_dav-2201_sources ]
    st_graph "stream-fusion=0:split-mode=2"
    run "$SKC" plan g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"'inf' (kernel is_inf__kernel0) has split_mode 4 but SuperKernel 'superkernel_1' has split-mode=2: CANN's SuperKernel compiler refuses a sub-kernel whose split_mode does not match the SuperKernel's (compile the sub-kernel with the scope's options, or give scope 'superkernel_1' split-mode=4)"* ]]
    # pows on another stream, reading only graph inputs: no event orders it after inf.
    st_graph "stream-fusion=0"
    sed -i 's/inputs: \[y, e\], outputs: \[{name: z, shape: \[1024\], dtype: float16}\], scope: superkernel_1, stream_id: 1}/inputs: [x, e], outputs: [{name: z, shape: [1024], dtype: float16}], scope: superkernel_1, stream_id: 2}/' g/graph.yaml
    grep -q 'stream_id: 2' g/graph.yaml
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"'pows' (stream 2) follows 'inf' (stream 1) in SuperKernel 'superkernel_1' with no event between them and stream-fusion=0: CANN's SuperKernel compiler refuses more than one real stream without stream fusion (\"super kernel do not support more than 2 real stream\")"* ]]
    sed -i 's/superkernel_1: "stream-fusion=0"/superkernel_1: "stream-fusion=1"/' g/graph.yaml
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 0 ] # two-stream mode
}

@test "NPU targets refuse an event between two sub-kernels of one stream, as the vendor's generator does" {
    # graph-autofusion 423ae264 and e1cbeb9b super_kernel_op_infos.py: "super kernel do not
    # support self send/receive pair within 1 real stream".
    for fusion in 0 1; do
        st_graph "stream-fusion=$fusion"
        sed -i 's/scope: superkernel_1, stream_id: 1}$/&X/' g/graph.yaml
        sed -i '0,/stream_id: 1}X$/s//stream_id: 1, send_event_list: [1]}/; s/stream_id: 1}X$/stream_id: 1, recv_event_list: [1]}/' g/graph.yaml
        grep -q 'send_event_list: \[1\]' g/graph.yaml && grep -q 'recv_event_list: \[1\]' g/graph.yaml
        for cmd in check plan; do
            run "$SKC" "$cmd" g/graph.yaml
            [ "$status" -eq 1 ]
            [[ "$output" == *"error: 'pows' receives event 1 from 'inf' on the same stream (1) in SuperKernel 'superkernel_1': CANN's SuperKernel compiler refuses an event between two sub-kernels of one stream (\"super kernel do not support self send/receive pair within 1 real stream\")"* ]]
            [[ "$output" == *"remove event 1 from 'inf' send_event_list and 'pows' recv_event_list (the stream orders them), or put one of them on another stream"* ]]
        done
        for backend in cann skforge; do
            run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --sk-backend "$backend"
            [ "$status" -eq 1 ]
            [[ "$output" == *"'pows' receives event 1 from 'inf' on the same stream (1)"* ]]
            [ ! -e static_kernel_compile_outputs/te_dav-2201_sources ]
        done
    done
    # On another stream the event orders the two: accepted.
    sed -i 's/stream_id: 1, recv_event_list/stream_id: 2, recv_event_list/' g/graph.yaml
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 0 ]
}

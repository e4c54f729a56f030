#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The vendor's SuperKernel system-test scenarios (hicann/graph-autofusion super_kernel/tests/st:
# the 31 of master e1cbeb9b, the 9.0 line, and the 11 of 8.5.0-beta.1 423ae264), one test each,
# fed to skforge as the vendor's own input: a kernel_info (op_list + super_kernel_options) over
# stand-in sub-kernels of our own. The expectations are the constructs we read in the vendor's
# expected outputs (expect_sk_code.cc, expect_compiled_json.json); nothing of the vendor's is
# copied. Where skforge does not build a vendor feature the test pins its refusal, which names
# the feature (share/doc/cann-conformance.md, "The vendor's ST scenarios").
load helpers

# sk NAME TYPE BLOCKDIM PARAMS [SPLIT]: g/kernels/NAME.{o,json}, a sub-kernel JSON in the shape
# CANN's op compiler writes for a SuperKernel sub-operator. TYPE: AIV_ONLY, AIC_ONLY,
# MIX_AIV_1_0, MIX_AIC_1_0, MIX_AIC_1_1, MIX_AIC_1_2; SPLIT: its split_mode (default 4), `none`
# for no split_mode. EXTRA (environment): a Python dict merged into the JSON.
sk() {
    local name=$1 type=$2 block=$3 params=$4 split=${5:-4}
    mkdir -p g/kernels
    head -c 4000 /dev/urandom >"g/kernels/$name.o"
    python3 - "$name" "$type" "$block" "$params" "$split" "$(sha256sum "g/kernels/$name.o" | cut -d' ' -f1)" "${EXTRA:-{\}}" <<'PY'
import json, sys
name, ktype, block, params, split, sha, extra = sys.argv[1:8]
kernel = name + "__kernel0"
cores = {"AIV_ONLY": ["AiCore"], "AIC_ONLY": ["AiCore"], "MIX_AIV_1_0": ["dav-c220-vec"],
         "MIX_AIC_1_0": ["dav-c220-cube"], "MIX_AIC_1_1": ["dav-c220-cube", "dav-c220-vec"],
         "MIX_AIC_1_2": ["dav-c220-cube", "dav-c220-vec"]}[ktype]
suffix = {"AiCore": "", "dav-c220-cube": "_mix_aic", "dav-c220-vec": "_mix_aiv"}
mix = "MIX" in ktype
meta = {"binFileName": name, "binFileSuffix": ".o", "blockDim": int(block), "kernelName": kernel,
        "coreType": "MIX" if mix else ("AiCore" if ktype == "AIC_ONLY" else "VectorCore"),
        "magic": "RT_DEV_BINARY_MAGIC_ELF" if mix else
                 ("RT_DEV_BINARY_MAGIC_ELF_AICUBE" if ktype == "AIC_ONLY" else "RT_DEV_BINARY_MAGIC_ELF_AIVEC"),
        "sha256": sha, "supportSuperKernel": 1, "opParaSize": 8,
        "sub_operator_op_type": name, "sub_operator_params": params.split(","),
        "sub_operator_kernel_type": "KERNEL_TYPE_" + ktype,
        "sub_operator_kernel_name": {c: {"func_name": kernel + suffix[c] + "_middle",
                                         "obj_files": name + suffix[c] + ".o"} for c in cores},
        "sub_operator_early_start_set_flag": False, "sub_operator_early_start_wait_flag": False,
        "sub_operator_call_dcci_before_kernel_start": False,
        "sub_operator_call_dcci_after_kernel_end": False,
        "sub_operator_call_dcci_disable_on_kernel": False, "sub_op_with_sync_all": False}
if mix:
    meta["taskRation"] = ktype[-3:].replace("_", ":")
if split != "none":
    meta["split_mode"] = int(split)
meta.update(json.loads(extra))
json.dump(meta, open("g/kernels/%s.json" % name, "w"), indent=2)
PY
}

# ki OPTIONS OP...: g/ki.json, the vendor's kernel_info. OP: NAME@STREAM[@send=E,..][@recv=E,..]
# [@dynamic], the sub-kernel g/kernels/NAME on that stream.
ki() {
    python3 - "$@" <<'PY'
import json, sys
ops = []
for spec in sys.argv[2:]:
    name, stream, *rest = spec.split("@")
    e = {"stream_id": int(stream), "bin_path": "kernels/%s.o" % name,
         "json_path": "kernels/%s.json" % name}
    for r in rest:
        if r == "dynamic":
            e["task_type"] = "dynamic"
        else:
            key, value = r.split("=")
            e[key + "_event_list"] = [int(x) for x in value.split(",")]
    ops.append(e)
json.dump({"super_kernel_options": sys.argv[1], "op_list": ops}, open("g/ki.json", "w"), indent=1)
PY
}

SRC=static_kernel_compile_outputs/ki_dav-2201_sources/ascend910b/SuperKernel

# build VERSION: skc compile g/ki.json --sources-only for Ascend910B1 (24 cube, 48 vector cores).
build() {
    rm -rf static_kernel_compile_outputs
    run env PATH=/usr/bin:/bin SUPERKERNEL_COMPILE_SOC_VERSION=Ascend910B1 "$SKC" compile g/ki.json --sources-only --cann-version "$1"
    [ "$status" -eq 0 ] || { echo "$output"; return 1; }
    [ -f "$SRC/superkernel.cpp" ] && [ -f "$SRC/superkernel.json" ]
}

# refused VERSION TEXT...: skc compile fails (exit 1) and its output has every TEXT.
refused() {
    local v=$1 t
    shift
    rm -rf static_kernel_compile_outputs
    run env PATH=/usr/bin:/bin SUPERKERNEL_COMPILE_SOC_VERSION=Ascend910B1 "$SKC" compile g/ki.json --sources-only --cann-version "$v"
    [ "$status" -eq 1 ] || { echo "status $status: $output"; return 1; }
    for t in "$@"; do
        [[ "$output" == *"$t"* ]] || { echo "missing: $t in $output"; return 1; }
    done
    [ ! -e static_kernel_compile_outputs/ki_dav-2201_sources ]
}

# has PATTERN...: each extended regular expression is in the entry; !PATTERN must not be.
has() {
    local p
    for p in "$@"; do
        if [ "${p:0:1}" = "!" ]; then
            ! grep -Eq -- "${p:1}" "$SRC/superkernel.cpp" || { echo "unexpected: ${p:1}"; return 1; }
        else
            grep -Eq -- "$p" "$SRC/superkernel.cpp" || { echo "missing: $p"; return 1; }
        fi
    done
}

# count PATTERN: how many lines of the entry match.
count() {
    grep -Ec -- "$1" "$SRC/superkernel.cpp" || true
}

# list VERSION EXPECT: the kernel list of the SuperKernel JSON. EXPECT: a Python dict
# {"list": {core: [(func_name, blockDim, streamid, param_offset, notify, wait, send, recv)]},
# "blockDim": N, "taskRation": "a:b"}; the blockDim key is the line's (8.5 blockDim, 9.0 blockNum).
list() {
    python3 - "$SRC/superkernel.json" "$1" "$2" <<'PY'
import json, sys
meta = json.load(open(sys.argv[1]))
line, want = sys.argv[2], eval(sys.argv[3])
block = "blockNum" if line == "9.0" else "blockDim"
lists = meta["SuperkernelInfo"]["kernelList"]
assert sorted(lists) == sorted(want["list"]), sorted(lists)
for core, subs in want["list"].items():
    got = [(e["func_name"], e[block], e["streamid"], e["arg_list"]["param_offset"],
            e["arg_list"]["notify_param_offset"], e["arg_list"]["wait_param_offset"],
            e["send_event_list"], e["recv_event_list"]) for e in lists[core]]
    assert got == subs, (core, got)
    for e in lists[core]:
        assert ("blockDim" in e) == (line == "8.5") and ("blockNum" in e) == (line == "9.0"), e
        assert ("sub_operator_op_type" in e) == (line == "9.0"), e
        assert "sub_operator_call_dcci_before_kernel_start" in e, e
        assert "sub_operator_call_dcci_after_kernel_end" in e, e
for key in ("blockDim", "taskRation"):
    if key in want:
        assert meta[key] == want[key], (key, meta[key])
assert meta["coreType"] == "MIX" and meta["kernelName"] == "ki_superkernel", meta
PY
}

# The vendor's ST sub-kernels as our stand-ins: is_inf (x, y, workspace) then pows (x1, x2, y,
# workspace), of the given kernel type, blockDims B1 and B2.
st_ops() {
    sk is_inf "$1" "${2:-24}" x,y,workspace "${4:-4}"
    sk pows "$1" "${3:-1}" x1,x2,y,workspace
}

ONE_AIC='{"list": {"aicore": [("is_inf__kernel0", 24, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "blockDim": 24, "taskRation": "1:0"}'
# The entry every single-stream cube-only scenario has: aligned by func-align, the FFTS address
# from slot 0, each sub-kernel's four split copies chosen by core id on the cube cores below its
# blockDim with its first parameter slot, and the kernel-type record of a MIX 1:0 SuperKernel.
AIC=('get_para_base\(\)' 'param_base\[0\]' 'set_ffts_base_addr'
    'if ASCEND_IS_AIC' 'get_block_idx\(\) < 24' 'get_block_idx\(\) < 1'
    'uint8_t coreid = \(uint8_t\)get_coreid\(\);' 'if \(\(coreid % 4\) == 0\)'
    'is_inf__kernel0_middle\(1\);' 'is_inf__kernel0_middle_split3\(1\);'
    'pows__kernel0_middle\(4\);' 'pows__kernel0_middle_split1\(4\);'
    'K_TYPE_MIX_AIC_MAIN\}, \{\{F_TYPE_MIX_TASK_RATION, sizeof\(unsigned int\)\}, 1, 0\}')

# ---- master (9.0 line): one stream, two cube-only sub-kernels --------------------------------

@test "master test_sk_1_stream_2_ops_default_aic_only: early start between the sub-kernels, per-func preload of the next, vendor kernel list" {
    st_ops AIC_ONLY
    ki "compile-options=-g:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}" 'aligned\(512\)' 'AscendC::SetNextTaskStart\(\);' 'WaitPreTaskEndImpl<0>\(\);' \
        'g_super_kernel_early_start_config = 0;' \
        'preload\(\(const void \*\)is_inf__kernel0_middle, 2\);' \
        'preload\(\(const void \*\)pows__kernel0_middle_split3, 2\);'
    list 9.0 "$ONE_AIC"
}

@test "master test_sk_1_stream_2_ops_early_start_0_aic_only: the cube cores' cross-core barrier instead of early start" {
    st_ops AIC_ONLY
    ki "compile-options=-g:early-start=0:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}" '!SetNextTaskStart' '!WaitPreTaskEnd' \
        'ffts_cross_core_sync\(PIPE_FIX, AscendC::GetffstMsg\(0x0, AscendC::SYNC_AIC_FLAG\)\);' \
        'wait_flag_dev\(AscendC::SYNC_AIC_FLAG\);'
    list 9.0 "$ONE_AIC"
}

@test "master test_sk_1_stream_2_ops_func_align_256_aic_only: the entry aligned to 256" {
    st_ops AIC_ONLY
    ki "compile-options=-g:func-align=256:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}" '__global__ __attribute__\(\(aligned\(256\)\)\) __aicore__ void auto_gen_ki_superkernel_kernel\(void\)'
}

@test "master test_sk_1_stream_2_ops_preload_code_max_aic_only: one PreLoad of the whole cache, no per-func preloads" {
    st_ops AIC_ONLY
    ki "compile-options=-g:preload-code=max:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}" 'PreLoad\(8\);' '!preload\(\(const void'
}

@test "master test_sk_1_stream_2_ops_debug_dcci_all_1_aic_only: a pipe barrier and a dcci of the whole cache after each sub-kernel" {
    st_ops AIC_ONLY
    ki "compile-options=-g:debug-dcci-all=1:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}" 'pipe_barrier\(PIPE_ALL\);'
    [ "$(count 'dcci\(\(__gm__ uint64_t\*\)0, cache_line_t::ENTIRE_DATA_CACHE, dcci_dst_t::CACHELINE_OUT\);')" -ge 2 ]
}

@test "master test_sk_1_stream_2_ops_debug_sync_all_1_aic_only: the cube cores synchronised after each sub-kernel" {
    st_ops AIC_ONLY
    ki "compile-options=-g:debug-sync-all=1:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}"
    [ "$(count 'wait_flag_dev\(AscendC::SYNC_AIC_FLAG\);')" -ge 2 ]
}

@test "master test_sk_1_stream_2_ops_feed_sync_all_1_aic_only: the SyncAll area in the workspace slot after the parameters" {
    st_ops AIC_ONLY
    ki "compile-options=-g:feed-sync-all=1:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}" 'GM_ADDR workspace = param_base\[8\];' \
        'AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr = workspace;'
    [ "$(count 'AscendC::g_superKernelAutoSyncAllEnable = false;')" -eq 2 ] # after each sub-kernel
    list 9.0 "$ONE_AIC"
}

@test "master test_sk_1_stream_2_ops_split_mode_1_aic_only: one copy of each sub-kernel, no choice by core id" {
    sk is_inf AIC_ONLY 24 x,y,workspace 1
    sk is_finite AIC_ONLY 24 x,y,workspace 1
    ki "compile-options=-g:split-mode=1:" is_inf@1 is_finite@1
    build 9.0
    has 'is_inf__kernel0_middle\(1\);' 'is_finite__kernel0_middle\(4\);' '!coreid' '!_split1'
    # g_opSystemRunCfg, compiled by the cores of the SuperKernel's kind (9.0's spelling).
    has '#if \(defined\(__DAV_CUBE__\) && __NPU_ARCH__ == 2201\)' '__gm__ struct OpSystemRunCfg g_opSystemRunCfg = \{0\};'
    list 9.0 '{"list": {"aicore": [("is_inf__kernel0", 24, 1, 1, None, None, [], []), ("is_finite__kernel0", 24, 1, 4, None, None, [], [])]}}'
}

@test "master test_sk_1_stream_2_ops_json_split_none_aic_only: a sub-kernel JSON without split_mode gets the scope's split copies, its list entry split_mode null" {
    st_ops AIC_ONLY 24 1 none
    ki "compile-options=-g:split-mode=4:" is_inf@1 pows@1
    build 9.0
    has "${AIC[@]}"
    python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["SuperkernelInfo"]["kernelList"]["aicore"]; assert [e["split_mode"] for e in l] == [None, 4], l' "$SRC/superkernel.json"
}

@test "master test_sk_1_stream_2_ops_profiling_1_aic_only: profiling=1 is refused, naming the vendor's profiling records" {
    st_ops AIC_ONLY
    ki "compile-options=-g:profiling=1:" is_inf@1 pows@1
    refused 9.0 "g/ki.json: SuperKernel 'superkernel' (scope 'superkernel') has profiling=1: CANN's SuperKernel compiler then writes its profiling records (InitProfiling, RecordProfiling" \
        "skforge's generator does not build SuperKernel profiling"
}

@test "master test_sk_1_stream_3_ops_default_aic_only: parameter offsets 1, 4, 8 and a barrier before each later sub-kernel" {
    st_ops AIC_ONLY
    ki "compile-options=-g:" is_inf@1 pows@1 is_inf@1
    build 9.0
    has "${AIC[@]}" 'is_inf__kernel0_middle\(8\);'
    [ "$(count 'SetNextTaskStart\(\);')" -eq 2 ]
    list 9.0 '{"list": {"aicore": [("is_inf__kernel0", 24, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], []), ("is_inf__kernel0", 24, 1, 8, None, None, [], [])]}}'
}

# ---- master: two streams (stream-fusion=1, stream ids 0 and 1, no event between them) -------

# two_stream TYPE: the ST's two-stream input, is_inf on stream 0 then pows on stream 1.
two_stream() {
    st_ops "$1"
    ki "compile-options=-g:stream-fusion=1:$2" is_inf@0 pows@1
}

TWO_AIC='{"list": {"dav-c220-cube": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "taskRation": "1:0"}'

@test "master test_sk_2_stream_2_ops_default_aic_only: a program for the cube cores, a pipe barrier between the sub-kernels, no early start" {
    two_stream AIC_ONLY
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' '!kernel_aiv\(void\)' \
        'auto_gen_ki_superkernel_kernel_aic\(\);' 'pipe_barrier\(PIPE_ALL\);' '!SetNextTaskStart' \
        'is_inf__kernel0_middle\(1\);' 'pows__kernel0_middle\(4\);' 'K_TYPE_MIX_AIC_MAIN'
    list 9.0 "$TWO_AIC"
}

@test "master test_sk_2_stream_2_ops_default_aiv_1_0: a program for the vector cores on vector block indices" {
    two_stream MIX_AIV_1_0
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aiv\(void\)' '!kernel_aic\(void\)' \
        'AscendC::GetBlockIdx\(\) < 24' 'is_inf__kernel0_mix_aiv_middle\(1\);' \
        'pows__kernel0_mix_aiv_middle\(4\);' 'K_TYPE_MIX_AIV_MAIN'
    list 9.0 '{"list": {"dav-c220-vec": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "taskRation": "0:1"}'
}

@test "master test_sk_2_stream_2_ops_default_aic_1_0: MIX 1:0, the cube program only" {
    two_stream MIX_AIC_1_0
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' '!kernel_aiv\(void\)' \
        'is_inf__kernel0_mix_aic_middle\(1\);' 'pows__kernel0_mix_aic_middle\(4\);' \
        'F_TYPE_MIX_TASK_RATION, sizeof\(unsigned int\)\}, 1, 0\}'
    list 9.0 '{"list": {"dav-c220-cube": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "taskRation": "1:0"}'
}

@test "master test_sk_2_stream_2_ops_default_aic_1_1: MIX 1:1, both halves of each sub-kernel in the cube and the vector programs" {
    two_stream MIX_AIC_1_1
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' 'void auto_gen_ki_superkernel_kernel_aiv\(void\)' \
        'is_inf__kernel0_mix_aic_middle\(1\);' 'is_inf__kernel0_mix_aiv_middle\(1\);' \
        'pows__kernel0_mix_aic_middle\(4\);' 'pows__kernel0_mix_aiv_middle\(4\);' \
        'F_TYPE_MIX_TASK_RATION, sizeof\(unsigned int\)\}, 1, 1\}'
    list 9.0 '{"list": {"dav-c220-cube": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])], "dav-c220-vec": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "taskRation": "1:1"}'
}

@test "master test_sk_2_stream_2_ops_default_aic_1_2: MIX 1:2, two vector cores per cube core" {
    two_stream MIX_AIC_1_2
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' 'void auto_gen_ki_superkernel_kernel_aiv\(void\)' \
        'is_inf__kernel0_mix_aiv_middle\(1\);' 'F_TYPE_MIX_TASK_RATION, sizeof\(unsigned int\)\}, 1, 2\}'
    list 9.0 '{"list": {"dav-c220-cube": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])], "dav-c220-vec": [("is_inf__kernel0", 24, 0, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "taskRation": "1:2", "blockDim": 24}'
}

@test "master test_sk_2_stream_2_ops_feed_sync_all_1_aic_only: the SyncAll area in two-stream mode" {
    two_stream AIC_ONLY "feed-sync-all=1:"
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' 'GM_ADDR workspace = param_base\[8\];' \
        'AscendC::g_superKernelAutoSyncAllConfigGmBaseAddr = workspace;'
    [ "$(count 'AscendC::g_superKernelAutoSyncAllEnable = false;')" -eq 2 ]
}

@test "master test_sk_2_stream_2_ops_profiling_1_aic_only: profiling=1 refused in two-stream mode too" {
    two_stream AIC_ONLY "profiling=1:"
    refused 9.0 "g/ki.json: SuperKernel 'superkernel' (scope 'superkernel') has profiling=1: CANN's SuperKernel compiler then writes its profiling records"
}

@test "master test_sk_2_stream_2_ops_debug_sync_all_1_aic_only: a pipe barrier and the cube cores' flag after each sub-kernel" {
    two_stream AIC_ONLY "debug-sync-all=1:"
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' 'pipe_barrier\(PIPE_ALL\);'
    [ "$(count 'wait_flag_dev\(AscendC::SYNC_AIC_FLAG\);')" -ge 2 ]
}

@test "master test_sk_2_stream_2_ops_debug_sync_all_1_aiv_only: the vector cores' flag after each sub-kernel" {
    two_stream AIV_ONLY "debug-sync-all=1:"
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aiv\(void\)' '!kernel_aic\(void\)'
    [ "$(count 'wait_flag_dev\(AscendC::SYNC_AIV_ONLY_ALL\);')" -ge 2 ]
}

@test "master test_sk_2_stream_2_ops_preload_code_max_aic_only: PreLoad of the whole cache in two-stream mode" {
    two_stream AIC_ONLY "preload-code=max:"
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' 'PreLoad\(8\);' '!preload\(\(const void'
}

# The vendor's send/recv scenarios send and receive events whose other end is a task outside
# the SuperKernel (event 100 sent by is_inf, 101 received by pows). skforge needs both ends of
# an event in op_list and refuses, saying so (kept: nobody would fill the slot, see
# cann-conformance.md); given both ends, the notify and wait slots follow the sub-kernel's
# parameters as the vendor's do.

@test "master test_sk_2_stream_2_ops_default_send_recv_aic_only: events with the outside refused; paired, the notify slot 4 and wait slot 9" {
    st_ops AIC_ONLY
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=100 pows@1@recv=101
    refused 9.0 "receives event 101 that no operator sends" "event 100 sent by 'op0' is never received" \
        "CANN's SuperKernel compiler takes an event whose other end is not in op_list as a notify/wait with a task outside the SuperKernel"
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=100 pows@1@recv=100
    build 9.0
    list 9.0 '{"list": {"dav-c220-cube": [("is_inf__kernel0", 24, 0, 1, 4, None, [100], []), ("pows__kernel0", 1, 1, 5, None, 9, [], [100])]}}'
    has 'pows__kernel0_middle\(5\);'
}

@test "master test_sk_2_stream_2_ops_default_send_recv_aiv_only: the same on the vector cores" {
    st_ops AIV_ONLY
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=100 pows@1@recv=101
    refused 9.0 "notify/wait with a task outside the SuperKernel"
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=100 pows@1@recv=100
    build 9.0
    list 9.0 '{"list": {"dav-c220-vec": [("is_inf__kernel0", 24, 0, 1, 4, None, [100], []), ("pows__kernel0", 1, 1, 5, None, 9, [], [100])]}}'
}

@test "master test_sk_2_stream_2_ops_default_recv_aic_only: a wait for a task outside refused" {
    st_ops AIC_ONLY
    ki "compile-options=-g:stream-fusion=1:" is_inf@0 pows@1@recv=101
    refused 9.0 "operator 'op1' receives event 101 that no operator sends" "notify/wait with a task outside the SuperKernel"
}

@test "master test_sk_2_stream_2_ops_default_send_aic_only: a notify of a task outside refused" {
    st_ops AIC_ONLY
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=100 pows@1
    refused 9.0 "event 100 sent by 'op0' is never received" "notify/wait with a task outside the SuperKernel"
}

# The dynamic scenarios: the first sub-kernel is `task_type: dynamic` (and compiled with
# debugOptions printf), the options have profiling=1. skforge leaves a dynamic sub-kernel out of
# the SuperKernel, naming the vendor's task type, and refuses the printf sub-kernel and
# profiling, naming them.
dynamic_case() {
    EXTRA='{"debugOptions": "printf", "debugBufSize": 78643200}' sk is_inf "$1" 24 x,y,workspace
    sk is_finite "$1" 24 x,y,workspace
    ki "compile-options=-g:stream-fusion=1:profiling=1:$2" is_inf@0@send=$3@dynamic is_finite@1@recv=$3
    run "$SKC" plan g/ki.json
    [ "$status" -eq 0 ]
    [[ "$output" == *"op0  is_inf  DYNAMIC_TASK_UNSUPPORT  dynamic task (task_type dynamic: skforge does not build CANN's dynamic sub-kernels)"* ]]
    refused 9.0 "has profiling=1"
    ki "compile-options=-g:stream-fusion=1:$2" is_inf@0@send=$3 is_finite@1@recv=$3
    refused 9.0 "g/ki.json: 'op0' (kernel is_inf__kernel0) of SuperKernel 'superkernel' was compiled with debugOptions 'printf' (debugBufSize 78643200): CANN's SuperKernel compiler builds it with the dump buffer (kernel-list debug_option/debug_size, -DASCENDC_DUMP)"
}

@test "master test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only: dynamic task left out, printf sub-kernel and profiling refused" {
    dynamic_case AIC_ONLY "" 100
}

@test "master test_sk_2_stream_2_ops_dynamic_send_recv_default_aiv_only: the same on the vector cores" {
    dynamic_case AIV_ONLY "" 100
}

@test "master test_sk_2_stream_2_ops_dynamic_send_recv_with_synal_all_1_aic_only: the same with feed-sync-all=1" {
    dynamic_case AIC_ONLY "feed-sync-all=1:" 100
}

@test "master test_sk_2_stream_2_ops_dynamic_send_recv_intersect_aic_only: the same with two events both ways listed" {
    dynamic_case AIC_ONLY "" 100,101
}

# The crossed scenarios: four sub-kernels alternating streams 0 and 1, the second waiting for
# the third (each kind of core runs its own sub-kernels in op_list order; the vendor joins each
# event's ends by a cross-core flag and drops the crossed one the other implies). The flag of a
# direction counts, so a second wait for A's event would pass on C's set: one set, one wait.
# crossed_case SENDER RECEIVER E1 E2: is_inf (SENDER kind, stream 0) sends E1 then E2, pows
# (RECEIVER kind, stream 1) receives E2 then E1.
crossed_case() {
    sk is_inf "$1" 24 x,y,workspace
    sk pows "$2" 1 x1,x2,y,workspace
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=$3 pows@1@recv=$4 is_inf@0@send=$4 pows@1@recv=$3
    build 9.0
    has 'void auto_gen_ki_superkernel_kernel_aic\(void\)' 'void auto_gen_ki_superkernel_kernel_aiv\(void\)' \
        '!NotifyFunc<(true|false)>\(' '!WaitFunc<(true|false)>\('
    python3 - "$SRC/superkernel.cpp" "$(echo "$1" | tr A-Z a-z | cut -c1-3)" <<'PY'
import sys
src, send = open(sys.argv[1]).read(), sys.argv[2]
recv = "aiv" if send == "aic" else "aic"
def body(side):
    start = src.index("void auto_gen_ki_superkernel_kernel_%s(void)" % side)
    return src[start:src.index("void auto_gen_ki_superkernel_kernel", start + 10)]
flag = "SYNC_AIC_AIV_FLAG" if send == "aic" else "SYNC_AIV_FLAG"
s, r = body(send), body(recv)
setf, wait = "GetffstMsg(0x02, AscendC::%s)" % flag, "wait_flag_dev(AscendC::%s);" % flag
assert s.count(setf) == 1 and r.count(wait) == 1, (s.count(setf), r.count(wait))
# A, C, then the set for B; the wait, B, then D.
assert s.index("is_inf__kernel0_middle(1);") < s.index("is_inf__kernel0_middle(10);") < s.index(setf)
assert r.index(wait) < r.index("pows__kernel0_middle(5);") < r.index("pows__kernel0_middle(14);")
PY
    # A receive before its send that closes a cycle is a deadlock; without stream fusion the one
    # program would run the receiver first: both refused, naming what.
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=$3 pows@1@recv=$3,$4@send=7 is_inf@0@recv=7@send=$4
    refused 9.0 "SuperKernel superkernel would deadlock"
    ki "compile-options=-g:stream-fusion=0:" is_inf@0@send=$3 pows@1@recv=$3,$4@send=7 is_inf@0@recv=7@send=$4
    refused 9.0 "'op1' of SuperKernel 'superkernel' receives event $4 from 'op2', listed after it" "it would wait for a sub-kernel that has not run"
    # Within one stream the vendor refuses any event.
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@recv=$4 pows@1 is_inf@0@send=$4
    refused 9.0 "operator 'op0' receives event $4 before any operator sends it" "self send/receive pair within 1 real stream"
}

@test "master test_sk_2_stream_4_ops_remove_crossed_cub_to_vec: the crossed flag dropped, one set and one wait" {
    crossed_case AIC_ONLY AIV_ONLY 100 101
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=100 pows@1@recv=101 is_inf@0@send=101 pows@1@recv=100
    build 9.0
    list 9.0 '{"list": {"dav-c220-cube": [("is_inf__kernel0", 24, 0, 1, 4, None, [100], []), ("is_inf__kernel0", 24, 0, 10, 13, None, [101], [])], "dav-c220-vec": [("pows__kernel0", 1, 1, 5, None, 9, [], [101]), ("pows__kernel0", 1, 1, 14, None, 18, [], [100])]}}'
}

@test "master test_sk_2_stream_4_ops_remove_crossed_vec_to_cub: the same from the vector to the cube cores" {
    crossed_case AIV_ONLY AIC_ONLY 200 201
    ki "compile-options=-g:stream-fusion=1:" is_inf@0@send=200 pows@1@recv=201 is_inf@0@send=201 pows@1@recv=200
    build 9.0
    list 9.0 '{"list": {"dav-c220-cube": [("pows__kernel0", 1, 1, 5, None, 9, [], [201]), ("pows__kernel0", 1, 1, 14, None, 18, [], [200])], "dav-c220-vec": [("is_inf__kernel0", 24, 0, 1, 4, None, [200], []), ("is_inf__kernel0", 24, 0, 10, 13, None, [201], [])]}}'
}

# ---- 8.5.0-beta.1 (8.5 line): one stream, two vector-only sub-kernels -----------------------

ONE_AIV='{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}, "blockDim": 32, "taskRation": "0:1"}'
AIV=('param_base\[0\]' 'set_ffts_base_addr' 'if ASCEND_IS_AIV' 'AscendC::GetBlockIdx\(\) < 32'
    'AscendC::GetBlockIdx\(\) < 1' 'is_inf__kernel0_middle\(1\);' 'is_inf__kernel0_middle_split3\(1\);'
    'pows__kernel0_middle\(4\);' 'K_TYPE_MIX_AIV_MAIN')

st85() {
    st_ops AIV_ONLY 32 1
    ki "compile-options=-g:$1" is_inf@1 pows@1 ${2:+is_inf@1}
    build 8.5
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_default: early start, preload, the 8.5 kernel list (blockDim)" {
    st85 ""
    has "${AIV[@]}" 'aligned\(512\)' 'SetNextTaskStart\(\);' 'WaitPreTaskEndImpl' \
        'preload\(\(const void \*\)pows__kernel0_middle, 2\);'
    list 8.5 "$ONE_AIV"
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_early_start_0: the vector cores' barrier" {
    st85 "early-start=0:"
    has "${AIV[@]}" '!SetNextTaskStart' 'SYNC_AIV_ONLY_ALL'
    list 8.5 "$ONE_AIV"
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_func_align_256: aligned to 256" {
    st85 "func-align=256:"
    has "${AIV[@]}" 'aligned\(256\)'
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_preload_code_max: PreLoad of the whole cache" {
    st85 "preload-code=max:"
    has "${AIV[@]}" 'PreLoad\(' '!preload\(\(const void'
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_debug_dcci_all_1: a dcci of the whole cache after each sub-kernel" {
    st85 "debug-dcci-all=1:"
    has "${AIV[@]}"
    [ "$(count 'ENTIRE_DATA_CACHE')" -ge 2 ]
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_debug_sync_all_1: the vector cores synchronised after each sub-kernel" {
    st85 "debug-sync-all=1:"
    [ "$(count 'wait_flag_dev\(AscendC::SYNC_AIV_ONLY_ALL\);')" -ge 2 ]
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_feed_sync_all_1: the SyncAll area after the parameters" {
    st85 "feed-sync-all=1:"
    has "${AIV[@]}" 'param_base\[8\]' 'g_superKernelAutoSyncAllConfigGmBaseAddr'
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_split_mode_1: one copy of each sub-kernel" {
    sk is_inf AIV_ONLY 32 x,y,workspace 1
    sk is_finite AIV_ONLY 32 x,y,workspace 1
    ki "compile-options=-g:split-mode=1:" is_inf@1 is_finite@1
    build 8.5
    has 'is_inf__kernel0_middle\(1\);' 'is_finite__kernel0_middle\(4\);' '!coreid' '!_split1'
    # asc-devkit eeb99217 gen_system_run_cfg spells the core by the chip's macro.
    has '#if defined\(__DAV_C220_VEC__\)' '!__NPU_ARCH__ == 2201' 'g_opSystemRunCfg = \{0\};'
    list 8.5 '{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("is_finite__kernel0", 32, 1, 4, None, None, [], [])]}}'
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_stream_fusion_1: one stream under stream fusion, the kernel list keyed by core" {
    st85 "stream-fusion=1:"
    has "${AIV[@]}" '!kernel_aiv\(void\)'
    list 8.5 '{"list": {"dav-c220-vec": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], [])]}}'
}

@test "8.5.0-beta.1 test_sk_1_stream_2_ops_strict_scope_check: the default entry (the check is the graph engine's)" {
    sk is_inf AIV_ONLY 32 x,y,workspace
    sk is_finite AIV_ONLY 32 x,y,workspace
    ki "compile-options=-g:strict-scope-check=abort:" is_inf@1 is_finite@1
    build 8.5
    has 'is_inf__kernel0_middle\(1\);' 'is_finite__kernel0_middle\(4\);' 'SetNextTaskStart'
    list 8.5 '{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("is_finite__kernel0", 32, 1, 4, None, None, [], [])]}}'
}

@test "8.5.0-beta.1 test_sk_1_stream_3_ops_default: parameter offsets 1, 4, 8" {
    st85 "" 3
    has "${AIV[@]}" 'is_inf__kernel0_middle\(8\);'
    list 8.5 '{"list": {"aicore": [("is_inf__kernel0", 32, 1, 1, None, None, [], []), ("pows__kernel0", 1, 1, 4, None, None, [], []), ("is_inf__kernel0", 32, 1, 8, None, None, [], [])]}}'
}

#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# libskforge_runtime on npu:0 with the stand-in libascendcl.so (test/runtime/ascendcl_standin.cpp,
# SKFORGE_ASCENDCL_STANDIN): every example compiled for dav-2201 with the stand-in toolchain
# (helpers.bash fake_bisheng; each kernel binary names its functions, each kernel JSON carries
# runInfo tiling data), installed, opened on npu:0, run fused, op by op and SuperKernel by
# SuperKernel; test/python/npu_standin.py compares every launch with the JSONs the package ships.
bats_require_minimum_version 1.5.0
load helpers

EXAMPLES="moe_block tbe_cut two_stream decoder"

# npu_examples DIR [notiling]: copies of the examples that compile for dav-2201: every kernel
# gets a binary (its functions' names, as an ELF string table has them, then random bytes) as
# bin_path and, unless notiling, runInfo with tiling data, a schedule mode and a local memory
# size in its JSON; the decoder's AICPU tiling kernel becomes an AICPU kernel (its magic
# RT_DEV_BINARY_MAGIC_ELF_AICPU, no runInfo), or with notiling an AI-core one like the others.
npu_examples() {
    cp -r "$SKFORGE_SOURCE_DIR/share/skforge/examples" "$1"
    python3 - "$1" "${2:-}" <<'EOF'
import glob, json, os, random, re, sys
root, notiling = sys.argv[1], sys.argv[2] == "notiling"
rng = random.Random(7)
for path in glob.glob(os.path.join(root, "*", "kernels", "*.json")) + \
        glob.glob(os.path.join(root, "host_kernels", "*.json")):
    with open(path) as f:
        k = json.load(f)
    name = k["kernelName"]
    kind = k.get("sub_operator_kernel_type", "")
    aicpu = os.path.basename(path) == "attention_tiling.json" and not notiling
    if k["magic"] == "RT_DEV_BINARY_MAGIC_SKFORGE_HOST":  # the decoder's kernels are the host's
        k["magic"] = {"KERNEL_TYPE_AIV_ONLY": "RT_DEV_BINARY_MAGIC_ELF_AIVEC",
                      "KERNEL_TYPE_AIC_ONLY": "RT_DEV_BINARY_MAGIC_ELF_AICUBE"}.get(
                          kind, "RT_DEV_BINARY_MAGIC_ELF")
    if aicpu:
        k["magic"] = "RT_DEV_BINARY_MAGIC_ELF_AICPU"
    names = [name]
    if kind.startswith("KERNEL_TYPE_MIX") and not aicpu:
        names = [name + "_mix_aic", name + "_mix_aiv"]
    with open(path[:-5] + ".o", "wb") as f:
        f.write(b"".join(n.encode() + b"\0" for n in names) + rng.randbytes(512))
    if not notiling and not aicpu:
        k["runInfo"] = {"aicpu_block_dim": 0, "block_dim": k["blockDim"],
                        "local_memory_size": rng.randrange(0, 4) * 1024,
                        "schedule_mode": rng.randrange(0, 2), "tiling_cond": 0, "clear_atomic": 0,
                        "tiling_key": 1, "tiling_data": rng.randbytes(24).hex()}
    with open(path, "w") as f:
        json.dump(k, f, indent=1)
for graph in glob.glob(os.path.join(root, "*", "graph.yaml")):
    with open(graph) as f:
        text = f.read()
    text = re.sub(r"json_path: ([^,}]*)\.json", r"json_path: \1.json, bin_path: \1.o", text)
    text = text.replace("npu_arch: host", "npu_arch: dav-2201")
    with open(graph, "w") as f:
        f.write(text)
EOF
}

setup_file() {
    : "${SKFORGE_RUNTIME_LIB:?SKFORGE_RUNTIME_LIB must point to libskforge_runtime.so}"
    : "${SKFORGE_ASCENDCL_STANDIN:?SKFORGE_ASCENDCL_STANDIN must point to the stand-in libascendcl.so}"
    cd "$BATS_FILE_TMPDIR"
    export ROOT="$BATS_FILE_TMPDIR/root" SOURCE_DATE_EPOCH=1700000000 SKFORGE_NO_SKINSTALL=1
    mkdir -p "$ROOT"
    fake_bisheng
    export PATH="$BATS_FILE_TMPDIR/fakebin:$PATH" FAKE_BISHENG_SYMBOLS=1
    npu_examples ex
    npu_examples ex_notiling notiling
    for g in $EXAMPLES; do
        "$SKC" compile "ex/$g/graph.yaml" --npu-arch dav-2201 -o out --name "$g" -q --sk-backend skforge >/dev/null
        "$SKINSTALL" install "out/$g.run" --install-path "$ROOT" --quiet
    done
    # two_stream with fusion off: its four operators launched alone, on two streams.
    mkdir ex/two_stream_apart
    sed 's/^soc_version: .*/&\nsuper_kernel_optimize: false/; s/^name: two_stream/name: two_stream_apart/' \
        ex/two_stream/graph.yaml >ex/two_stream_apart/graph.yaml
    cp -r ex/two_stream/kernels ex/two_stream_apart/
    "$SKC" compile ex/two_stream_apart/graph.yaml --npu-arch dav-2201 -o out --name two_stream_apart -q >/dev/null
    "$SKINSTALL" install out/two_stream_apart.run --install-path "$ROOT" --quiet
    "$SKC" compile ex_notiling/moe_block/graph.yaml --npu-arch dav-2201 -o out --name moe_notiling \
        -q --sk-backend skforge >/dev/null
    "$SKINSTALL" install out/moe_notiling.run --install-path "$ROOT" --quiet
    # moe_block whose fused kernels name their parameters (sub_operator_params) as the op
    # compiler does; and once with a name out of place.
    for v in moe_params moe_badparams; do
        cp -r ex/moe_block "ex/$v"
        sed -i "s/^name: moe_block/name: $v/" "ex/$v/graph.yaml"
        python3 - "ex/$v" "$v" <<'EOF'
import json, sys, yaml
d, variant = sys.argv[1], sys.argv[2]
g = yaml.safe_load(open(d + "/graph.yaml"))
for op in g["ops"]:
    if "scope" not in op:
        continue
    path = d + "/" + op["kernel"]["json_path"]
    k = json.load(open(path))
    names = ["x%d_in__" % i for i in range(len(op["inputs"]))] + \
        ["y%d_out_" % i for i in range(len(op["outputs"]))] + ["workspace"]
    if variant == "moe_badparams" and op["name"] == "dequant_swiglu_quant":
        names[0], names[2] = names[2], names[0]  # an output's name first
    k["sub_operator_params"] = names
    json.dump(k, open(path, "w"), indent=1)
EOF
        "$SKC" compile "ex/$v/graph.yaml" --npu-arch dav-2201 -o out --name "$v" -q --sk-backend skforge >/dev/null
        "$SKINSTALL" install "out/$v.run" --install-path "$ROOT" --quiet
    done
    # Events between a SuperKernel and ordinary operators outside it on another stream: head
    # (stream 2) tells the first sub-kernel, the last one tells tail (stream 2).
    mkdir ex/outside_events
    cp -r ex/two_stream/kernels ex/outside_events/
    cat >ex/outside_events/graph.yaml <<'EOF'
name: outside_events
npu_arch: dav-2201
soc_version: Ascend910B1
inputs:
  - {name: x, shape: [16, 256], dtype: float16}
  - {name: w, shape: [256, 256], dtype: float16}
scopes:
  sk: "stream-fusion=1"
ops:
  - {name: head, type: Add, stream_id: 2, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o},
     inputs: [x, x], outputs: [{name: t0, shape: [16, 256], dtype: float16}], send_event_list: [5]}
  - {name: a, type: MatMul, stream_id: 0, kernel: {json_path: kernels/matmul.json, bin_path: kernels/matmul.o},
     inputs: [x, w], outputs: [{name: h, shape: [16, 256], dtype: float16}], recv_event_list: [5], scope: sk}
  - {name: b, type: Add, stream_id: 0, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o},
     inputs: [h, t0], outputs: [{name: h2, shape: [16, 256], dtype: float16}], send_event_list: [6], scope: sk}
  - {name: tail, type: Add, stream_id: 2, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o},
     inputs: [h2, x], outputs: [{name: y, shape: [16, 256], dtype: float16}], recv_event_list: [6]}
EOF
    "$SKC" compile ex/outside_events/graph.yaml -o out --name outside_events -q >/dev/null
    "$SKINSTALL" install out/outside_events.run --install-path "$ROOT" --quiet
    # The decoder whose AICPU tiling kernel is an AI-core binary.
    "$SKC" compile ex_notiling/decoder/graph.yaml --npu-arch dav-2201 -o out --name decoder_notiling \
        -q --sk-backend skforge >/dev/null
    "$SKINSTALL" install out/decoder_notiling.run --install-path "$ROOT" --quiet
}

# standin_python ARGS...: python3 with the module from the source tree, the built library and
# the stand-in (under ASan: its runtime preloaded, leaks not checked: they would be Python's).
standin_python() {
    local preload=
    if readelf -d "$SKFORGE_RUNTIME_LIB" | grep -q 'libasan'; then
        preload=$(cc -print-file-name=libasan.so):$(cc -print-file-name=libstdc++.so)
    fi
    PYTHONPATH="$SKFORGE_SOURCE_DIR/python" SKFORGE_RUNTIME_LIBRARY="$SKFORGE_RUNTIME_LIB" \
        SKFORGE_ASCENDCL="$SKFORGE_ASCENDCL_STANDIN" LD_PRELOAD="$preload" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" python3 "$@"
}

# crafted_npu EDIT: two_stream's installed package with its npu/program.json changed by the
# Python statement EDIT (on `p`, the program), packed again and installed under a root of its
# own: its manifest is right, so skinstall installs it and skf_open checks it like any package.
# Prints that root.
crafted_npu() {
    local dir="$BATS_TEST_TMPDIR/crafted" root="$BATS_TEST_TMPDIR/croot"
    rm -rf "$dir" "$root" "$BATS_TEST_TMPDIR/crafted.run"
    mkdir -p "$root"
    cp -r "$ROOT/opp/static_kernel/ai_core/two_stream" "$dir"
    rm -f "$dir/install.sh" "$dir/uninstall.sh" "$dir/manifest.json" "$dir/version.info" \
        "$dir/.skforge-installed.json"
    python3 - "$dir/npu/program.json" "$1" <<'EOF'
import json, sys
path, edit = sys.argv[1], sys.argv[2]
p = json.load(open(path))
exec(edit)
json.dump(p, open(path, "w"))
EOF
    "$SKC" pack "$dir" -o "$BATS_TEST_TMPDIR/crafted.run" --package-version 1 --name two_stream \
        --npu-arch dav-2201 -q >/dev/null
    "$SKINSTALL" install "$BATS_TEST_TMPDIR/crafted.run" --install-path "$root" --quiet
    echo "$root"
}

@test "runtime_npu: a crafted program is refused at open, naming the field: slots out of range, a step that launches a SuperKernel's operator, 9 dims, a name twice" {
    # Each opened before and then wrote before its slot vector, past it, or launched through an
    # empty kernel; or read past skf_tensor_info's 8 dims; or bound the first of two names.
    local cases=(
        'p["segments"][0]["args"].append({"slot": 2**64 - 1, "tensor": 0})'
        'segments[0].args[18].slot: 18446744073709551615 is not an integer from 0 to 65535'
        'p["segments"][0]["args"].append({"slot": 2**63, "count": 2**63, "sub_operator_params": [], "op": "x", "reason": "r"})'
        'segments[0].args[18].slot: 9223372036854775808 is not an integer from 0 to 65535'
        'p["segments"][0]["args"].append({"slot": 3, "count": 2**64 - 3, "sub_operator_params": [], "op": "x", "reason": "r"})'
        'segments[0].args[18].count: 18446744073709551613 is not an integer from 0 to 65533'
        'p["ops"][0]["kernel"] = None; p["steps"].append({"op": 0})'
        "steps[1].op: operator 'rope' is part of SuperKernel sk_dual, which launches it; a step cannot launch it alone"
        'p["tensors"][0]["shape"] = [1] * 9'
        "tensors[0].shape: 9 dimensions; a tensor has at most 8 (the kernel ABI's and skf_tensor_info's)"
        'p["tensors"][1]["name"] = p["tensors"][0]["name"]'
        "tensors[1]: tensor 'x' is named twice (also tensors[0]); a caller binds tensors by name"
        'p["segments"][0]["args"][1]["tensor"] = -1'
        "segments[0].args[1].tensor: -1 is out of range (7 tensors)"
        'p["segments"][0]["workspace_bytes"] = 2**64 - 1'
        "segments[0].workspace_bytes: 18446744073709551615 bytes, more than memory can hold"
    )
    local i root
    for ((i = 0; i < ${#cases[@]}; i += 2)); do
        root=$(crafted_npu "${cases[i]}")
        run standin_python - "$root" <<'EOF'
import sys
import skforge.runtime as skr
try:
    skr.open(sys.argv[1], "two_stream", device="npu:0")
    print("opened")
except skr.Error as e:
    print(e.code, e)
EOF
        echo "${cases[i]}: $output"
        [ "$status" -eq 0 ]
        [[ "$output" == "-4 "*"/two_stream/npu/program.json: ${cases[i + 1]}" ]]
    done
}

@test "runtime_npu: every example's launches on npu:0 match its SuperKernel JSONs; op by op one launch per operator" {
    run standin_python "$SKFORGE_SOURCE_DIR/test/python/npu_standin.py" "$ROOT" \
        "$SKFORGE_ASCENDCL_STANDIN" moe_block tbe_cut two_stream decoder two_stream_apart
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"moe_block: npu:0; fused 5 launches match 2 SuperKernel JSONs and 3 kernels; op by op 8 launches match 8 kernel JSONs; 2 SuperKernels alone match their JSONs"* ]]
    grep -q "^tbe_cut: npu:0; fused [0-9]* launches match .*; op by op [0-9]* launches match" <<<"$output"
    grep -q "^two_stream: npu:0; fused [0-9]* launches match .*; op by op [0-9]* launches match" <<<"$output"
    # Fusion off, two streams: the add waits on stream 0 for the rope's event on stream 1.
    [[ "$output" == *"two_stream_apart: npu:0; fused 4 launches match 0 SuperKernel JSONs and 4 kernels; op by op 4 launches"* ]]
    # The decoder fused and op by op: its AICPU tiling kernel launched on the AICPU, its
    # prefetches as CMO tasks, ordered with the SuperKernels by their locks.
    grep -q "^decoder: npu:0; fused 12 launches match 12 SuperKernel JSONs and 0 kernels, 1 AICPU tiling launches and 3 prefetches beside; op by op [0-9]* launches match [0-9]* kernel JSONs, 1 AICPU tiling launches and 3 prefetches beside; 12 SuperKernels alone match" <<<"$output"
}

@test "runtime_npu: events with ordinary operators outside a SuperKernel are ordered by the launches; the first sub-kernel's wait lock holds 1" {
    run standin_python "$SKFORGE_SOURCE_DIR/test/python/npu_standin.py" "$ROOT" \
        "$SKFORGE_ASCENDCL_STANDIN" outside_events
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"outside_events: npu:0; fused 3 launches match 1 SuperKernel JSONs and 2 kernels"* ]]
    run standin_python - "$ROOT" "$SKFORGE_ASCENDCL_STANDIN" <<'EOF'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["SKFORGE_SOURCE_DIR"], "test", "python"))
import npu_standin
import skforge.runtime as skr
root, lib = sys.argv[1], sys.argv[2]
st = npu_standin.Standin(lib)
base = os.path.join(root, "opp", "static_kernel", "ai_core", "outside_events")
program = json.load(open(os.path.join(base, "npu", "program.json")))
slot = {a["lock"]: a for a in program["segments"][0]["args"] if "lock" in a}
assert slot[5]["role"] == "wait" and slot[5]["peer"] == "launch", slot
assert slot[6]["role"] == "notify" and slot[6]["peer"] == "launch", slot
pkg = skr.open(root, "outside_events", device="npu:0")
for t in pkg.tensors:
    pkg.bind(t.name, st.malloc(t.nbytes))
st.reset()
pkg.run()
log = st.log()
calls = [c for c in log["calls"] if c["fn"] != "aclrtKernelArgsInit"]
runs = [i for i, c in enumerate(calls) if c["fn"] == "aclrtLaunchKernelWithConfig"]
assert [calls[i]["function"] for i in runs][1] == "outside_events_sk" and len(runs) == 3, runs
head, sk, tail = runs
sk_launch = log["launches"][1]
# The first sub-kernel's wait on head: its lock holds 1 before the launch, and the launch
# waits on the stream for head's event (the lock alone would not order them).
ones = [c for c in calls[:sk] if c["fn"] == "aclrtMemcpy" and c.get("value") == 1]
assert [c["to"]["allocation"] for c in ones] == [sk_launch["where"][slot[5]["slot"]]["allocation"]], (ones, sk_launch["where"])
assert ones[0]["to"]["offset"] == sk_launch["where"][slot[5]["slot"]]["offset"]
def ordered(a, b):
    rec = [c for c in calls[a + 1:b] if c["fn"] == "aclrtRecordEvent" and c["stream"] == calls[a]["stream"]]
    waits = [c for c in calls[a + 1:b] if c["fn"] == "aclrtStreamWaitEvent" and c["stream"] == calls[b]["stream"]]
    return calls[a]["stream"] != calls[b]["stream"] and any(w["event"] == r["event"] for r in rec for w in waits)
assert ordered(head, sk), "the SuperKernel's stream does not wait for head"
assert ordered(sk, tail), "tail's stream does not wait for the SuperKernel"
# The last sub-kernel's notify: a lock of its own, not preset.
assert sk_launch["where"][slot[6]["slot"]] != sk_launch["where"][slot[5]["slot"]]
assert not any(c["fn"] == "aclrtMemcpy" and c.get("to") == sk_launch["where"][slot[6]["slot"]] for c in calls)
pkg.close()
print("outside events ordered by the launches")
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = "outside events ordered by the launches" ]
}

@test "runtime_npu: an AICPU tiling operator whose kernel is an AI-core binary is refused, naming it" {
    run standin_python "$SKFORGE_SOURCE_DIR/test/python/npu_standin.py" "$ROOT" \
        "$SKFORGE_ASCENDCL_STANDIN" decoder_notiling
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"skf_run refused: skf_run: operator 'attn_tiling_0' (aicpu_tiling) cannot be launched on an NPU: its kernel ascend910b/AttentionTiling/attention_tiling.json has magic 'RT_DEV_BINARY_MAGIC_ELF_AIVEC', an AI-core binary's"*"skf_run_segment launches each SuperKernel"* ]]
    [[ "$output" == *"12 SuperKernels alone match their JSONs"* ]]
}

@test "runtime_npu: sub-kernels that name their parameters as the op compiler does run; a name out of place is refused" {
    run standin_python "$SKFORGE_SOURCE_DIR/test/python/npu_standin.py" "$ROOT" \
        "$SKFORGE_ASCENDCL_STANDIN" moe_params moe_badparams
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"moe_params: npu:0; fused 5 launches match 2 SuperKernel JSONs and 3 kernels; op by op 8 launches match 8 kernel JSONs; 2 SuperKernels alone match"* ]]
    [[ "$output" == *"moe_badparams: npu:0; skf_run refused: skf_run: SuperKernel sk2 cannot be launched: its sub-kernel dequant_swiglu_quant names its parameters (sub_operator_params) in a way this runtime cannot map to its tensors: its JSON names 5 parameters (y0_out_, x1_in__, x0_in__, y1_out_, workspace): 'y0_out_' is not its input 0 (gate_up)"* ]]
    [[ "$output" == *"skf_run_segment sk2 refused: "* ]]
}

@test "runtime_npu: without tiling data skf_run refuses naming the kernel and skf_run_segment still launches" {
    run standin_python "$SKFORGE_SOURCE_DIR/test/python/npu_standin.py" "$ROOT" \
        "$SKFORGE_ASCENDCL_STANDIN" moe_notiling
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"skf_run refused: skf_run: operator 'reshape' cannot be launched alone: its kernel "*"/moe_notiling/ascend910b/Reshape/reshape.json has no tiling data (runInfo.tiling_data"*"skf_run_segment launches the package's SuperKernels without it"* ]]
    [[ "$output" == *"skf_run_unfused refused: "* ]]
    [[ "$output" == *"2 SuperKernels alone match their JSONs"* ]]
}

@test "runtime_npu: the C client opens npu:0 with the stand-in; without libascendcl.so the error names set_env.sh" {
    LIBDIR=$(dirname "$SKFORGE_RUNTIME_LIB")
    cat >npu.c <<'EOF'
#include <skforge/runtime.h>
#include <stdio.h>
int main(int argc, char** argv) {
    skf_package* pkg;
    (void)argc;
    if (skf_open(argv[1], argv[2], "npu:0", &pkg) != SKF_OK) {
        printf("%s\n", skf_last_error());
        return 1;
    }
    printf("%s %s, %zu SuperKernels\n", skf_graph_name(pkg), skf_device(pkg),
           skf_segment_count(pkg));
    skf_close(pkg);
    return 0;
}
EOF
    cc -std=c99 -Wall -Werror -fsanitize=address,undefined -I"$SKFORGE_SOURCE_DIR/include" npu.c \
        -L"$LIBDIR" -lskforge_runtime -Wl,-rpath,"$LIBDIR" -o npu
    SKFORGE_ASCENDCL="$SKFORGE_ASCENDCL_STANDIN" run ./npu "$ROOT" moe_block
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "moe_block npu:0, 2 SuperKernels" ]
    SKFORGE_ASCENDCL=libascendcl_nowhere.so run ./npu "$ROOT" moe_block
    [ "$status" -eq 1 ]
    [[ "$output" == *"npu:0: cannot load CANN's runtime libascendcl_nowhere.so"*"source its set_env.sh"* ]]
}

@test "runtime_npu: skrun --device npu:0 --compare-unfused runs moe_block and the decoder end to end in device memory" {
    for g in moe_block decoder; do
        SKFORGE_ASCENDCL="$SKFORGE_ASCENDCL_STANDIN" run "$SKRUN" "$g" --install-path "$ROOT" \
            --device npu:0 --compare-unfused --iterations 2 --json
        echo "$output"
        [ "$status" -eq 0 ]
        python3 -c '
import json, sys
g, r = sys.argv[1], json.loads(sys.argv[2])
assert r["device"] == "npu:0" and r["identical"] and r["compared"] > 0, r
want = {"moe_block": (5, 8), "decoder": (12, 0)}[g]
assert r["fused"]["launches"] == want[0], r
assert want[1] == 0 or r["unfused"]["launches"] == want[1], r
' "$g" "$output"
    done
    # a run the runtime refuses stops skrun with its message
    SKFORGE_ASCENDCL="$SKFORGE_ASCENDCL_STANDIN" run "$SKRUN" moe_notiling --install-path "$ROOT" --device npu:0
    [ "$status" -eq 1 ]
    [[ "$output" == *"skf_run: operator 'reshape' cannot be launched alone"* ]]
}

@test "runtime_npu: device memory of the handle on npu:0: zeroed, copied both ways, freed once, the rest by close" {
    run standin_python - "$ROOT" "$SKFORGE_ASCENDCL_STANDIN" <<'EOF'
import ctypes, json, sys
import skforge.runtime as skr
standin = ctypes.CDLL(sys.argv[2])
standin.skf_standin_log.restype = ctypes.c_char_p
with skr.open(sys.argv[1], "moe_block", device="npu:0") as pkg:
    before = len(json.loads(standin.skf_standin_log())["memory"])
    p = pkg.malloc(100)
    assert len(json.loads(standin.skf_standin_log())["memory"]) == before + 1  # aclrtMalloc'd
    assert pkg.copy_to_host(p, 100) == bytes(100)  # zeroed
    pkg.copy_to_device(p, bytes(range(100)))
    assert pkg.copy_to_host(p, 100) == bytes(range(100))
    pkg.free(p)
    try:
        pkg.free(p)
        raise SystemExit("a second free was accepted")
    except skr.Error as e:
        assert e.code == -1 and "freed twice" in str(e), e
    pkg.malloc(8)  # left for skf_close to free
log = json.loads(standin.skf_standin_log())
assert not log["memory"] and not log["errors"], log["memory"]
print("npu:0 ok")
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"npu:0 ok"* ]]
}

@test "runtime_npu: an NPU package with its program is byte-reproducible" {
    cd "$BATS_FILE_TMPDIR"
    "$SKC" compile ex/moe_block/graph.yaml --npu-arch dav-2201 -o again --name moe_block -q --sk-backend skforge --no-cache >/dev/null
    cmp out/moe_block.run again/moe_block.run
    run "$SKC" inspect again/moe_block.run --list
    grep -q " npu/program.json$" <<<"$output"
    grep -q " npu/kernels/GroupedMatmul/grouped_matmul.o$" <<<"$output"
}

@test "runtime_npu: skf_open on npu:0 refuses a package stamped for another CANN line or SoC than CANN's runtime reports" {
    local dir="$BATS_TEST_TMPDIR/stamped" root="$BATS_TEST_TMPDIR/sroot"
    mkdir -p "$root"
    cp -r "$ROOT/opp/static_kernel/ai_core/two_stream" "$dir"
    rm -f "$dir/install.sh" "$dir/uninstall.sh" "$dir/manifest.json" "$dir/version.info" \
        "$dir/.skforge-installed.json"
    "$SKC" pack "$dir" -o "$BATS_TEST_TMPDIR/two_stream.run" --package-version 1 --name two_stream \
        --npu-arch dav-2201 --soc Ascend910B1 --cann-version 9.1.0 -q >/dev/null
    "$SKINSTALL" install "$BATS_TEST_TMPDIR/two_stream.run" --install-path "$root" --quiet
    open_with() { # CANN_VERSION SOC_NAME [ENV...]: skrun on npu:0 with what the stand-in reports
        local v=$1 s=$2
        shift 2
        SKFORGE_ASCENDCL="$SKFORGE_ASCENDCL_STANDIN" STANDIN_CANN_VERSION=$v STANDIN_SOC_NAME=$s \
            run env "$@" "$SKRUN" two_stream --install-path "$root" --device npu:0
        echo "$output"
    }
    open_with 9.0.1 Ascend910B1
    [ "$status" -eq 1 ]
    [[ "$output" == *"npu:0: package 'two_stream' was built for CANN 9.1.0 (line 9.1), and the toolkit here is CANN 9.0.1 (line 9.0), read from aclsysGetCANNVersion"*"SKFORGE_IGNORE_CANN_VERSION=1 opens it anyway"* ]]
    open_with 9.1.2 Ascend950PR_9599
    [ "$status" -eq 1 ]
    [[ "$output" == *"npu:0: package 'two_stream' is for Ascend910B1 (ascend910b), and this host's SoC is ascend950 (aclrtGetSocName: Ascend950PR_9599)"* ]]
    open_with 9.1.2 Ascend910B3
    [ "$status" -eq 0 ]
    open_with 9.0.1 Ascend910B1 SKFORGE_IGNORE_CANN_VERSION=1
    [ "$status" -eq 0 ]
    # the release is read as the installers read version.info: up to a blank, a CR or a NUL
    open_with "$(printf '9.0.1 \r')" Ascend910B1
    [ "$status" -eq 1 ]
    [[ "$output" == *"and the toolkit here is CANN 9.0.1 (line 9.0), read from aclsysGetCANNVersion"* ]]
    # one that names no line (the stand-in fills the 128-byte field) is not checked
    open_with "$(printf '9.0.1%0200d' 0)" Ascend910B1
    [ "$status" -eq 0 ]
    # what CANN's runtime does not report is not checked: the stand-in without its variables
    SKFORGE_ASCENDCL="$SKFORGE_ASCENDCL_STANDIN" run env -u STANDIN_CANN_VERSION -u STANDIN_SOC_NAME \
        "$SKRUN" two_stream --install-path "$root" --device npu:0
    [ "$status" -eq 0 ]
}

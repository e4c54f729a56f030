#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Tiling sink and weight prefetch (issue 16): aicpu_tiling and prefetch operators beside the AI
# cores, connected to SuperKernels by notify/wait, checked, planned, compiled for the host,
# installed and run with the same bits fused and op-by-op; a dropped wait is caught. On the NPU
# targets what CANN's own SuperKernel flow refuses is refused by check, plan and compile.
load helpers

FX="$SKFORGE_SOURCE_DIR/test/fixtures/tiling_sink"
OUT=static_kernel_compile_outputs

compile_install() { # NAME
    "$SKC" compile "$FX/graph.yaml" --npu-arch host -o "$OUT" --name "$1" >/dev/null
    mkdir -p root
    "$SKINSTALL" install "$OUT/$1.run" --install-path root --quiet
}

@test "tiling: check accepts the graph; the plan keeps one SuperKernel and lists the pairs" {
    run "$SKC" check "$FX/graph.yaml"
    [ "$status" -eq 0 ]
    [[ "$output" == *"valid: 5 operators"* ]]
    run "$SKC" plan "$FX/graph.yaml"
    [ "$status" -eq 0 ]
    [[ "$output" == *"1 SuperKernel segment(s), 2 left out"* ]]
    [[ "$output" == *"segment sk (scope sk, 3 ops)"* ]]
    [[ "$output" == *"scale_tiling  RowTiling  OP_UNSUPPORT  AICPU tiling of 'scale'"* ]]
    [[ "$output" == *"notify/wait with operators beside the AI cores: 3 pair(s)"* ]]
    [[ "$output" == *"event 2: scale_tiling (aicpu_tiling) -> scale (kernel, in sk, wait slot"* ]]
    "$SKC" plan "$FX/graph.yaml" --format json >plan.json
    python3 - <<'PY'
import json
d = json.load(open("plan.json"))
assert d["summary"]["notify_wait_pairs"] == 3 and d["summary"]["segments"] == 1, d["summary"]
pairs = {p["event"]: p for p in d["notify_wait"]}
assert pairs[1]["notifier"] == "pre" and pairs[1]["notify_segment"] == "sk"
assert pairs[1]["waiter"] == "scale_tiling" and pairs[1]["wait_slot"] is None
assert pairs[3]["notifier_kind"] == "prefetch" and pairs[3]["waiter"] == "post"
meta = d["segments"][0]["kernel_meta"]
subs = {k["op_name"]: k for k in meta["SuperkernelInfo"]["kernelList"]}
wait = subs["scale"]["waits"][0]
assert wait["event"] == 2 and wait["peer"] == "scale_tiling" and wait["slot"] == pairs[2]["wait_slot"]
args = {a["name"]: a for a in subs["scale"]["arg_list"]}
assert args["scale_tiling_data"]["wait_param_offset"] == wait["slot"]
assert args["y"]["wait_param_offset"] == -1
notify = {a["name"]: a for a in subs["pre"]["arg_list"]}["y"]["notify_param_offset"]
assert notify == pairs[1]["notify_slot"]
roles = [p["role"] for p in meta["parameters"]]
assert roles[-3:] == ["notify", "wait", "wait"], roles
assert meta["opParaSize"] == meta["parameters"][-1]["param_offset"] + 8
PY
    run "$SKC" plan "$FX/graph.yaml" --format dot
    # The picture's nodes are n<k> in drawing order: pre, scale_tiling, prefetch_w, scale, post.
    [[ "$output" == *'n2 [label="prefetch_w\nPrefetch (prefetch)\nstream 2\nOP_UNSUPPORT"'* ]]
    [[ "$output" == *'n2 -> n4 [class="notify-wait", style=dashed, color="#1abc9c", label="notify/wait 3"'* ]]
}

@test "tiling: host package runs with the same bits fused and op-by-op, on 1 to 4 workers" {
    compile_install tsk
    for cores in 1 2 3 4; do
        run "$SKRUN" tsk --install-path root --compare-unfused --iterations 5 --cores "$cores" --seed 3
        echo "on $cores: $output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"fused:        1 launches per run"* ]]
        [[ "$output" == *"op-by-op:     3 launches per run"* ]]
        [[ "$output" == *"3 tensors bitwise identical"* ]]
    done
    src=root/opp/static_kernel/ai_core/tsk/host/SuperKernel/sk.cpp
    grep -q 'sk_flag_wait(sk_side_flag(params, [0-9]*), 1); // wait: event 2 from scale_tiling (aicpu_tiling)' "$src"
    grep -q 'sk_flag_arrive(sk_side_flag(params, [0-9]*)); // notify: event 1 to scale_tiling' "$src"
    python3 - root/opp/static_kernel/ai_core/tsk/host/program.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
ops = {o["name"]: o for o in p["ops"]}
assert ops["prefetch_w"]["kind"] == "prefetch" and ops["prefetch_w"]["library"] == ""
assert ops["scale_tiling"]["kind"] == "aicpu_tiling" and ops["scale_tiling"]["stream"] == 1
assert ops["scale_tiling"]["wait"] == [1] and ops["scale_tiling"]["notify"] == [2]
slots = p["segments"][0]["side_slots"]
assert [(s["event"], s["role"]) for s in slots] == [(1, "notify"), (2, "wait"), (3, "wait")], slots
PY
}

@test "tiling: a dropped wait lets the consumer read a stale tiling buffer, and compare fails" {
    compile_install tsk
    run "$SKRUN" tsk --install-path root --compare-unfused --iterations 2 --debug-drop-side-waits
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"1 of 3 tensors DIFFER"* ]]
    [[ "$output" == *"skrun: out differs fused vs op-by-op"* ]]
    # The same package with its waits is right (the switch, not the package, made it differ).
    run "$SKRUN" tsk --install-path root --compare-unfused --iterations 2
    [ "$status" -eq 0 ]
}

@test "tiling: every broken connection is reported at its place, all at once" {
    mkdir -p g
    cp -r "$FX/kernels" g/
    # scale waits for the prefetch only (its tiling: stale); post waits for nothing the prefetch
    # sends; the tiling is on the AI-core stream 0.
    sed -e 's/recv_event_list: \[2\], scope: sk}/recv_event_list: [3], scope: sk}/' \
        -e 's/outputs: \[{name: out, shape: \[16, 32\], dtype: float32}\], recv_event_list: \[3\]/outputs: [{name: out, shape: [16, 32], dtype: float32}], recv_event_list: [2]/' \
        -e 's/type: RowTiling, stream_id: 1/type: RowTiling, stream_id: 0/' \
        "$FX/graph.yaml" >g/graph.yaml
    run "$SKC" check g/graph.yaml
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:16:5: error: aicpu_tiling operator 'scale_tiling' is on stream 0, which also runs AI-core operator 'pre'"* ]]
    [[ "$output" == *"g/graph.yaml:21:5: error: 'scale' does not wait for its tiling"* ]]
    # The schema says the same of the kinds' keys.
    python3 - "$SKFORGE_SOURCE_DIR/share/skforge/graph.schema.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
op = s["$defs"]["op"]
assert op["properties"]["kind"]["enum"] == ["kernel", "aicpu_tiling", "prefetch"]
assert "tiling_for" in op["properties"]
PY
}

# npu_graph ARCH FIRST: the fixture's tiling sink on an NPU, with precompiled stand-in kernels
# (npu_kernels): `pre` notifies the tiling, `scale` waits for it, `post` runs last. With FIRST=1
# `pre` is left out of the scope, so `scale` is the SuperKernel's first sub-kernel.
npu_graph() {
    npu_kernels g/k add row_tiling tiled_scale
    local pre_scope=", scope: sk"
    [ "$2" = 1 ] && pre_scope=""
    cat >g/graph.yaml <<EOF2
name: tsk
npu_arch: $1
inputs: [{name: x, shape: [16, 32], dtype: float32}]
scopes: {sk: "early-start=0"}
ops:
  - {name: pre, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [16, 32], dtype: float32}], send_event_list: [1]$pre_scope}
  - {name: scale_tiling, kind: aicpu_tiling, tiling_for: scale, type: RowTiling, stream_id: 1, kernel: {json_path: k/row_tiling.json, bin_path: k/row_tiling.o}, inputs: [y], outputs: [{name: td, shape: [2], dtype: int64}], recv_event_list: [1], send_event_list: [2]}
  - {name: scale, type: TiledScale, kernel: {json_path: k/tiled_scale.json, bin_path: k/tiled_scale.o}, inputs: [y, td], outputs: [{name: z, shape: [16, 32], dtype: float32}], recv_event_list: [2], scope: sk}
  - {name: post, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [z, z], outputs: [{name: out, shape: [16, 32], dtype: float32}], scope: sk}
EOF2
}

# refused_compile WORDS...: skc compile g/graph.yaml with the stand-in CANN toolchain fails as a
# graph error (exit 1) and leaves nothing in the output directory but its error log.
refused_compile() {
    fake_bisheng
    run env PATH="$PWD/fakebin:$PATH" ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml -o out --jobs 1 "$@"
    echo "$output"
    [ "$status" -eq 1 ]
    [ "$(ls -A out)" = "$(ls -A out | grep '_compile_error\.log$')" ]
    [ -n "$(ls -A out)" ]
}

@test "tiling: on an NPU a SuperKernel's first sub-kernel may not wait for its tiling (check, plan, compile)" {
    npu_graph dav-2201 1
    local want="g/graph.yaml:8:5: error: 'scale' is the first sub-kernel of SuperKernel 'sk' and waits for 'scale_tiling' (aicpu_tiling, event 2): on dav-2201 the vendor's SuperKernel compiler refuses a first sub-kernel that receives an event"
    local fix="(put another operator of scope 'sk' before 'scale', or take 'scale' out of the scope)"
    for cmd in check plan; do
        run "$SKC" "$cmd" g/graph.yaml
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"$want"*"$fix"* ]]
    done
    refused_compile
    [[ "$output" == *"$want"* ]]
    # The same graph with pre in the scope compiles: scale waits between two sub-kernels.
    npu_graph dav-2201 0
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 0 ]
    PATH="$PWD/fakebin:$PATH" ASCEND_HOME_PATH=/opt/cann "$SKC" compile g/graph.yaml -o ok --jobs 1 >/dev/null
    [ -f ok/tsk_dav-2201.run ]
}

@test "tiling: a last sub-kernel may not notify an operator beside the cores on an NPU; the host takes both" {
    npu_graph dav-2201 0
    # post, the last sub-kernel, lets a prefetch start (event 3).
    sed -i 's/outputs: \[{name: out, shape: \[16, 32\], dtype: float32}\], scope: sk}/outputs: [{name: out, shape: [16, 32], dtype: float32}], send_event_list: [3], scope: sk}/' g/graph.yaml
    echo "  - {name: pf, kind: prefetch, stream_id: 2, inputs: [x], recv_event_list: [3]}" >>g/graph.yaml
    run "$SKC" check g/graph.yaml
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:9:5: error: 'post' is the last sub-kernel of SuperKernel 'sk' and notifies 'pf' (prefetch, event 3): on dav-2201 the vendor's SuperKernel compiler refuses a last sub-kernel that sends an event"*"after 'post'"* ]]
    refused_compile --npu-arch dav-3510
    [[ "$output" == *"'post' is the last sub-kernel of SuperKernel 'sk'"*"on dav-3510"* ]]
    # The host runtime fills every flag itself: the same graph on the host is valid.
    sed -i 's/^npu_arch: dav-2201/npu_arch: host/' g/graph.yaml
    run "$SKC" check g/graph.yaml
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "tiling: dav-3510 refuses tiling sink (CANN supports it on Atlas A2/A3 only), --npu-arch included" {
    npu_graph dav-2201 0
    local want="g/graph.yaml:7:5: error: aicpu_tiling operator 'scale_tiling' (the tiling of 'scale') cannot run on dav-3510: CANN supports tiling sink on Atlas A2/A3 (dav-2201) only, not yet on Ascend 950PR/950DT"
    refused_compile --npu-arch dav-3510
    [[ "$output" == *"$want"* ]]
    [[ "$output" == *"1 error(s) in the graph"* ]]
    sed -i 's/^npu_arch: dav-2201/npu_arch: dav-3510/' g/graph.yaml
    for cmd in check plan; do
        run "$SKC" "$cmd" g/graph.yaml
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"$want"* ]]
    done
    refused_compile
    [[ "$output" == *"$want"* ]]
    # A prefetch is no tiling sink: with one in place of the tiling, dav-3510 takes the graph.
    python3 - g/graph.yaml <<'PY'
import sys
p = sys.argv[1]
lines = [l for l in open(p) if "scale_tiling" not in l]
text = "".join(lines).replace("inputs: [y, td]", "inputs: [y, y]").replace(", recv_event_list: [2]", "")
text += "  - {name: pf, kind: prefetch, stream_id: 2, inputs: [x], recv_event_list: [1]}\n"
open(p, "w").write(text)
PY
    run "$SKC" check g/graph.yaml
    echo "$output"
    [ "$status" -eq 0 ]
}

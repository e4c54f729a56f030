#!/usr/bin/env bats
# Tiling sink and weight prefetch (issue 16): aicpu_tiling and prefetch operators beside the AI
# cores, connected to SuperKernels by notify/wait, checked, planned, compiled for the host,
# installed and run with the same bits fused and op-by-op; a dropped wait is caught.
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
    [[ "$output" == *'"prefetch_w" -> "post" [style=dotted, color=blue, label="notify/wait 3"]'* ]]
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

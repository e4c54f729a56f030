#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc check and skc plan on the example graphs and on broken ones.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"

@test "check accepts every example graph" {
    for g in moe_block tbe_cut two_stream; do
        run "$SKC" check "$EX/$g/graph.yaml"
        [ "$status" -eq 0 ]
        [[ "$output" == *"graph.yaml: valid:"* ]]
    done
}

@test "plan of the MoE block fuses sk1 and sk2 and says why the rest is left out" {
    run "$SKC" plan "$EX/moe_block/graph.yaml"
    [ "$status" -eq 0 ]
    [[ "$output" == *"segment sk1 (scope sk1, 3 ops)"* ]]
    [[ "$output" == *"segment sk2 (scope sk2, 2 ops)"* ]]
    [[ "$output" == *"reshape  Reshape  NOT_IN_SCOPE"* ]]
    [[ "$output" == *"concat  ConcatD  NOT_IN_SCOPE"* ]]
}

@test "plan --format json is documented JSON and deterministic" {
    "$SKC" plan "$EX/tbe_cut/graph.yaml" --format json >a.json
    "$SKC" plan "$EX/tbe_cut/graph.yaml" --format json >b.json
    cmp a.json b.json
    python3 - <<'PY'
import json
d = json.load(open("a.json"))
assert [s["name"] for s in d["segments"]] == ["sk_attn_split_0_1", "sk_attn_split_3_4"], d["segments"]
assert d["segments"][1]["split_reason"] == "CUT_BY_UNFUSIBLE"
ops = {o["name"]: o for o in d["ops"]}
assert ops["transpose"]["result"] == "left_out" and ops["transpose"]["reason"] == "OP_UNSUPPORT"
assert ops["norm"]["segment"] == "sk_attn_split_0_1"
assert d["summary"] == {"ops": 5, "fused": 4, "left_out": 1, "segments": 2, "notify_wait_pairs": 0}
assert d["segments"][0]["options"]["early_start"] == 2
PY
}

@test "plan --format dot draws one cluster per segment" {
    run "$SKC" plan "$EX/two_stream/graph.yaml" --format dot
    [ "$status" -eq 0 ]
    [[ "$output" == *"subgraph cluster_sk0 {"* ]]
    [[ "$output" == *'label="sk_dual\narena peak '* ]]
    [[ "$output" == *'n0 [label="rope\nRotaryPositionEmbedding\nstream 1"'* ]]
    [[ "$output" == *'n0 -> n2 [class="data"'* ]]
    run "$SKC" plan "$EX/moe_block/graph.yaml" --format dot
    [[ "$output" == *'[label="reshape\nReshape\nstream 0\nNOT_IN_SCOPE"'*'style="rounded,filled,dashed"'* ]]
}

@test "check reports every error as file:line:col and exits 1" {
    mkdir -p g/kernels
    cp "$EX/moe_block/kernels/reshape.json" g/kernels/k.json
    cat >g/graph.yaml <<'YAML'
name: broken
ops:
  - {name: a, type: A, kernel: {json_path: kernels/k.json}, inputs: [nowhere]}
  - {name: a, type: A, kernel: {json_path: kernels/missing.json}}
  - {name: b, type: B, kernel: {json_path: kernels/k.json}, stream: 1}
  - {name: c, type: C, kernel: {json_path: kernels/k.json}, send_event_list: [4]}
YAML
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:5:"*"unknown key 'stream' in an operator"* ]]
    [[ "$output" == *"g/graph.yaml:4:"*"cannot read kernel metadata"* ]]
    [[ "$output" == *"3 error(s)"* || "$output" == *"error(s)"* ]]
    run "$SKC" plan g/graph.yaml
    [ "$status" -eq 1 ]
}

@test "validation errors: cycle, cross-stream without event, unpaired event" {
    mkdir -p g/kernels
    cp "$EX/moe_block/kernels/square.json" g/kernels/k.json
    cat >g/graph.yaml <<'YAML'
inputs: [{name: x, shape: [1], dtype: float16}]
ops:
  - {name: a, type: A, kernel: {json_path: kernels/k.json}, inputs: [b_out], outputs: [{name: a_out, shape: [1], dtype: float16}]}
  - {name: b, type: B, kernel: {json_path: kernels/k.json}, inputs: [x], outputs: [{name: b_out, shape: [1], dtype: float16}], stream_id: 1}
  - {name: c, type: C, kernel: {json_path: kernels/k.json}, inputs: [b_out], outputs: [{name: c_out, shape: [1], dtype: float16}]}
  - {name: d, type: D, kernel: {json_path: kernels/k.json}, inputs: [x], outputs: [{name: d_out, shape: [1], dtype: float16}], send_event_list: [9]}
YAML
    run "$SKC" check g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"g/graph.yaml:3:"*"produced later by 'b' (a cycle)"* ]]
    [[ "$output" == *"g/graph.yaml:5:"*"comes from 'b' on stream 1 with no event in between"* ]]
    [[ "$output" == *"g/graph.yaml:6:"*"event 9 sent by 'd' is never received"* ]]
}

@test "a YAML syntax error names its position" {
    printf 'name: x\nops: [\n' >bad.yaml
    run "$SKC" check bad.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"bad.yaml:"*"YAML syntax error"* ]]
}

@test "check and plan usage errors exit 2" {
    run "$SKC" check
    [ "$status" -eq 2 ]
    run "$SKC" plan "$EX/moe_block/graph.yaml" --format png
    [ "$status" -eq 2 ]
    run "$SKC" check missing.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"missing.yaml"*"No such file or directory"* ]]
}

@test "a generated graph with thousands of operators plans the same twice" {
    python3 "$SKFORGE_SOURCE_DIR/test/bench/gen_graph.py" gen 3000 7
    "$SKC" plan gen/graph.yaml --format json >p1.json
    "$SKC" plan gen/graph.yaml --format json >p2.json
    cmp p1.json p2.json
    python3 - <<'PY'
import json
d = json.load(open("p1.json"))
assert d["summary"]["ops"] == len(d["ops"])
fused = [o for o in d["ops"] if o["result"] == "fused"]
assert len(fused) == d["summary"]["fused"]
assert all(o["reason"] for o in d["ops"] if o["result"] == "left_out")
seg_ops = sum(len(s["ops"]) for s in d["segments"])
assert seg_ops == len(fused)
PY
}

@test "plan --format json names the partners of every early-start pair" {
    "$SKC" plan "$EX/tbe_cut/graph.yaml" --format json >p.json
    python3 - <<'PY'
import json
d = json.load(open("p.json"))
segs = {s["name"]: s for s in d["segments"]}
assert segs["sk_attn_split_0_1"]["early_start_partners"] == [{"set": "norm", "wait": "qkv"}], segs
assert segs["sk_attn_split_3_4"]["early_start_partners"] == [{"set": "o_proj", "wait": "bias_add"}], segs
for s in d["segments"]:
    assert s["early_start_pairs"] == len(s["early_start_partners"])
PY
}

@test "check refuses a scope with strict-scope-check=abort that would be cut" {
    mkdir ex
    cp -r "$EX/tbe_cut" "$EX/host_kernels" ex/
    sed -i 's/"early-start=2"/"early-start=2:strict-scope-check=abort"/' ex/tbe_cut/graph.yaml
    run "$SKC" check ex/tbe_cut/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"graph.yaml:"*"scope 'sk_attn' has strict-scope-check=abort and cannot be fused whole: 'transpose' is left out (OP_UNSUPPORT: TBE kernel"* ]]
}

@test "check refuses kernel files that are FIFOs or devices at once, naming each" {
    mkdir -p g
    mkfifo g/meta.json
    cat >g/graph.yaml <<'EOF2'
name: devices
npu_arch: host
inputs: [{name: x, shape: [64], dtype: float32}]
ops:
  - {name: a, type: Add, kernel: {json_path: meta.json}, inputs: [x, x],
     outputs: [{name: y, shape: [64], dtype: float32}]}
  - {name: b, type: Add, kernel: {json_path: /dev/zero, bin_path: /dev/zero}, inputs: [y, y],
     outputs: [{name: z, shape: [64], dtype: float32}]}
  - {name: c, type: Add, kernel: {json_path: add.json, bin_path: fifo.o}, inputs: [z, z],
     outputs: [{name: w, shape: [64], dtype: float32}]}
EOF2
    cp "$SKFORGE_SOURCE_DIR/share/skforge/examples/host_kernels/add.json" g/
    mkfifo g/fifo.o
    # Without O_NONBLOCK the FIFOs would block forever and /dev/zero would be read until memory
    # runs out; the timeout only turns such a hang into a failure.
    for cmd in check plan; do
        run timeout 120 "$SKC" $cmd g/graph.yaml
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"cannot read kernel metadata: cannot read 'g/meta.json': a FIFO, not a regular file"* ]]
        [[ "$output" == *"cannot read kernel metadata: cannot read '/dev/zero': a character device, not a regular file"* ]]
        [[ "$output" == *"cannot read kernel binary: cannot read 'g/fifo.o': a FIFO, not a regular file"* ]]
    done
}

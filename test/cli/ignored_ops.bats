#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Operators of the types segmentation ignores (Data, Const, Variable, Send, Recv, ...) between
# members of a scope (issue 21): each runs its kernel after the SuperKernel launched before it,
# so a member that reads one is split off. Fused equals op-by-op bitwise on the FIRST run.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
OUT=static_kernel_compile_outputs

kernels() {
    mkdir -p g/k
    cp "$EX/host_kernels/square.json" "$EX/host_kernels/square.cpp" \
        "$EX/host_kernels/add.json" "$EX/host_kernels/add.cpp" g/k/
}

# first_run_identical NAME: skrun compares the first run; exit 0 and no difference.
first_run_identical() {
    run "$SKRUN" "$1" --install-path root --compare-unfused --iterations 1 --json --cores 3
    echo "$1: $output"
    [ "$status" -eq 0 ]
    echo "$output" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["identical"] and j["differences"] == [] and j["compared"] > 0, j'
}

@test "ignored operators: three Squares with a Data between each pair fuse apart, same bits" {
    kernels
    cat >g/graph.yaml <<'EOF2'
name: squares
npu_arch: host
inputs: [{name: x, shape: [1024], dtype: float32}]
ops:
  - {name: a, type: Square, kernel: {json_path: k/square.json}, inputs: [x],
     outputs: [{name: ta, shape: [1024], dtype: float32}], scope: s}
  - {name: d1, type: Data, kernel: {json_path: k/square.json}, inputs: [ta],
     outputs: [{name: td1, shape: [1024], dtype: float32}], scope: s}
  - {name: b, type: Square, kernel: {json_path: k/square.json}, inputs: [td1],
     outputs: [{name: tb, shape: [1024], dtype: float32}], scope: s}
  - {name: d2, type: Data, kernel: {json_path: k/square.json}, inputs: [tb],
     outputs: [{name: td2, shape: [1024], dtype: float32}], scope: s}
  - {name: c, type: Square, kernel: {json_path: k/square.json}, inputs: [td2],
     outputs: [{name: tc, shape: [1024], dtype: float32}], scope: s}
EOF2
    "$SKC" plan g/graph.yaml --format json >plan.json
    python3 - <<'PY'
import json
p = json.load(open("plan.json"))
segs = p["segments"]
assert [s["ops"] for s in segs] == [["a"], ["b"], ["c"]], segs
for s, d in zip(segs[1:], ["d1", "d2"]):
    assert s["split_reason"] == "EXIST_DEADLOCK", s
    assert s["split_detail"].startswith("depends on '%s' (a Data operator: segmentation ignores its type" % d), s
PY
    "$SKC" compile g/graph.yaml --npu-arch host -o "$OUT" --name squares >/dev/null
    mkdir -p root
    "$SKINSTALL" install "$OUT/squares.run" --install-path root --quiet
    first_run_identical squares
}

@test "ignored operators: generated graphs (positions, kinds, two streams) give the same bits on the first run" {
    kernels
    python3 - <<'PY'
import random
kinds = ["Data", "Const", "Variable", "Send", "Recv", "ConstPlaceHolder", "RecvMem"]
def tensor(n):
    return "[{name: %s, shape: [512], dtype: float32}]" % n
for seed in range(4):
    rng = random.Random(seed)
    ops, produced, event = [], ["x"], 0
    for i in range(10):
        name = "o%d" % i
        ignored = rng.random() < 0.4
        typ = rng.choice(kinds) if ignored else rng.choice(["Square", "Add"])
        k = "square" if typ != "Add" else "add"
        ins = [rng.choice(produced[-3:])]
        if k == "add":
            ins.append(rng.choice(produced))
        scope = ", scope: s" if not ignored or rng.random() < 0.5 else ""
        if ignored and seed % 2 == 1 and len(produced) > 1 and rng.random() < 0.6:
            # On stream 1, behind an event from the last operator, and back.
            src = ops[-1]
            ops[-1] = src.rstrip("}") + ", send_event_list: [%d]}" % (event + 1)
            ins = [produced[-1]]
            ops.append("  - {name: %s, type: %s, kernel: {json_path: k/%s.json}, inputs: [%s], "
                       "outputs: %s, stream_id: 1, recv_event_list: [%d], send_event_list: [%d]%s}"
                       % (name, typ, k, ", ".join(ins), tensor(name), event + 1, event + 2, scope))
            nxt = "o%d_w" % i
            ops.append("  - {name: %s, type: Square, kernel: {json_path: k/square.json}, inputs: [%s], "
                       "outputs: %s, recv_event_list: [%d], scope: s}" % (nxt, name, tensor(nxt), event + 2))
            event += 2
            produced.append(nxt)  # stream 1's own tensor is read behind the event only
            continue
        ops.append("  - {name: %s, type: %s, kernel: {json_path: k/%s.json}, inputs: [%s], "
                   "outputs: %s%s}" % (name, typ, k, ", ".join(ins), tensor(name), scope))
        produced.append(name)
    open("g/gen%d.yaml" % seed, "w").write(
        "name: gen%d\nnpu_arch: host\ninputs: [{name: x, shape: [512], dtype: float32}]\nops:\n"
        % seed + "\n".join(ops) + "\n")
PY
    mkdir -p root
    for seed in 0 1 2 3; do
        cat "g/gen$seed.yaml"
        "$SKC" plan "g/gen$seed.yaml"
        "$SKC" compile "g/gen$seed.yaml" --npu-arch host -o "$OUT" --name "gen$seed" >/dev/null
        "$SKINSTALL" install "$OUT/gen$seed.run" --install-path root --quiet
        first_run_identical "gen$seed"
    done
    # The graphs do have ignored operators between members, and two of them a second stream.
    grep -l "stream_id: 1" g/gen1.yaml g/gen3.yaml
}

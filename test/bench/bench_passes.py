#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What the planning passes save, on the example graphs and on generated ones: arena peak against
its lower bound, barriers by kind against the naive plan (a full barrier between every pair of
sub-kernels), and workspace against the naive sum.
    bench_passes.py SKC [GRAPHS] [OPERATORS]"""
import json, os, subprocess, sys, tempfile

skc = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
ops = int(sys.argv[3]) if len(sys.argv) > 3 else 400
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
gen = os.path.join(root, "test", "bench", "gen_graph.py")
examples = [os.path.join(root, "share", "skforge", "examples", g, "graph.yaml") for g in ("moe_block", "tbe_cut", "two_stream")]

def plan(path):
    out = subprocess.run([skc, "plan", "--format", "json", path], check=True, capture_output=True, text=True).stdout
    return json.loads(out)

def collect(graphs):
    ratios, bar, naive, ws, ws_naive = [], {"vector": 0, "cube": 0, "full": 0}, 0, 0, 0
    for d in graphs:
        for s in d["segments"]:
            if s["arena"]["lower_bound"]:
                ratios.append(s["arena"]["peak"] / s["arena"]["lower_bound"])
            for k in bar:
                bar[k] += s["barriers"][k]
            naive += s["barriers"]["naive_full"]
            ws += s["workspace"]["total"]
            ws_naive += s["workspace"]["naive"]
    return ratios, bar, naive, ws, ws_naive

def row(name, graphs):
    ratios, bar, naive, ws, ws_naive = collect(graphs)
    mean = sum(ratios) / len(ratios) if ratios else float("nan")
    worst = max(ratios) if ratios else float("nan")
    total = sum(bar.values())
    print("| %s | %d | %.3f | %.3f | %d vector, %d cube, %d full (%d) | %d full | %.1f MiB | %.1f MiB |" % (
        name, len(ratios), mean, worst, bar["vector"], bar["cube"], bar["full"], total, naive,
        ws / 2**20, ws_naive / 2**20))

print("| graphs | segments with an arena | arena peak / lower bound, mean | worst | barriers | naive barriers | workspace | naive workspace |")
print("|---|---|---|---|---|---|---|---|")
row("examples", [plan(p) for p in examples])
with tempfile.TemporaryDirectory() as tmp:
    graphs = []
    for seed in range(count):
        d = os.path.join(tmp, "g%d" % seed)
        subprocess.run([sys.executable, gen, d, str(ops), str(seed)], check=True)
        graphs.append(plan(os.path.join(d, "graph.yaml")))
    row("%d generated, %d operators each" % (count, ops), graphs)

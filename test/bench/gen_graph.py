#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a synthetic graph of N operators (and its kernel metadata) for the planning benchmark
and the property tests: two streams with events between them, a scope every 40 operators, a few
unfusible operators (TBE, dynamic, outside any scope).
    gen_graph.py OUT_DIR N [SEED]"""
import json, os, random, sys

out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
os.makedirs(os.path.join(out, "kernels"), exist_ok=True)
kinds = [("vec", "KERNEL_TYPE_AIV_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AIVEC", 48),
         ("cube", "KERNEL_TYPE_AIC_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AICUBE", 24),
         ("mix", "KERNEL_TYPE_MIX_AIC_1_2", "RT_DEV_BINARY_MAGIC_ELF", 24)]
for name, ktype, magic, block in kinds:
    with open(os.path.join(out, "kernels", name + ".json"), "w") as f:
        json.dump({"kernelName": name, "blockDim": block, "magic": magic, "opParaSize": 0,
                   "workspace": {"num": 1, "size": [rng.choice([0, 1024, 4096])], "type": [0]},
                   "sub_operator_kernel_type": ktype, "supportSuperKernel": 1}, f)
# Two streams in one scope: stream fusion on (the NPU targets' default is the vendor's, off).
lines = ["name: synthetic", "npu_arch: dav-2201", "soc_version: Ascend910B1",
         "super_kernel_optimize_options: {stream_fusion: 1}",
         "inputs:", "  - {name: in0, shape: [64, 64], dtype: float16}",
         "  - {name: in1, shape: [64, 64], dtype: float16}", "ops:"]
last = {0: "in0", 1: "in1"}
event = 0
pending = None  # (event id, producer tensor) sent from stream 1, waiting to be received on 0
for i in range(n):
    stream = 1 if i % 5 == 4 else 0
    inputs = [last[stream]]
    send, recv = [], []
    if stream == 1 and pending is None:
        event += 1
        send = [event]
        pending = (event, "t%d" % i)
    elif stream == 0 and pending is not None and rng.random() < 0.5:
        recv = [pending[0]]
        inputs.append(pending[1])
        pending = None
    kind = kinds[rng.randrange(3)][0]
    extra = ""
    r = rng.random()
    if r < 0.01:
        extra = ", engine: tbe"
    elif r < 0.015:
        extra = ", task_type: dynamic"
    scope = "" if (i // 40) % 7 == 6 else ", scope: s%d" % ((i // 40) % 1000)
    lines.append("  - {name: op%d, type: Op%s, stream_id: %d, kernel: {json_path: kernels/%s.json}, "
                 "inputs: [%s], outputs: [{name: t%d, shape: [64, %d], dtype: float16}]%s%s%s%s}" % (
                     i, kind, stream, kind, ", ".join(inputs), i, 16 * rng.randint(1, 32),
                     ", send_event_list: %s" % send if send else "",
                     ", recv_event_list: %s" % recv if recv else "", extra, scope))
    last[stream] = "t%d" % i
if pending is not None:
    lines.append("  - {name: drain, type: Opvec, stream_id: 0, kernel: {json_path: kernels/vec.json}, "
                 "inputs: [%s], outputs: [{name: tdrain, shape: [64, 64], dtype: float16}], recv_event_list: [%d]}"
                 % (pending[1], pending[0]))
with open(os.path.join(out, "graph.yaml"), "w") as f:
    f.write("\n".join(lines) + "\n")

# SPDX-License-Identifier: Apache-2.0
"""Generated SuperKernel inputs for the differential harness: a graph of one scope (graph.yaml
in skforge's format) with its sub-kernels (JSON in the shape CANN's op compiler writes for a
SuperKernel sub-operator, and stand-in objects), varied over graph shape, kernel types, block
counts, split modes, streams, events and options. Deterministic for a seed."""
import hashlib
import json
import os
import random

import objects

KERNEL_TYPES = ["KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_MIX_AIV_1_0",
                "KERNEL_TYPE_MIX_AIC_1_0", "KERNEL_TYPE_MIX_AIC_1_1", "KERNEL_TYPE_MIX_AIC_1_2"]
# The core entries of sub_operator_kernel_name per kernel type ("dav-<chip>-cube"/"-vec", chip
# c220 on dav-2201, c310 on dav-3510: asc-devkit super_kernel_sub_op_infos.py reads
# f"dav-{chip_version}-vec").
_CORES = {"KERNEL_TYPE_AIV_ONLY": ["AiCore"], "KERNEL_TYPE_AIC_ONLY": ["AiCore"],
          "KERNEL_TYPE_MIX_AIV_1_0": ["dav-c220-vec"], "KERNEL_TYPE_MIX_AIC_1_0": ["dav-c220-cube"],
          "KERNEL_TYPE_MIX_AIC_1_1": ["dav-c220-cube", "dav-c220-vec"],
          "KERNEL_TYPE_MIX_AIC_1_2": ["dav-c220-cube", "dav-c220-vec"]}
_SUFFIX = {"AiCore": "", "cube": "_mix_aic", "vec": "_mix_aiv"}
# npu_arch -> (the SoC the case is compiled for, skforge's SoC directory, the chip's name).
TARGETS = {"dav-2201": ("Ascend910_9391", "ascend910_93", "c220"),
           "dav-3510": ("Ascend950PR_9599", "ascend950", "c310")}


def target_of(case):
    """(npu_arch, SoC, skforge's SoC directory) of a case."""
    arch = case.get("arch", "dav-2201")
    return arch, TARGETS[arch][0], TARGETS[arch][1]
_OPTIONS = {"early-start": ["0", "1"], "func-align": ["0", "256", "512"],
            "preload-code": ["per-func", "max", "none"], "debug-sync-all": ["0", "1"],
            "debug-dcci-all": ["0", "1"], "feed-sync-all": ["0", "1"],
            "split-mode": ["1", "2", "4"], "stream-fusion": ["0", "1"]}


def _core_meta(ktype):
    if ktype == "KERNEL_TYPE_AIV_ONLY":
        return "VectorCore", "RT_DEV_BINARY_MAGIC_ELF_AIVEC", "0:1"
    if ktype == "KERNEL_TYPE_AIC_ONLY":
        return "AiCore", "RT_DEV_BINARY_MAGIC_ELF_AICUBE", "1:0"
    ration = {"KERNEL_TYPE_MIX_AIV_1_0": "0:1", "KERNEL_TYPE_MIX_AIC_1_0": "1:0",
              "KERNEL_TYPE_MIX_AIC_1_1": "1:1", "KERNEL_TYPE_MIX_AIC_1_2": "1:2"}[ktype]
    return "MIX", "RT_DEV_BINARY_MAGIC_ELF", ration


def kernel_meta(name, ktype, block, split, params, flags, chip="c220"):
    """The op compiler's JSON for a SuperKernel sub-operator (asc-devkit compile_op.py
    _json_except_info / super_kernel_sub_op_compile.py, as the vendor's ST inputs show it)."""
    kernel = name + "__kernel0"
    names = {}
    for core in (c.replace("c220", chip) for c in _CORES[ktype]):
        stem = name + _SUFFIX[core.rsplit("-", 1)[-1]]
        entry = {"func_name": kernel + _SUFFIX[core.rsplit("-", 1)[-1]] + "_middle",
                 "obj_files": stem + ".o"}
        for k in range(1, (split or 1)):
            entry[f"obj_files_split{k}"] = f"{stem}_split{k}.o"
        names[core] = entry
    core_type, magic, ration = _core_meta(ktype)
    meta = {"binFileName": name, "binFileSuffix": ".o", "blockDim": block, "coreType": core_type,
            "intercoreSync": 1 if core_type == "MIX" else 0, "kernelName": kernel,
            "magic": magic, "memoryStamping": [], "opParaSize": 32,
            "parameters": [None] * len(params), "supportSuperKernel": 1,
            "workspace": {"num": 1, "size": [1024], "type": [0]},
            "sub_operator_params": params, "sub_operator_kernel_type": ktype,
            "sub_operator_kernel_name": names,
            "sub_operator_early_start_set_flag": flags[0],
            "sub_operator_early_start_wait_flag": flags[1],
            "sub_operator_call_dcci_before_kernel_start": flags[2],
            "sub_operator_call_dcci_after_kernel_end": flags[3],
            "sub_op_with_sync_all": False, "localMemorySize": 0}
    if core_type == "MIX":
        meta["taskRation"] = ration
    if split is not None:
        meta["split_mode"] = split
    return meta


def _streams(rng, n):
    if n < 2 or rng.random() < 0.5:
        return [1] * n
    cut = rng.randint(1, n - 1)
    return [0] * cut + [1] * (n - cut) if rng.random() < 0.5 else [i % 2 for i in range(n)]


def random_case(rng, index):
    n = rng.randint(2, 4)
    ktypes = [rng.choice(KERNEL_TYPES) for _ in range(n)]
    if rng.random() < 0.4:  # many real graphs are all of one kind
        ktypes = [ktypes[0]] * n
    opts = {k: rng.choice(v) for k, v in _OPTIONS.items() if rng.random() < 0.5}
    sk_split = int(opts.get("split-mode", "4"))
    ops = []
    streams = _streams(rng, n)
    for i, ktype in enumerate(ktypes):
        cap = 24 if "AIC" in ktype else 48
        block = rng.choice([1, 8, 20, min(24, cap), 32 if cap == 48 else 24, cap])
        split = sk_split if rng.random() < 0.85 else rng.choice([None, 1, 4])
        flags = [rng.random() < 0.2 for _ in range(4)]
        ops.append({"type": ktype, "block": block, "split": split, "stream": streams[i],
                    "flags": flags, "text": rng.choice([1500, 4000, 10000, 20000])})
    return {"name": f"case{index:03d}", "options": opts, "ops": ops}


def st_like_cases():
    """The vendor's ST shapes, with skforge's input: two (or three) sub-kernels on one stream
    under each ST option, and two streams under stream-fusion=1 per kernel type."""
    out = []
    base = [{"type": "KERNEL_TYPE_AIV_ONLY", "block": 32, "split": 4, "stream": 1,
             "flags": [False] * 4, "text": 4000},
            {"type": "KERNEL_TYPE_AIV_ONLY", "block": 1, "split": 4, "stream": 1,
             "flags": [False] * 4, "text": 10000}]
    for opts in ({}, {"early-start": "0"}, {"func-align": "256"}, {"preload-code": "max"},
                 {"debug-dcci-all": "1"}, {"debug-sync-all": "1"}, {"feed-sync-all": "1"}):
        for ktype in ("KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_AIC_ONLY"):
            ops = [dict(op, type=ktype) for op in base]
            name = "st_" + ("_".join(f"{k}_{v}" for k, v in opts.items()) or "default") + \
                "_" + ktype[12:].lower()
            out.append({"name": name, "options": dict(opts), "ops": ops})
    out.append({"name": "st_3_ops", "options": {}, "ops": base + [dict(base[0])]})
    # debug-aic-num/debug-aiv-num below the sub-kernels' 32 vector blocks, in range, and above
    # the SoC's 48 vector cores (graph-autofusion e1cbeb9b refuses the first and last).
    for aiv in (16, 40, 64):
        out.append({"name": f"st_debug_aiv_num_{aiv}",
                    "options": {"debug-aic-num": "0", "debug-aiv-num": str(aiv)},
                    "ops": [dict(op) for op in base]})
    # Both sub-kernels compiled with dcci before and after; the scope disables the second's
    # (the 9.0 vendor reads that from its JSON only; the 8.5 parser refuses the option).
    out.append({"name": "st_dcci_disable_on_kernel", "options": {"dcci-disable-on-kernel": "Op1"},
                "ops": [dict(op, flags=[False, False, True, True]) for op in base]})
    for ktype in KERNEL_TYPES:
        ops = [dict(base[0], type=ktype, stream=0), dict(base[1], type=ktype, stream=1)]
        out.append({"name": "st_2_stream_" + ktype[12:].lower(),
                    "options": {"stream-fusion": "1"}, "ops": ops})
    return out + c310_cases(base)


def c310_cases(base):
    """dav-3510 (Ascend950PR_9599, 32 AI cores, 64 vector cores): where the generators write
    the chip's own synchronisation (asc-devkit's get_wait_flag_for_chip) and build defines.
    Each kernel type on one stream under early-start=0 and debug-sync-all=1 (the barrier
    between sub-kernels), and on two streams under stream-fusion=1 (the cross-core flags)."""
    out = []
    for ktype in KERNEL_TYPES:
        ops = [dict(op, type=ktype, block=min(op["block"], 24)) for op in base]
        short = ktype[12:].lower()
        out.append({"name": f"c310_early_start_0_{short}", "arch": "dav-3510",
                    "options": {"early-start": "0", "debug-sync-all": "1"}, "ops": ops})
        out.append({"name": f"c310_2_stream_{short}", "arch": "dav-3510",
                    "options": {"stream-fusion": "1"},
                    "ops": [dict(ops[0], stream=0), dict(ops[1], stream=1)]})
    return out + two_stream_cases(base)


def two_stream_cases(base):
    """Two-stream mode (stream-fusion=1, two streams with no event between them: each kind of
    core runs its own program), on both chips: a cube and a vector sub-kernel on streams 0 and
    1, then one more on stream 0 that the first's event orders (a cross-core flag)."""
    out = []
    for arch in ("dav-2201", "dav-3510"):
        for first, second in (("KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_AIV_ONLY"),
                              ("KERNEL_TYPE_MIX_AIC_1_0", "KERNEL_TYPE_MIX_AIV_1_0")):
            ops = [dict(base[0], type=first, block=16, stream=0),
                   dict(base[1], type=second, block=16, stream=1),
                   dict(base[0], type=second, block=16, stream=0)]
            out.append({"name": f"two_stream_{first[12:].lower()}_{arch}", "arch": arch,
                        "options": {"stream-fusion": "1"}, "ops": ops, "unconnected": True})
    return out


def _sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def write_case(case, root):
    """graph.yaml and kernels/ for a case under root/<name>/; returns that directory.
    Data: the ops of a stream chain one to the next; the first op of a stream after another
    stream's first reads that stream's last earlier output and waits for its event."""
    d = os.path.join(root, case["name"])
    os.makedirs(os.path.join(d, "kernels"), exist_ok=True)
    last = {}  # stream -> (op index, output tensor)
    lines, event = [], 100
    sends = {i: [] for i in range(len(case["ops"]))}
    for i, op in enumerate(case["ops"]):
        inputs = [last[op["stream"]][1]] if op["stream"] in last else ["x"]
        recv = []
        other = [s for s in last if s != op["stream"]]
        if other and op["stream"] not in last and not case.get("unconnected"):
            src, tensor = last[other[0]]
            inputs.append(tensor)
            sends[src].append(event)
            recv.append(event)
            event += 1
        op["inputs"], op["recv"] = inputs, recv
        last[op["stream"]] = (i, f"t{i}")
    for i, op in enumerate(case["ops"]):
        name = f"k{i}"
        params = [f"in{j}" for j in range(len(op["inputs"]))] + ["out0", "workspace"]
        meta = kernel_meta(name, op["type"], op["block"], op["split"], params, op["flags"],
                           TARGETS[target_of(case)[0]][2])
        obj = os.path.join(d, "kernels", name + ".o")
        objects.sub_kernel_archive(obj, objects.members_of(meta), op["text"])
        meta["sha256"] = _sha(obj)
        with open(os.path.join(d, "kernels", name + ".json"), "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=2)
        events = (f", send_event_list: {sends[i]}" if sends[i] else "") + \
                 (f", recv_event_list: {op['recv']}" if op["recv"] else "")
        lines.append(f"  - {{name: op{i}, type: Op{i}, kernel: {{json_path: kernels/{name}.json, "
                     f"bin_path: kernels/{name}.o}}, inputs: [{', '.join(op['inputs'])}], "
                     f"outputs: [{{name: t{i}, shape: [1024], dtype: float16}}], scope: sk, "
                     f"stream_id: {op['stream']}{events}}}")
    opts = ":".join(f"{k}={v}" for k, v in case["options"].items())
    with open(os.path.join(d, "graph.yaml"), "w", encoding="utf-8") as f:
        arch, soc, _ = target_of(case)
        f.write(f"name: g\nnpu_arch: {arch}\nsoc_version: {soc}\n"
                f"scopes: {{sk: \"{opts}\"}}\n"
                "inputs: [{name: x, shape: [1024], dtype: float16}]\nops:\n" + "\n".join(lines) + "\n")
    return d


def generated_cases(seed, count):
    rng = random.Random(seed)
    return st_like_cases() + [random_case(rng, i) for i in range(count)]

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""skforge.runtime on npu:0 with the stand-in libascendcl.so:

    python3 npu_standin.py INSTALL_PATH STANDIN_LIBRARY PACKAGE...

For each installed NPU package: binds every tensor to device memory of the stand-in's
aclrtMalloc, runs it fused, op by op, and each SuperKernel alone, and compares every launch the
stand-in recorded with the files the package ships, read here on their own: each SuperKernel's
JSON (kernelName and its _mix_aic/_mix_aiv functions by taskRation, magic, blockDim, the
parameter table's size from SuperkernelInfo.kernelList[].arg_list, slot 0 the FFTS address,
every tensor slot the bound pointer by skforge.kernelList[].arg_list, arena and workspace slots
inside the SuperKernel's workspace at their offsets, one lock per notify/wait), and each
operator's kernel JSON (kernelName, blockDim, FFTS for MIX, its tensors, workspace, the tiling
data of runInfo). A run the runtime refuses is printed with its message. Prints one line per
package; exits 1 on any disagreement."""
import ctypes
import json
import os
import sys

import skforge.runtime as skr

MAGIC = {"RT_DEV_BINARY_MAGIC_ELF": 0x43554245, "RT_DEV_BINARY_MAGIC_ELF_AIVEC": 0x41415246,
         "RT_DEV_BINARY_MAGIC_ELF_AICUBE": 0x41494343}
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
    return cond


class Standin:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)  # the same copy the runtime dlopens by this path
        self.lib.skf_standin_log.restype = ctypes.c_char_p
        self.lib.aclrtMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                         ctypes.c_int]

    def malloc(self, n):
        p = ctypes.c_void_p()
        assert self.lib.aclrtMalloc(ctypes.byref(p), max(n, 1), 0) == 0
        return p.value

    def free(self, p):
        self.lib.aclrtFree(ctypes.c_void_p(p))

    def log(self):
        return json.loads(self.lib.skf_standin_log())

    def reset(self):
        self.lib.skf_standin_reset()


def load(path):
    with open(path) as f:
        return json.load(f)


def vendor_entry(sk, p):
    """Sub-kernel p's entry of the vendor's SuperkernelInfo.kernelList (its arg_list, and all
    the events its operator sends and receives)."""
    off = vendor_offset(sk, p)
    return next(v for lst in sk["SuperkernelInfo"]["kernelList"].values() for v in lst
                if v["arg_list"]["param_offset"] == off)


def table_size(sk):
    """Slots of a SuperKernel's parameter table, from its JSON: slot 0 (FFTS), per sub-kernel
    its parameters (arguments and a workspace), one slot per event it sends and receives, and the
    SuperKernel's workspace last."""
    end = 1
    for p, sub in enumerate(sk["skforge"]["kernelList"]):
        v = vendor_entry(sk, p)
        n_events = len(v["send_event_list"]) + len(v["recv_event_list"])
        end = max(end, v["arg_list"]["param_offset"] + len(sub["arg_list"]) + 1 + n_events)
    return end + 1


def vendor_offset(sk, p):
    """The first parameter slot of sub-kernel p: the vendor lists, in plan order, de-duplicated
    (a MIX sub-kernel is in both the cube and the vector list)."""
    seen = []
    lists = sk["SuperkernelInfo"]["kernelList"]
    for lst in lists.values():
        for v in lst:
            if v["arg_list"]["param_offset"] not in seen:
                seen.append(v["arg_list"]["param_offset"])
    return sorted(seen)[p]


def lock_slots(sk, p):
    """The notify and wait slots of sub-kernel p, from the vendor's arg_list."""
    v = vendor_entry(sk, p)
    arg = v["arg_list"]
    sub = sk["skforge"]["kernelList"][p]
    n_notify, n_wait = len(v["send_event_list"]), len(v["recv_event_list"])
    first = arg["param_offset"] + len(sub["arg_list"]) + 1
    notify = list(range(arg["notify_param_offset"], arg["notify_param_offset"] + n_notify)) \
        if arg["notify_param_offset"] is not None else []
    wait = list(range(arg["wait_param_offset"], arg["wait_param_offset"] + n_wait)) \
        if arg["wait_param_offset"] is not None else []
    expect(not notify or notify[0] == first, "notify slots of sub-kernel %d follow its parameters" % p)
    return notify, wait


def check_superkernel(who, launch, sk, bound, ffts, arch):
    """One launch against the SuperKernel's JSON; returns the lock slots that are wait locks."""
    name = sk["kernelName"]
    expect(launch["function"] == name, "%s: function %s, the JSON's kernelName %s"
           % (who, launch["function"], name))
    ration = sk["taskRation"]
    wanted = {"1:2": ["_mix_aic", "_mix_aiv"], "1:1": ["_mix_aic", "_mix_aiv"],
              "1:0": ["_mix_aic"], "0:1": ["_mix_aiv"]}[ration]
    for suffix in wanted:
        expect(name + suffix in launch["symbols"], "%s: the binary has no %s%s (taskRation %s)"
               % (who, name, suffix, ration))
    expect(launch["block_dim"] == sk["blockDim"], "%s: blockDim %d, the JSON's %d"
           % (who, launch["block_dim"], sk["blockDim"]))
    expect(launch["magic"] == MAGIC[sk["magic"]], "%s: magic %#x, the JSON's %s"
           % (who, launch["magic"], sk["magic"]))
    n = table_size(sk) if arch != "dav-3510" else table_size(sk) - 1
    expect(launch["args_bytes"] == 8 * n, "%s: argument buffer of %d bytes, the parameter "
           "table has %d slots" % (who, launch["args_bytes"], n))
    slots, where = launch["slots"], launch["where"]
    if len(slots) != n:
        return []
    expect(slots[0] == ffts, "%s: slot 0 is not the FFTS address" % who)
    ws_size = sk["workspace"]["size"][0] if "workspace" in sk else 0
    params = {p["name"]: p for p in sk["skforge"]["parameters"]}
    arena_base = params["workspace"]["size"] - sk["skforge"]["arena"]["peak"] \
        if "workspace" in params else 0
    block = None

    def in_block(slot, offset, what):
        nonlocal block
        w = where[slot]
        ok = expect("allocation" in w and w["size"] == ws_size and w["offset"] == offset,
                    "%s: slot %d (%s) is not at offset %d of the %d-byte workspace: %s"
                    % (who, slot, what, offset, ws_size, w))
        if ok:
            block = w["allocation"] if block is None else block
            expect(w["allocation"] == block, "%s: slot %d in another workspace" % (who, slot))

    locks = set()
    waits = []
    for p, sub in enumerate(sk["skforge"]["kernelList"]):
        first = vendor_offset(sk, p)
        for j, arg in enumerate(sub["arg_list"]):
            s = first + j
            if arg["arena_offset"] < 0:
                expect(slots[s] == bound[arg["name"]], "%s: slot %d holds %#x, not the memory "
                       "bound to %s (%#x)" % (who, s, slots[s], arg["name"], bound[arg["name"]]))
            else:
                in_block(s, arena_base + arg["arena_offset"], "arena tensor " + arg["name"])
        in_block(first + len(sub["arg_list"]), sub["workspace_offset"],
                 "workspace of " + sub["op_name"])
        notify, wait = lock_slots(sk, p)
        # a lock for every event but those inside the SuperKernel (skforge's event lists)
        side = [x for x in notify + wait if slots[x] != 0]
        outside = len(notify) + len(wait) - len(sub["send_event_list"]) - \
            len(sub["recv_event_list"])
        expect(len(side) == outside and outside >= len(sub["notifies"]) + len(sub["waits"]),
               "%s: %s has %d lock slots set, its JSON %d events with the outside" %
               (who, sub["op_name"], len(side), outside))
        for x in side:
            expect("allocation" in where[x] and slots[x] not in locks,
                   "%s: lock slot %d is no lock of its own" % (who, x))
            locks.add(slots[x])
        waits += [slots[x] for x in wait if slots[x] != 0]
    # the last slot: the entry's own flag area after the scratch and the arena, when it has one
    if ws_size > params.get("workspace", {}).get("size", 0):
        in_block(n - 1, params["workspace"]["size"], "the SuperKernel's own workspace")
    else:
        expect(slots[n - 1] == 0, "%s: the last slot points at a workspace of no bytes" % who)
    return waits


def check_op(who, launch, kjson, op, tensors, bound, ffts, arch):
    """One launch of an operator alone against its kernel's JSON, laid out as opbase does."""
    run = kjson.get("runInfo", {})
    expect(launch["function"] == kjson["kernelName"], "%s: function %s, kernelName %s"
           % (who, launch["function"], kjson["kernelName"]))
    expect(launch["block_dim"] == run.get("block_dim", kjson["blockDim"]),
           "%s: blockDim %d" % (who, launch["block_dim"]))
    expect(launch["magic"] == MAGIC[kjson["magic"]], "%s: magic %#x" % (who, launch["magic"]))
    mix = kjson.get("sub_operator_kernel_type", "").startswith("KERNEL_TYPE_MIX")
    slots, where = launch["slots"], launch["where"]
    k = 0
    if mix and arch != "dav-3510":
        expect(slots[0] == ffts, "%s: slot 0 is not the FFTS address (a MIX kernel)" % who)
        k = 1
    for t in op["inputs"] + op["outputs"]:
        name = tensors[t]["name"]
        if name in bound:
            expect(slots[k] == bound[name], "%s: slot %d is not %s's memory" % (who, k, name))
        else:  # an arena tensor: memory of the runtime's own, large enough
            expect("allocation" in where[k] and where[k]["size"] >= tensors[t]["bytes"],
                   "%s: slot %d (%s) is no memory of its size" % (who, k, name))
        k += 1
    sizes = [s for s in kjson.get("workspace", {}).get("size", []) if s > 0]
    for s in sizes or [0]:
        if s == 0:
            expect(slots[k] == 0, "%s: slot %d should be the null workspace" % (who, k))
        else:
            expect(where[k].get("size") == s, "%s: workspace slot %d is not %d bytes" % (who, k, s))
        k += 1
    expect(len(slots) == k + 1 and launch["place_holder_data"].get(str(k)) ==
           run.get("tiling_data"), "%s: the last slot is not its tiling data" % who)


def check_order(name, program, calls):
    """The fused launches keep the plan's order across streams: a step on one stream that reads
    what a step on another stream wrote waits, before its launch, for an event recorded on that
    stream after that step's launch; steps of different plan streams go to different streams."""
    steps, ops = program["steps"], program["ops"]

    def step_ops(st):
        return program["segments"][st["segment"]]["ops"] if "segment" in st else [st["op"]]

    def plan_stream(st):
        return program["segments"][st["segment"]]["stream"] if "segment" in st \
            else ops[st["op"]]["stream"]
    launched, recorded, waited = [], {}, {}  # launch -> stream; event -> (stream, launches)
    for c in calls:
        if c["fn"] == "aclrtLaunchKernelWithConfig":
            launched.append(c["stream"])
        elif c["fn"] == "aclrtRecordEvent":
            recorded[c["event"]] = (c["stream"], len(launched))
        elif c["fn"] == "aclrtStreamWaitEvent":
            waited.setdefault(len(launched), []).append((c["stream"], recorded.get(c["event"])))
    if not expect(len(launched) == len(steps), "%s: launches out of step" % name):
        return
    producer = {}
    for i, st in enumerate(steps):
        for o in step_ops(st):
            for t in ops[o]["inputs"]:
                d = producer.get(t)
                if d is None or plan_stream(steps[d]) == plan_stream(st):
                    continue
                expect(launched[i] != launched[d], "%s: steps %d and %d of different streams "
                       "share one" % (name, d, i))
                ok = any(s == launched[i] and r is not None and r[0] == launched[d] and r[1] > d
                         for k, lst in waited.items() if k <= i for s, r in lst)
                expect(ok, "%s: step %d (stream %d) does not wait for step %d (stream %d)"
                       % (name, i, plan_stream(st), d, plan_stream(steps[d])))
        for o in step_ops(st):
            for t in ops[o]["outputs"]:
                producer[t] = i


def check_package(root, standin, name):
    base = os.path.join(root, "opp", "static_kernel", "ai_core", name)
    program = load(os.path.join(base, "npu", "program.json"))
    arch = program["arch"]
    pkg = skr.open(root, name, device="npu:0")
    bound = {}
    for t in pkg.tensors:
        bound[t.name] = standin.malloc(t.nbytes)
        pkg.bind(t.name, bound[t.name])
    ffts = standin.log()["ffts"]
    sk = {s: load(os.path.join(base, program["soc_dir"], "SuperKernel", s + ".json"))
          for s in pkg.segments}
    tensors, ops = program["tensors"], program["ops"]
    kernel_json = {i: load(os.path.join(base, o["kernel"]["json"]))
                   for i, o in enumerate(ops) if o["kernel"]}
    said = ["%s: %s" % (name, pkg.device)]

    def attempt(what, fn):
        standin.reset()
        try:
            fn()
        except skr.Error as e:
            said.append("%s refused: %s" % (what, e))
            expect(e.code == -6 and not standin.log()["launches"],
                   "%s: %s refused after launching, or not as unsupported (the stand-in: %s)"
                   % (name, what, standin.log()["errors"]))
            return None
        return standin.log()["launches"]

    launches = attempt("skf_run", pkg.run)
    if launches is not None:
        steps = program["steps"]
        expect(len(launches) == len(steps), "%s: fused %d launches, %d expected"
               % (name, len(launches), len(steps)))
        for st, launch in zip(steps, launches):
            if "segment" in st:
                s = pkg.segments[st["segment"]]
                check_superkernel(name + " " + s, launch, sk[s], bound, ffts, arch)
            else:
                i = st["op"]
                check_op(name + " " + ops[i]["name"], launch, kernel_json[i], ops[i], tensors,
                         bound, ffts, arch)
        check_order(name, program, standin.log()["calls"])
        expect(pkg.stats["last_launches"] == len(launches), "%s: stats" % name)
        said.append("fused %d launches match %d SuperKernel JSONs and %d kernels" %
                    (len(launches), sum("segment" in s for s in steps),
                     sum("op" in s for s in steps)))
    launches = attempt("skf_run_unfused", pkg.run_unfused)
    if launches is not None:
        expect(len(launches) == len(ops), "%s: op by op %d launches for %d operators"
               % (name, len(launches), len(ops)))
        for i, launch in enumerate(launches[:len(ops)]):
            check_op(name + " " + ops[i]["name"] + " alone", launch, kernel_json[i], ops[i],
                     tensors, bound, ffts, arch)
        said.append("op by op %d launches match %d kernel JSONs" % (len(launches), len(ops)))
    for s in pkg.segments:
        if attempt("skf_run_segment " + s, lambda: pkg.run_segment(s)) is None:
            continue
        log = standin.log()
        expect(len(log["launches"]) == 1, "%s: skf_run_segment %s made %d launches"
               % (name, s, len(log["launches"])))
        waits = check_superkernel(name + " " + s + " alone", log["launches"][0], sk[s], bound,
                                  ffts, arch)
        # its waits on operators outside it count as satisfied: each wait lock holds 1
        ones = {c["to"].get("offset") for c in log["calls"]
                if c["fn"] == "aclrtMemcpy" and c.get("value") == 1}
        expect(len(ones) == len(waits), "%s: %d wait locks of %s set to 1 before it, %d expected"
               % (name, len(ones), s, len(waits)))
    said.append("%d SuperKernels alone match their JSONs" % len(pkg.segments))
    pkg.close()
    for p in bound.values():
        standin.free(p)
    log = standin.log()
    expect(not log["errors"], "%s: the stand-in refused: %s" % (name, log["errors"]))
    expect(log["streams_live"] == 0 and log["events_live"] == 0 and log["binaries_loaded"] == 0
           and not log["memory"], "%s: skf_close left %d streams, %d events, %d binaries, %d "
           "allocations" % (name, log["streams_live"], log["events_live"],
                            log["binaries_loaded"], len(log["memory"])))
    print("; ".join(said))


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    root, library = sys.argv[1], sys.argv[2]
    standin = Standin(library)
    for name in sys.argv[3:]:
        check_package(root, standin, name)
    for f in failures:
        print("FAILED: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

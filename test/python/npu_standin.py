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
inside the SuperKernel's workspace at their offsets, one lock per notify/wait, the launch's
schedule mode and local memory size), and each operator's kernel JSON (kernelName, blockDim, FFTS
for MIX, its tensors, workspace, the tiling data of runInfo, the overflow address, the schedule
mode and local memory size of runInfo or the JSON). Operators beside the cores: each AICPU tiling
kernel one AICPU launch (its function and OpType, its tensors and workspace), each prefetch one
CMO prefetch per tensor, and in the fused run each waits (aclrtValueWait) on the locks it
receives and writes (aclrtValueWrite) the locks it sends, at the addresses the SuperKernels'
lock slots hold, with no stream-level wait between them and those SuperKernels. A run the
runtime refuses is printed with its message. Prints one line per package; exits 1 on any
disagreement."""
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
    attrs = {"schedule_mode": sk.get("schedule_mode", 0),
             "dyn_ubuf_size": max(0, sk.get("localMemorySize", 0))}
    expect(launch["attrs"] == attrs, "%s: launch attributes %s, the JSON's %s"
           % (who, launch["attrs"], attrs))
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


def check_op(who, launch, kjson, op, tensors, bound, ffts, arch, overflow):
    """One launch of an operator alone against its kernel's JSON, laid out as opbase does."""
    run = kjson.get("runInfo", {})
    attrs = {"schedule_mode": run.get("schedule_mode", kjson.get("schedule_mode", 0)),
             "dyn_ubuf_size": run.get("local_memory_size", kjson.get("localMemorySize", 0))}
    expect(launch["attrs"] == attrs, "%s: launch attributes %s, the kernel's %s"
           % (who, launch["attrs"], attrs))
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
    expect(len(slots) == k + 2 and launch["place_holder_data"].get(str(k)) ==
           run.get("tiling_data"), "%s: the slot after the workspace is not its tiling data" % who)
    expect(len(slots) == k + 2 and slots[k + 1] == overflow,
           "%s: the last slot is not the overflow address" % who)


def check_cpu(who, launch, kjson, op, tensors, bound):
    """One AICPU launch of an aicpu_tiling operator: its function, OpType, tensors, workspace."""
    expect(launch["function"] == kjson["kernelName"] and launch["op_type"] == op["type"],
           "%s: AICPU function %s of %s, the JSON's %s of %s" % (
               who, launch["function"], launch["op_type"], kjson["kernelName"], op["type"]))
    want = [bound.get(tensors[t]["name"]) for t in op["inputs"] + op["outputs"]]
    got = launch["slots"][:len(want)]
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:  # memory of the runtime's own
            expect("allocation" in launch["where"][i], "%s: slot %d is no memory" % (who, i))
        else:
            expect(g == w, "%s: slot %d holds %#x, not the bound %#x" % (who, i, g, w))
    sizes = [s for s in kjson.get("workspace", {}).get("size", []) if s > 0]
    expect(len(launch["slots"]) == len(want) + max(1, len(sizes)),
           "%s: %d slots, its tensors and workspace make %d" % (
               who, len(launch["slots"]), len(want) + max(1, len(sizes))))


def check_beside(name, program, calls, bound, kernel_json, lock_at):
    """The operators beside the cores, in graph order: each AICPU tiling kernel one AICPU launch,
    each prefetch one CMO prefetch per tensor (at the bound memory, of the tensor's size); in the
    fused run (lock_at: event -> the lock address the SuperKernels' slots hold) each waits
    (aclrtValueWait, value 1, ACL_STREAM_WAIT_VALUE_EQ) on the locks it receives before it runs
    and writes 1 (aclrtValueWrite) into those it sends after, all on its stream; op by op no lock
    is touched."""
    tensors = program["tensors"]
    kinds = ("aclrtValueWait", "aclrtValueWrite", "aclrtLaunchKernelWithHostArgs",
             "aclrtCmoAsync")
    got = [c for c in calls if c["fn"] in kinds]
    want, groups = [], []
    for i, o in enumerate(program["ops"]):
        if o["kind"] == "kernel":
            continue
        items = []
        if lock_at is not None:
            items += [("aclrtValueWait", lock_at[e], 1) for e in o["recv_events"] if e in lock_at]
        if o["kind"] == "prefetch":
            items += [("aclrtCmoAsync", bound[tensors[t]["name"]], tensors[t]["bytes"])
                      for t in o["inputs"]]
        else:
            items.append(("aclrtLaunchKernelWithHostArgs", kernel_json[i]["kernelName"], None))
        if lock_at is not None:
            items += [("aclrtValueWrite", lock_at[e], 1) for e in o["send_events"] if e in lock_at]
        groups.append((len(want), len(items)))
        want += items

    def key(c):
        if c["fn"] == "aclrtCmoAsync":
            return (c["fn"], c["address"], c["bytes"])
        if c["fn"] == "aclrtLaunchKernelWithHostArgs":
            return (c["fn"], c["function"], None)
        return (c["fn"], c["address"], c["value"])
    if not expect([key(c) for c in got] == want, "%s: beside the cores %s, expected %s"
                  % (name, [key(c) for c in got], want)):
        return
    for first, n in groups:
        expect(len({c["stream"] for c in got[first:first + n]}) == 1,
               "%s: one operator beside the cores on two streams" % name)
    expect(all(c.get("flag", 1) == 1 for c in got if c["fn"] == "aclrtValueWait") and
           all(c.get("type", 0) == 0 for c in got),
           "%s: a lock wait not ACL_STREAM_WAIT_VALUE_EQ, or a CMO not a prefetch" % name)


def lock_addresses(program, launches_by_step):
    """event -> the lock address the fused SuperKernel launches hold in its slots."""
    out = {}
    for st, launch in launches_by_step:
        if "segment" not in st:
            continue
        for a in program["segments"][st["segment"]]["args"]:
            if "lock" in a:
                v = launch["slots"][a["slot"]]
                expect(out.setdefault(a["lock"], v) == v,
                       "event %d has two lock addresses" % a["lock"])
    return out


def check_order(name, program, calls):
    """The fused launches keep the plan's order across streams: a step on one stream that reads
    what a step on another stream wrote waits, before its launch, for an event recorded on that
    stream after that step's launch; steps of different plan streams go to different streams.
    Between an operator beside the cores and a SuperKernel a lock orders them instead, and no
    stream waits for the other there (the SuperKernel spins on the lock inside its launch: such a
    wait would never end on a device)."""
    steps, ops = program["steps"], program["ops"]
    locks = set(program["locks"])

    def beside(st):
        return "op" in st and ops[st["op"]]["kind"] != "kernel"

    def locked(a, b):
        sa, sb = step_ops(steps[a]), step_ops(steps[b])
        return (beside(steps[a]) or beside(steps[b])) and any(
            e in locks and e in ops[y]["recv_events"]
            for x, y in [(x, y) for x in sa for y in sb] + [(y, x) for x in sa for y in sb]
            for e in ops[x]["send_events"])

    def step_ops(st):
        return program["segments"][st["segment"]]["ops"] if "segment" in st else [st["op"]]

    def plan_stream(st):
        return program["segments"][st["segment"]]["stream"] if "segment" in st \
            else ops[st["op"]]["stream"]
    launched, recorded, waited = [], {}, {}  # launch -> stream; event -> (stream, launches)
    # what each step runs: one launch, or a prefetch's CMO per tensor
    runs = ("aclrtLaunchKernelWithConfig", "aclrtLaunchKernelWithHostArgs", "aclrtCmoAsync")
    calls_of = [len(ops[st["op"]]["inputs"]) if "op" in st and ops[st["op"]]["kind"] == "prefetch"
                else 1 for st in steps]
    left = 0
    for c in calls:
        if c["fn"] in runs:
            if left == 0 and len(launched) < len(steps):
                left = calls_of[len(launched)]
                launched.append(c["stream"])
            left -= 1
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
                if locked(d, i):
                    expect(not any(s == launched[i] and r is not None and r[0] == launched[d]
                                   for k, lst in waited.items() for s, r in lst),
                           "%s: step %d waits on its stream for step %d, which a lock orders "
                           "(a deadlock on a device)" % (name, i, d))
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
    ffts, overflow = standin.log()["ffts"], standin.log()["overflow"]
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
            log = standin.log()
            expect(e.code == -6 and not log["launches"] and not log["cpu_launches"] and
                   not any(c["fn"] == "aclrtCmoAsync" for c in log["calls"]),
                   "%s: %s refused after launching, or not as unsupported (the stand-in: %s)"
                   % (name, what, standin.log()["errors"]))
            return None
        return standin.log()["launches"]

    def beside_said():
        n_tiling = sum(o["kind"] == "aicpu_tiling" for o in ops)
        n_prefetch = sum(o["kind"] == "prefetch" for o in ops)
        return "" if n_tiling + n_prefetch == 0 else \
            ", %d AICPU tiling launches and %d prefetches beside" % (n_tiling, n_prefetch)

    def check_cpu_launches(log, suffix):
        tiling = [i for i, o in enumerate(ops) if o["kind"] == "aicpu_tiling"]
        expect(len(log["cpu_launches"]) == len(tiling), "%s: %d AICPU launches for %d AICPU "
               "tiling operators" % (name, len(log["cpu_launches"]), len(tiling)))
        for i, launch in zip(tiling, log["cpu_launches"]):
            check_cpu(name + " " + ops[i]["name"] + suffix, launch, kernel_json[i], ops[i],
                      tensors, bound)

    launches = attempt("skf_run", pkg.run)
    if launches is not None:
        log = standin.log()
        steps = program["steps"]
        cores = [st for st in steps if "segment" in st or ops[st["op"]]["kind"] == "kernel"]
        expect(len(launches) == len(cores), "%s: fused %d launches, %d expected"
               % (name, len(launches), len(cores)))
        for st, launch in zip(cores, launches):
            if "segment" in st:
                s = pkg.segments[st["segment"]]
                check_superkernel(name + " " + s, launch, sk[s], bound, ffts, arch)
            else:
                i = st["op"]
                check_op(name + " " + ops[i]["name"], launch, kernel_json[i], ops[i], tensors,
                         bound, ffts, arch, overflow)
        check_cpu_launches(log, "")
        check_beside(name, program, log["calls"], bound, kernel_json,
                     lock_addresses(program, zip(cores, launches)))
        check_order(name, program, log["calls"])
        expect(pkg.stats["last_launches"] == len(launches), "%s: stats" % name)
        said.append("fused %d launches match %d SuperKernel JSONs and %d kernels%s" %
                    (len(launches), sum("segment" in s for s in steps),
                     len(cores) - sum("segment" in s for s in steps), beside_said()))
    launches = attempt("skf_run_unfused", pkg.run_unfused)
    if launches is not None:
        log = standin.log()
        kernels = [i for i, o in enumerate(ops) if o["kind"] == "kernel"]
        expect(len(launches) == len(kernels), "%s: op by op %d launches for %d operators"
               % (name, len(launches), len(kernels)))
        for i, launch in zip(kernels, launches):
            check_op(name + " " + ops[i]["name"] + " alone", launch, kernel_json[i], ops[i],
                     tensors, bound, ffts, arch, overflow)
        check_cpu_launches(log, " alone")
        check_beside(name, program, log["calls"], bound, kernel_json, None)
        expect(pkg.stats["last_launches"] == len(launches), "%s: stats op by op" % name)
        said.append("op by op %d launches match %d kernel JSONs%s" %
                    (len(launches), len(kernels), beside_said()))
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

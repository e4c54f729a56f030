#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc compile --sk-backend: the vendor's SuperKernel compiler (CANN's superkernel.super_kernel)
# as the NPU backend. A stand-in `superkernel` package on PYTHONPATH checks the kernel_info skc
# passes as the vendor reads it, records it, and writes what the vendor writes
# (kernel_meta/<kernel_name>.o, .json, <kernel_name>_<pid>_kernel.cpp, <kernel_name>_<pid>.log).
load helpers

OUT=static_kernel_compile_outputs

# mkgraph: two precompiled vector kernels on two streams in scope s, with event 7 between them
# inside the scope, and a third operator after them.
mkgraph() {
    npu_kernels g/kernels add mul
    cat >g/graph.yaml <<'EOF'
name: demo
npu_arch: dav-2201
soc_version: Ascend910B1
inputs: [{name: x, shape: [16], dtype: float16}]
scopes:
  s: "early-start=1:stream-fusion=1:compile-options=-g -O2"
ops:
  - {name: a, type: Add, stream_id: 1, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o}, inputs: [x], outputs: [{name: y, shape: [16], dtype: float16}], send_event_list: [7], scope: s}
  - {name: m, type: Mul, kernel: {json_path: kernels/mul.json, bin_path: kernels/mul.o}, inputs: [x], outputs: [{name: z, shape: [16], dtype: float16}], scope: s}
  - {name: c, type: Mul, kernel: {json_path: kernels/mul.json, bin_path: kernels/mul.o}, inputs: [z, y], outputs: [{name: w, shape: [16], dtype: float16}], recv_event_list: [7], scope: s}
EOF
}

# standin: the stand-in vendor package in ./py, with the op context of asc_op_compile_base it
# needs open (asc-devkit 1ea13f3b on: compile_op.py reads get_context().get_addition). SK_RECORD:
# where each call is appended as one JSON line; SK_COPY: where it keeps a copy of what it wrote;
# SK_FAIL=1: fails like a vendor error after writing its log; SK_BAD_NAME=1: writes metadata
# naming another binary.
standin() {
    mkdir -p py/superkernel py/asc_op_compile_base/common/context sk_copy
    : >py/superkernel/__init__.py
    for d in asc_op_compile_base asc_op_compile_base/common asc_op_compile_base/common/context; do
        : >"py/$d/__init__.py"
    done
    cat >py/asc_op_compile_base/common/context/op_context.py <<'PY'
"""Stand-in for asc_op_compile_base.common.context.op_context: a stack of open contexts."""
_contexts = []


class OpContext:
    def __init__(self, op_mode=None):
        self.op_mode = op_mode
        self._additional_params = {}

    def __enter__(self):
        _contexts.append(self)
        return self

    def __exit__(self, *exc):
        _contexts.pop()

    def get_addition(self, key):
        return self._additional_params.get(key)


def get_context():
    return _contexts[-1] if _contexts else None
PY
    cat >py/superkernel/super_kernel.py <<'PY'
"""Stand-in for CANN's superkernel.super_kernel: checks kernel_info as the vendor reads it."""
import hashlib
import json
import os

from asc_op_compile_base.common.context.op_context import get_context

OP_KEYS = {"bin_path", "json_path", "stream_id", "task_type", "send_event_list", "recv_event_list"}
OPTION_KEYS = {"func-align", "preload-code", "early-start", "stream-fusion", "debug-dcci-all",
               "debug-sync-all", "feed-sync-all", "profiling", "compile-options",
               "strict-scope-check", "dcci-before-kernel-start", "dcci-after-kernel-end",
               "dcci-disable-on-kernel", "split-mode", "debug-aic-num", "debug-aiv-num"}


def bad(why):
    raise ValueError("stand-in super_kernel: malformed kernel_info: " + why)


def check_op(i, op):
    if not isinstance(op, dict) or set(op) != OP_KEYS:
        bad(f"op_list[{i}] keys {sorted(op) if isinstance(op, dict) else op!r}")
    for key in ("bin_path", "json_path"):
        path = op[key]
        if not isinstance(path, str) or not os.path.isabs(path) or not os.path.isfile(path):
            bad(f"op_list[{i}].{key} {path!r} is not an absolute path to a file")
    with open(op["json_path"], encoding="utf-8") as f:
        json.load(f)
    if type(op["stream_id"]) is not int:
        bad(f"op_list[{i}].stream_id {op['stream_id']!r} is not an int")
    if op["task_type"] not in ("normal", "dynamic"):
        bad(f"op_list[{i}].task_type {op['task_type']!r}")
    for key in ("send_event_list", "recv_event_list"):
        if not isinstance(op[key], list) or any(type(e) is not int for e in op[key]):
            bad(f"op_list[{i}].{key} {op[key]!r} is not a list of int")


def check_options(text):
    if not isinstance(text, str):
        bad(f"super_kernel_options {text!r} is not a string")
    seen = set()
    for pair in (p.strip() for p in text.split(":") if p.strip()):
        key, _, value = pair.partition("=")
        if not value.strip() or key in seen or key not in OPTION_KEYS:
            bad(f"super_kernel_options pair {pair!r}")
        seen.add(key)


def compile(kernel_infos, called_kernel_name="ascendc_super_kernel_plus", impl_mode=""):
    # What CANN 9.0's JSON post-processing does first: without an open op context, an
    # AttributeError ('NoneType' object has no attribute 'get_addition').
    get_context().get_addition("_op_aicore_num")
    if not isinstance(kernel_infos, dict) or set(kernel_infos) != {"op_list", "super_kernel_options"}:
        bad(f"top-level {kernel_infos!r}")
    ops = kernel_infos["op_list"]
    if not isinstance(ops, list) or not ops:
        bad("op_list is not a non-empty list")
    for i, op in enumerate(ops):
        check_op(i, op)
    if ops[0]["recv_event_list"] or ops[-1]["send_event_list"]:
        bad("the first op receives or the last op sends an event")
    check_options(kernel_infos["super_kernel_options"])
    if not called_kernel_name.isidentifier():
        bad(f"kernel name {called_kernel_name!r}")
    with open(os.environ["SK_RECORD"], "a", encoding="utf-8") as f:
        dcci_disable = [json.load(open(op["json_path"], encoding="utf-8"))
                        .get("sub_operator_call_dcci_disable_on_kernel", False) for op in ops]
        f.write(json.dumps({"kernel_name": called_kernel_name, "cwd": os.getcwd(),
                            "kernel_info": kernel_infos, "dcci_disable": dcci_disable,
                            "op_mode": get_context().op_mode}) + "\n")
    meta = os.path.join(os.getcwd(), "kernel_meta")
    os.makedirs(meta, exist_ok=True)
    tag = f"{called_kernel_name}_{os.getpid()}"
    with open(os.path.join(meta, tag + ".log"), "w", encoding="utf-8") as f:
        f.write(f"stand-in vendor log of {called_kernel_name}\n")
    if os.environ.get("SK_FAIL") == "1":
        raise RuntimeError("[Super Kernel] current sub kernel type KERNEL_TYPE_X do not support!")
    binary = b"stand-in SuperKernel " + called_kernel_name.encode() + b"\n"
    for op in ops:
        with open(op["bin_path"], "rb") as f:
            binary += f.read()
    name = "other" if os.environ.get("SK_BAD_NAME") == "1" else called_kernel_name
    files = {
        called_kernel_name + ".o": binary,
        called_kernel_name + ".json": json.dumps({
            "binFileName": name, "binFileSuffix": ".o", "kernelName": called_kernel_name,
            "magic": "RT_DEV_BINARY_MAGIC_ELF", "sha256": hashlib.sha256(binary).hexdigest(),
        }, indent=2).encode(),
        tag + "_kernel.cpp": f"// stand-in source of {called_kernel_name}\n".encode(),
    }
    for fname, data in files.items():
        with open(os.path.join(meta, fname), "wb") as f:
            f.write(data)
        with open(os.path.join(os.environ["SK_COPY"], fname.replace(f"_{os.getpid()}", "")), "wb") as f:
            f.write(data)
PY
    export SK_RECORD=$PWD/record.jsonl SK_COPY=$PWD/sk_copy
}

# skc_cann ARGS...: skc with the stand-in importable and no bisheng anywhere on PATH.
skc_cann() {
    env PATH=/usr/bin:/bin PYTHONPATH="$PWD/py" "$SKC" "$@"
}

@test "the stand-in refuses a malformed kernel_info loudly (so the checks below can fail)" {
    standin
    mkgraph
    run env PYTHONPATH="$PWD/py" python3 -c '
from asc_op_compile_base.common.context.op_context import OpContext
from superkernel import super_kernel
import sys
op = {"bin_path": sys.argv[1], "json_path": sys.argv[2], "stream_id": 0, "task_type": "normal",
      "send_event_list": [], "recv_event_list": ["7"]}
with OpContext("static"):
    super_kernel.compile({"op_list": [op], "super_kernel_options": ""}, "k")' "$PWD/g/kernels/add.o" "$PWD/g/kernels/add.json"
    [ "$status" -ne 0 ]
    [[ "$output" == *"malformed kernel_info: op_list[0].recv_event_list ['7'] is not a list of int"* ]]
    [ ! -e record.jsonl ]
    # Called without an op context, it fails as CANN 9.0's compiler does.
    run env PYTHONPATH="$PWD/py" python3 -c '
from superkernel import super_kernel
super_kernel.compile({"op_list": [], "super_kernel_options": ""}, "k")'
    [ "$status" -ne 0 ]
    [[ "$output" == *"AttributeError: 'NoneType' object has no attribute 'get_addition'"* ]]
    [ ! -e record.jsonl ]
}

@test "--sk-backend cann: skc hands the vendor kernel_info, and packages what it wrote" {
    standin
    mkgraph
    run skc_cann compile g/graph.yaml --sk-backend cann
    [ "$status" -eq 0 ]
    [ -f "$OUT/demo_dav-2201.run" ]
    # One call, for segment s, with exactly this input.
    [ "$(wc -l <record.jsonl)" -eq 1 ]
    python3 - "$PWD" <<'PY'
import json, sys
w = sys.argv[1]
rec = json.loads(open(w + "/record.jsonl").read())
assert rec["kernel_name"] == "demo_s", rec
assert rec["op_mode"] == "static", rec  # the op context the op compiler opens around a compile
assert rec["cwd"].endswith("/cann/s") and "/.skc-build." in rec["cwd"], rec
def op(k, stream, send, recv):
    return {"bin_path": f"{w}/g/kernels/{k}.o", "json_path": f"{w}/g/kernels/{k}.json",
            "stream_id": stream, "task_type": "normal", "send_event_list": send, "recv_event_list": recv}
expected = {
    "op_list": [op("add", 1, [7], []), op("mul", 0, [], []), op("mul", 0, [], [7])],
    # func-align: the vendor's default on the NPU targets (the scope does not set it)
    "super_kernel_options": "func-align=512:preload-code=per-func:early-start=1:stream-fusion=1:"
        "debug-dcci-all=0:debug-sync-all=0:feed-sync-all=0:profiling=0:compile-options=-g,-O2:"
        "strict-scope-check=bypass:split-mode=4",
}
assert rec["kernel_info"] == expected, json.dumps(rec["kernel_info"], indent=1)
PY
    # The package holds the vendor's files under its names, byte for byte, and indexes them.
    sh "$OUT/demo_dav-2201.run" --noexec --extract=x >/dev/null
    sk=x/ascend910b/SuperKernel # Ascend910B1: CANN's ascend910b family
    cmp "$sk/demo_s.o" sk_copy/demo_s.o
    # The vendor's JSON, every field kept, with what CANN's runtime reads beside an indexed
    # kernel filled in (cann-conformance.md, "The JSON beside each kernel").
    python3 - "$sk/demo_s.json" sk_copy/demo_s.json <<'PY'
import json, sys
got, given = (json.load(open(p)) for p in sys.argv[1:])
assert {k: got[k] for k in given} == given, got
added = {k: got[k] for k in set(got) - set(given)}
assert added == {"localMemorySize": 0, "schedule_mode": 0,
                 "workspace": {"num": 0, "size": [], "type": []},
                 "platformInfo": {"cubeCoreCnt": 24, "vectorCoreCnt": 48}}, added
PY
    cmp "$sk/demo_s.cpp" sk_copy/demo_s_kernel.cpp
    [ "$(ls "$sk" | tr '\n' ' ')" = "demo_s.cpp demo_s.json demo_s.o " ]
    [ ! -e x/ascend910b1 ] # no SoC-named directory
    [ ! -e x/config/ascend910b1 ]
    [ ! -e x/ascend910b/Add ] # fused: no static kernel of its own
    # Indexed as CANN's runtime reads it: a staticList entry whose binPath (under the package)
    # names the vendor's object, with the vendor's kernel name; the stand-in's metadata gives no
    # blockDim, workspace or coreType, so the segment's blockDim, none and MIX.
    python3 - x <<'PY'
import json, os, sys
root = sys.argv[1]
index = json.load(open(root + "/config/ascend910b/binary_info_config.json"))
entry = {"binDesc": {"blockDim": 8, "kernelName": "demo_s", "workspace": []}, "coreType": 0,
         "binPath": "demo_dav-2201/ascend910b/SuperKernel/demo_s.o",
         "simplifiedKey": "SuperKernel/demo_dav-2201/s"}
assert index == {"SuperKernel": {"dynamicRankSupport": True, "simplifiedKeyMode": 0,
                                 "staticList": [entry]}}, index
assert os.path.isfile(os.path.join(root, entry["binPath"].split("/", 1)[1]))
PY
    # The compile log has the command, the backend chosen and the vendor's own log.
    log="$OUT/demo_dav-2201_compile_log/demo_dav-2201_compile_succ.log"
    grep -q "^SuperKernel backend: cann ($PWD/py/superkernel/super_kernel.py)$" "$log"
    grep -q '^\$ python3 -B skforge_cann_driver.py cann/s/kernel_info.json demo_s Ascend910B1 cann/s$' "$log"
    grep -q "stand-in vendor log of demo_s" "$log"
    # The same inputs give the same package.
    skc_cann compile g/graph.yaml --sk-backend cann -o again --no-cache >/dev/null
    cmp "$OUT/demo_dav-2201.run" again/demo_dav-2201.run
}

@test "two segments: one vendor call each, in parallel, both packaged and indexed" {
    standin
    npu_kernels g/kernels add mul
    cat >g/graph.yaml <<'EOF'
name: two
npu_arch: dav-3510
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o}, inputs: [x], outputs: [{name: y, shape: [16], dtype: float16}], scope: first}
  - {name: b, type: Mul, kernel: {json_path: kernels/mul.json, bin_path: kernels/mul.o}, inputs: [y], outputs: [{name: z, shape: [16], dtype: float16}], scope: first}
  - {name: c, type: Add, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o}, inputs: [z], outputs: [{name: w, shape: [16], dtype: float16}], scope: second}
  - {name: d, type: Mul, kernel: {json_path: kernels/mul.json, bin_path: kernels/mul.o}, inputs: [w], outputs: [{name: v, shape: [16], dtype: float16}], scope: second}
  - {name: e, type: Add, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o}, inputs: [v], outputs: [{name: u, shape: [16], dtype: float16}]}
EOF
    skc_cann compile g/graph.yaml --sk-backend cann --jobs 2 >/dev/null
    # No soc_version: dav-3510's default SoC, Ascend950PR_9599, is what the vendor is told.
    python3 - record.jsonl "$OUT/two_dav-3510_compile_log/two_dav-3510_compile_succ.log" <<'PY'
import json, sys
calls = sorted(json.loads(line)["kernel_name"] for line in open(sys.argv[1]))
assert calls == ["two_first", "two_second"], calls
log = open(sys.argv[2]).read()
for seg in ("first", "second"):
    cmd = f"$ python3 -B skforge_cann_driver.py cann/{seg}/kernel_info.json two_{seg} Ascend950PR_9599 cann/{seg}\n"
    assert cmd in log, cmd
PY
    run "$SKC" inspect "$OUT/two_dav-3510.run" --list
    [[ "$output" == *" ascend950/SuperKernel/two_first.o"* ]]
    [[ "$output" == *" ascend950/SuperKernel/two_second.json"* ]]
    [[ "$output" == *" ascend950/Add/add.o"* ]] # e, in no scope
    sh "$OUT/two_dav-3510.run" --noexec --extract=x >/dev/null
    python3 - x <<'PY'
import json, os, sys
root = sys.argv[1]
index = json.load(open(root + "/config/ascend950/binary_info_config.json"))
assert sorted(index) == ["Add", "SuperKernel"], sorted(index)
def entry(block, kernel, core, path, key):
    return {"binDesc": {"blockDim": block, "kernelName": kernel, "workspace": []},
            "coreType": core, "binPath": "two_dav-3510/ascend950/" + path, "simplifiedKey": key}
assert index["SuperKernel"] == {"dynamicRankSupport": True, "simplifiedKeyMode": 0, "staticList": [
    entry(8, "two_first", 0, "SuperKernel/two_first.o", "SuperKernel/two_dav-3510/first"),
    entry(8, "two_second", 0, "SuperKernel/two_second.o", "SuperKernel/two_dav-3510/second")]}, index
# e's kernel (AIV only: coreType 2), once per key of each lookup path and determinism mode.
adds = index["Add"]["staticList"]
assert len(adds) == 12, adds
for e in adds:
    assert {k: v for k, v in e.items() if k != "simplifiedKey"} == \
        {k: v for k, v in entry(8, "add_k", 2, "Add/add.o", "").items() if k != "simplifiedKey"}, e
    assert e["simplifiedKey"].startswith("Add/"), e
assert len({e["simplifiedKey"] for e in adds}) == 12, adds
for op in index.values():
    for e in op["staticList"]:
        assert os.path.isfile(os.path.join(root, e["binPath"].split("/", 1)[1])), e
PY
}

@test "--sk-backend auto picks cann only when python3 can import superkernel" {
    standin
    mkgraph
    run skc_cann compile g/graph.yaml
    [ "$status" -eq 0 ]
    [ -f record.jsonl ]
    grep -q "^SuperKernel backend: cann" "$OUT/demo_dav-2201_compile_log/demo_dav-2201_compile_succ.log"
    # Not importable: skforge's generator, which needs bisheng (absent here).
    rm record.jsonl
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sk-backend auto
    [ "$status" -eq 1 ]
    [[ "$output" == *"needs the CANN compiler 'bisheng' on PATH"* ]]
    grep -q "SuperKernel backend: skforge (python3 cannot import superkernel)" "$OUT/demo_dav-2201_compile_error.log"
    [ ! -e record.jsonl ]
    # A superkernel whose import fails counts as not importable.
    mkdir -p broken/superkernel
    : >broken/superkernel/__init__.py
    echo 'raise ImportError("No module named asc_op_compile_base")' >broken/superkernel/super_kernel.py
    run env PATH=/usr/bin:/bin PYTHONPATH="$PWD/broken" "$SKC" compile g/graph.yaml
    [ "$status" -eq 1 ]
    [[ "$output" == *"'bisheng' on PATH"* ]]
    # --sk-backend skforge never asks python.
    run env PATH=/usr/bin:/bin PYTHONPATH="$PWD/py" "$SKC" compile g/graph.yaml --sk-backend skforge
    [ "$status" -eq 1 ]
    [[ "$output" == *"'bisheng' on PATH"* ]]
    [ ! -e record.jsonl ]
}

@test "--sk-backend cann without the vendor's compiler fails and says why" {
    mkgraph
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sk-backend cann
    [ "$status" -eq 1 ]
    [[ "$output" == *"python3 cannot import the vendor's SuperKernel compiler"* ]]
    [[ "$output" == *"No module named 'superkernel'"* ]]
    grep -q "No module named 'superkernel'" "$OUT/demo_dav-2201_compile_error.log"
    [ ! -e "$OUT/demo_dav-2201.run" ]
}

@test "a failing vendor compile lands in the error log with its command and log, no .run" {
    standin
    mkgraph
    skc_cann compile g/graph.yaml --sk-backend cann >/dev/null
    [ -f "$OUT/demo_dav-2201.run" ]
    run env SK_FAIL=1 PATH=/usr/bin:/bin PYTHONPATH="$PWD/py" "$SKC" compile g/graph.yaml --sk-backend cann --no-cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"building SuperKernel s (the vendor's super_kernel.compile) failed (exit 1)"* ]]
    [[ "$output" == *"demo_dav-2201_compile_error.log"* ]]
    errlog="$OUT/demo_dav-2201_compile_error.log"
    grep -q "current sub kernel type KERNEL_TYPE_X do not support" "$errlog"
    grep -q "python3 -B skforge_cann_driver.py cann/s/kernel_info.json demo_s Ascend910B1 cann/s" "$errlog"
    grep -q "stand-in vendor log of demo_s" "$errlog"
    [ ! -e "$OUT/demo_dav-2201.run" ]
    [ ! -e "$OUT/demo_dav-2201_compile_log" ]
    [ -z "$(ls -A "$OUT" | grep '^\.skc-build')" ]
}

@test "vendor metadata that does not name its binary is refused" {
    standin
    mkgraph
    run env SK_BAD_NAME=1 PATH=/usr/bin:/bin PYTHONPATH="$PWD/py" "$SKC" compile g/graph.yaml --sk-backend cann
    [ "$status" -eq 1 ]
    [[ "$output" == *"kernel_meta/demo_s.json for SuperKernel s does not name demo_s as binFileName"* ]]
    [ ! -e "$OUT/demo_dav-2201.run" ]
}

@test "the vendor compiler is in the cache key" {
    standin
    mkgraph
    skc_cann compile g/graph.yaml --sk-backend cann >/dev/null
    run skc_cann compile g/graph.yaml --sk-backend cann
    [[ "$output" == *"cache hit"* ]]
    echo "# upgraded" >>py/superkernel/super_kernel.py
    run skc_cann compile g/graph.yaml --sk-backend cann
    [[ "$output" == *"cache miss"* ]]
    [ "$(wc -l <record.jsonl)" -eq 2 ]
}

@test "--sources-only writes each segment's kernel_info and the driver, which run the vendor later" {
    mkgraph
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 0 ]
    src=$OUT/demo_dav-2201_sources/ascend910b/SuperKernel
    [ -f "$src/s.cpp" ]
    [ -f "$src/skforge_cann_driver.py" ]
    # The same input a --sk-backend cann build hands the vendor.
    standin
    skc_cann compile g/graph.yaml --sk-backend cann >/dev/null
    python3 - "$src/cann/s/kernel_info.json" record.jsonl <<'PY'
import json, sys
written = json.load(open(sys.argv[1]))
passed = json.loads(open(sys.argv[2]).read())["kernel_info"]
assert written == passed, (written, passed)
PY
    # Run as the build runs it, from the SuperKernel directory: the vendor writes beside it.
    rm record.jsonl
    (cd "$src" && PYTHONPATH="$W/py" python3 -B skforge_cann_driver.py cann/s/kernel_info.json demo_s Ascend910B1 cann/s)
    [ "$(wc -l <record.jsonl)" -eq 1 ]
    cmp "$src/cann/s/kernel_meta/demo_s.o" sk_copy/demo_s.o
    grep -q '"op_mode": "static"' record.jsonl
    # A dynamic sub-kernel: the op context is a dynamic one, as the vendor's ST opens it.
    rm -r record.jsonl "$src/cann/s/kernel_meta"
    python3 - "$src/cann/s/kernel_info.json" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
info["op_list"][1]["task_type"] = "dynamic"
json.dump(info, open(sys.argv[1], "w"))
PY
    (cd "$src" && PYTHONPATH="$W/py" python3 -B skforge_cann_driver.py cann/s/kernel_info.json demo_s Ascend910B1 cann/s)
    grep -q '"op_mode": "dynamic"' record.jsonl
}

@test "--sources-only: a segment the vendor cannot be given is logged, not fatal" {
    mkgraph
    sed -i 's/compile-options=-g -O2/compile-options=-Wl,--gc-sections/' g/graph.yaml
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only
    [ "$status" -eq 0 ]
    [ -f "$OUT/demo_dav-2201_sources/ascend910b/SuperKernel/s.cpp" ]
    [ ! -e "$OUT/demo_dav-2201_sources/ascend910b/SuperKernel/cann/s/kernel_info.json" ]
    grep -q "no kernel_info for the vendor's compiler (SuperKernel s): compile-options word '-Wl,--gc-sections'" \
        "$OUT/demo_dav-2201_compile_log/demo_dav-2201_compile_succ.log"
    # The vendor backend itself refuses it.
    standin
    run skc_cann compile g/graph.yaml --sk-backend cann
    [ "$status" -eq 1 ]
    [[ "$output" == *"compile-options word '-Wl,--gc-sections' holds ',' or ':'"* ]]
    [ ! -e record.jsonl ]
}

@test "dcci-disable-on-kernel: 9.0 hands the vendor JSONs that say so, 8.5 refuses the option" {
    # graph-autofusion e1cbeb9b takes a sub-kernel's dcci-disable from its JSON only
    # (sub_operator_call_dcci_disable_on_kernel, which asc-devkit 1ea13f3b's op compiler sets
    # from the scope's option); asc-devkit eeb99217's option parser refuses the key.
    mkgraph
    sed -i 's/early-start=1:stream-fusion=1/early-start=1:stream-fusion=1:dcci-disable-on-kernel=Mul/' g/graph.yaml
    standin
    skc_cann compile g/graph.yaml --sk-backend cann --cann-version 9.0 >/dev/null
    python3 - record.jsonl <<'PY'
import json, sys
rec = json.loads(open(sys.argv[1]).read())
ops = rec["kernel_info"]["op_list"]
assert rec["dcci_disable"] == [False, True, True], rec["dcci_disable"]
assert ops[0]["json_path"].endswith("/g/kernels/add.json"), ops[0]
assert ops[1]["json_path"].endswith("/cann/s/sub_kernel_1.json"), ops[1]
assert ops[2]["json_path"].endswith("/cann/s/sub_kernel_2.json"), ops[2]
assert "dcci-disable-on-kernel=Mul" in rec["kernel_info"]["super_kernel_options"]
PY
    # --sources-only writes the copies beside the kernel_info it names them in.
    run env PATH=/usr/bin:/bin "$SKC" compile g/graph.yaml --sources-only --cann-version 9.0
    [ "$status" -eq 0 ]
    src=$OUT/demo_dav-2201_sources/ascend910b/SuperKernel/cann/s
    [ -f "$src/sub_kernel_1.json" ] && [ -f "$src/sub_kernel_2.json" ] && [ ! -e "$src/sub_kernel_0.json" ]
    python3 -c 'import json,sys; i=json.load(open(sys.argv[1])); p=i["op_list"][1]["json_path"]; assert p == "sub_kernel_1.json", p' "$src/kernel_info.json"
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["sub_operator_call_dcci_disable_on_kernel"] is True' "$src/sub_kernel_1.json"
    # The driver run later, from the moved sources directory, hands the vendor the copy.
    rm record.jsonl
    (cd "$src/../.." && PYTHONPATH="$W/py" python3 -B skforge_cann_driver.py cann/s/kernel_info.json demo_s Ascend910B1 cann/s)
    python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read()); assert r["dcci_disable"] == [False, True, True], r' record.jsonl
    # 8.5: the vendor would refuse the option; skc says so before calling it.
    rm -f record.jsonl
    run skc_cann compile g/graph.yaml --sk-backend cann --cann-version 8.5
    [ "$status" -eq 1 ]
    [[ "$output" == *"SuperKernel 's' has dcci-disable-on-kernel=Mul: CANN 8.5's SuperKernel compiler refuses the option"* ]]
    [ ! -e record.jsonl ]
}

@test "--sk-backend: cann on the host target and unknown values are usage errors" {
    mkgraph
    run "$SKC" compile g/graph.yaml --sk-backend cann --npu-arch host
    [ "$status" -eq 2 ]
    [[ "$output" == *"--sk-backend cann builds NPU SuperKernels"* ]]
    run "$SKC" compile g/graph.yaml --sk-backend vendor
    [ "$status" -eq 2 ]
    [[ "$output" == *"--sk-backend 'vendor': expected auto, cann or skforge"* ]]
}

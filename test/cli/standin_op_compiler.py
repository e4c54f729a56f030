#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for CANN's op_compiler, written from its documented interface (CANN's op_compiler
reference; the options TorchAir's static_kernel.py, torch_npu's npu_static_kernel.py and
vLLM-Ascend pass), for the front end's tests (op_compiler.bats). It records every call and
writes what op_compiler writes: one makeself `.run` named static_kernel_<datetime>_<pid>.run in
CANN's layout (<name>/<soc dir>/<OpType>/static_kernel_*.{o,json},
<name>/config/<soc dir>/binary_info_config.json), one static kernel per op JSON of -p, keyed as
opbase's two lookup paths key a call of ND tensors (share/doc/cann-conformance.md).

Environment:
  STANDIN_LOG     each call appended as one JSON line {"argv": [...], "ops": [file names]}
  STANDIN_DELAY   seconds of "compiling" per op JSON (a float; default 0)
  STANDIN_FAIL    exit with this status after writing a partial file into -o
  STANDIN_HOLD    a path: "compiling" goes on until it exists (a test's gate, polled, at most
                  60 s)
  STANDIN_MARK    a file every script inside the .run touches when run (the tests check that
                  nothing executes them)
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DTYPES = {"float": 0, "float32": 0, "float16": 1, "int8": 2, "int32": 3, "uint8": 4,
          "int16": 6, "int64": 9, "bool": 12, "bfloat16": 27}
FORMATS = {"NCHW": 0, "NHWC": 1, "ND": 2}
VALUED = {"-p": "params", "--op_params_dir": "params", "-k": "kernel", "--kernel_name": "kernel",
          "-v": "soc", "--soc_version": "soc", "-o": "output", "--output": "output",
          "-m": "mode", "--compile_mode": "mode", "-f": "follow",
          "--follow_op_params_jit": "follow", "-j": "job", "--job": "job", "-l": "log",
          "--log": "log", "--super_kernel_options": "sk", "--super_kernel_debug_options": "skd"}
FLAGS = {"--enable_super_kernel", "--count", "-h", "--help"}


def parse(argv):
    opts = {}
    i = 0
    while i < len(argv):
        w = argv[i]
        name, eq, value = w.partition("=")
        if name in VALUED and (eq or i + 1 < len(argv)):
            opts[VALUED[name]] = value if eq else argv[i + 1]
            i += 1 if eq else 2
        elif w in FLAGS:
            opts[w] = True
            i += 1
        else:
            print(f"op_compiler: error: unknown option '{w}'", file=sys.stderr)
            sys.exit(1)
    return opts


def soc_dir(soc):
    s = soc.lower()
    if s.startswith("ascend910_93"):
        return "ascend910_93"
    if s.startswith("ascend910b"):
        return "ascend910b"
    if s.startswith("ascend950"):
        return "ascend950"
    print(f"op_compiler: error: unsupported soc_version '{soc}'", file=sys.stderr)
    sys.exit(1)


def strides(dims):
    out, step = [], 1
    for d in reversed(dims):
        out.insert(0, step)
        step *= d
    return out


def hexes(values):
    return ",".join(format(v, "x") for v in values)


def keys(op):
    """The simplifiedKeys opbase builds for a call of `op` (ND-like tensors, no attributes):
    the aclnn executor's (p=0, with strides and offset) and the op-kernel engine's (p=1, p=2)."""
    tensors = [t for t in op.get("inputs", []) + op.get("outputs", []) if t]
    def seg(t, executor):
        dt = DTYPES[t["dtype"]]
        fmt = FORMATS.get(t.get("format", "ND"), 2)
        dims = t["shape"]
        if executor:
            return f"{dt:x},2,({hexes(dims)}),({hexes(strides(dims))}),0"
        return f"{dt:x},{fmt:x},({hexes(dims)}),(),0"
    out = ["%s/d=0,p=0/%s" % (op["op_type"], "/".join(seg(t, True) for t in tensors))]
    for p in (1, 2):
        out.append("%s/d=0,p=%d/%s" % (op["op_type"], p, "/".join(seg(t, False) for t in tensors)))
    return out


def main():
    opts = parse(sys.argv[1:])
    params = Path(opts.get("params", "."))
    ops = sorted(p for p in params.glob("*.json")) if "params" in opts else []
    log = os.environ.get("STANDIN_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "ops": [p.name for p in ops]}) + "\n")
    if "--count" in opts:
        print(len(ops))
        return 0
    if "soc" not in opts or "params" not in opts:
        print("op_compiler: error: -p and -v are required", file=sys.stderr)
        return 1
    time.sleep(float(os.environ.get("STANDIN_DELAY", "0")) * len(ops))
    hold = os.environ.get("STANDIN_HOLD")
    for _ in range(1200):
        if not hold or os.path.exists(hold):
            break
        time.sleep(0.05)
    output = opts.get("output", ".")
    stamp = time.strftime("%Y%m%d%H%M%S") + "%06d" % (time.time_ns() // 1000 % 1000000)
    name = f"static_kernel_{stamp}_{os.getpid()}"
    if output.endswith(".run"):
        run_file = Path(output)
    else:
        Path(output).mkdir(parents=True, exist_ok=True)
        run_file = Path(output) / f"{name}.run"
    if os.environ.get("STANDIN_FAIL"):
        run_file.with_suffix(".partial").write_text("half a package\n")
        print("op_compiler: error: compile failed (stand-in)", file=sys.stderr)
        return int(os.environ["STANDIN_FAIL"])
    sdir = soc_dir(opts["soc"])
    mark = os.environ.get("STANDIN_MARK", "/nonexistent/EXECUTED")
    with tempfile.TemporaryDirectory() as tmp:
        pkg = Path(tmp) / name
        (pkg / "config" / sdir).mkdir(parents=True)
        index = {}
        for p in ops:
            op = json.loads(p.read_text())
            digest = hashlib.sha256(json.dumps(op, sort_keys=True).encode()).hexdigest()[:12]
            kernel = f"static_kernel_{op['op_type']}_{digest}"
            kdir = pkg / sdir / op["op_type"]
            kdir.mkdir(parents=True, exist_ok=True)
            (kdir / f"{kernel}.o").write_bytes(hashlib.sha256(digest.encode()).digest() * 64)
            (kdir / f"{kernel}.json").write_text(json.dumps(
                {"kernelName": kernel, "coreType": "VectorCore", "blockDim": 8,
                 "runInfo": {"blockDim": 8}}) + "\n")
            entries = index.setdefault(op["op_type"], {"staticList": []})["staticList"]
            for key in keys(op):
                # coreType 2: VectorCore (opbase indv_types.h), as for an AIV_ONLY kernel.
                entries.append({"simplifiedKey": key, "coreType": 2,
                                "binDesc": {"blockDim": 8, "kernelName": kernel},
                                "binPath": f"{name}/{sdir}/{op['op_type']}/{kernel}.o"})
        (pkg / "config" / sdir / "binary_info_config.json").write_text(json.dumps(index) + "\n")
        for script in (Path(tmp) / "install.sh", pkg / "uninstall.sh"):
            script.write_text(f"#!/bin/sh\ntouch '{mark}'\n")
            script.chmod(0o755)
        subprocess.run(["makeself", "--sha256", tmp, str(run_file), "STATIC KERNEL RUN PACKAGE",
                        "./install.sh"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    print(f"op_compiler: generated {run_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""skforge.runtime on installed host packages: python3 run_examples.py INSTALL_PATH PACKAGE...

Runs each package fused and op by op on memory of three kinds (bytearray, ctypes buffer through
its address, an object with data_ptr()), compares every tensor the runs write bitwise after the
first run, launches every SuperKernel alone, and checks the refusals the module passes on.
Prints one line per package with the launch counts; exits 1 on any disagreement."""
import ctypes
import random
import struct
import sys

import skforge.runtime as skr


class Tensorish:
    """What torch tensors offer the binding: data_ptr()."""

    def __init__(self, nbytes):
        self.buf = (ctypes.c_char * max(nbytes, 1))()

    def data_ptr(self):
        return ctypes.addressof(self.buf)

    def bytes(self):
        return bytes(self.buf)


def inputs(t, rng):
    """Exact small values for an input tensor, as bytes."""
    n = t.nbytes
    if t.dtype == "float32":
        return struct.pack("<%df" % (n // 4), *[rng.randrange(-32, 32) / 32 for _ in range(n // 4)])
    if t.dtype in ("float16", "bfloat16"):
        fmt = "<%de" % (n // 2)
        if t.dtype == "float16":
            return struct.pack(fmt, *[rng.randrange(-32, 32) / 32 for _ in range(n // 2)])
        vals = struct.pack("<%df" % (n // 2), *[rng.randrange(-32, 32) / 32 for _ in range(n // 2)])
        return b"".join(vals[i + 2:i + 4] for i in range(0, len(vals), 4))
    return bytes(rng.randrange(2) if i % 8 == 0 else 0 for i in range(n))


def run(root, name):
    failures = []
    rng = random.Random(name)
    with skr.open(root, name) as pkg:
        assert pkg.device.startswith("host:"), pkg.device
        data = {t.name: inputs(t, rng) for t in pkg.tensors if t.role == "input"}
        fused = {t.name: bytearray(data.get(t.name, bytes(t.nbytes))) for t in pkg.tensors}
        for t in pkg.tensors:
            pkg.bind(t.name, fused[t.name])
        pkg.run()
        fused_launches = pkg.stats["last_launches"]
        unfused = {t.name: Tensorish(t.nbytes) for t in pkg.tensors}
        for t in pkg.tensors:
            ctypes.memmove(unfused[t.name].buf, bytes(fused[t.name]) if t.role == "input" else bytes(t.nbytes), t.nbytes)
            pkg.bind(t.name, unfused[t.name] if len(t.name) % 2 else unfused[t.name].data_ptr())
        pkg.run_unfused()
        unfused_launches = pkg.stats["last_launches"]
        written = [t for t in pkg.tensors if t.role != "input"]
        for t in written:
            if bytes(fused[t.name]) != unfused[t.name].bytes()[:t.nbytes]:
                failures.append("%s: %s differs fused vs op by op after the first run" % (name, t.name))
        for seg in pkg.segments:
            pkg.run_segment(seg)  # everything is bound: one launch
            if pkg.stats["last_launches"] != 1:
                failures.append("%s: %s alone made %d launches" % (name, seg, pkg.stats["last_launches"]))
        # Refusals reach Python as skforge.runtime.Error with the library's message.
        for bad, code, words in ((lambda: pkg.bind("no such tensor", 0), -2, "has no tensor 'no such tensor'"),
                                 (lambda: pkg.run_segment("nothere"), -2, "has no SuperKernel 'nothere'")):
            try:
                bad()
                failures.append("%s: no refusal" % name)
            except skr.Error as e:
                if e.code != code or words not in str(e):
                    failures.append("%s: refusal %d %s" % (name, e.code, e))
        if pkg.tensors:
            t0 = next(t for t in pkg.tensors if t.role == "input")
            pkg.bind(t0.name, None)
            try:
                pkg.run()
                failures.append("%s: ran with %s unbound" % (name, t0.name))
            except skr.Error as e:
                if e.code != -3 or t0.name not in str(e):
                    failures.append("%s: unbound refusal: %s" % (name, e))
            try:
                pkg.bind(t0.name, bytes(t0.nbytes))
                failures.append("%s: bound read-only bytes" % name)
            except TypeError:
                pass
        print("%s: %s, %d tensors, %d SuperKernels: fused %d launches, op by op %d launches, "
              "%d tensors compared" % (name, pkg.device, len(pkg.tensors), len(pkg.segments),
                                       fused_launches, unfused_launches, len(written)))
    try:
        pkg.run()
        failures.append("%s: a closed package ran" % name)
    except skr.Error as e:
        if "closed" not in str(e):
            failures.append("%s: closed: %s" % (name, e))
    return failures


def main():
    root, names = sys.argv[1], sys.argv[2:]
    print("skforge.runtime over %s, version %s" % (skr.library, skr.version()))
    failures = [f for n in names for f in run(root, n)]
    try:
        skr.open(root, names[0], device="gpu")
        failures.append("device 'gpu' was accepted")
    except skr.Error as e:
        if e.code != -1 or "device 'gpu'" not in str(e):
            failures.append("bad device: %s" % e)
    for f in failures:
        print("run_examples.py: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

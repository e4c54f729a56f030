#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gen_kernel_trees.py W N K: package trees W/t1..W/tN for the installer benchmarks, package pI
with K static kernels of Add (4 KiB random objects and their JSON) and an index whose keys are
distinct across packages (Add/d=0,p=0/pI/<k>)."""
import json
import os
import sys

w, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for p in range(1, n + 1):
    t, name = f"{w}/t{p}", f"p{p}"
    os.makedirs(f"{t}/ascend910b/Add")
    os.makedirs(f"{t}/config/ascend910b")
    entries = []
    for i in range(k):
        with open(f"{t}/ascend910b/Add/k{i}.o", "wb") as f:
            f.write(os.urandom(4096))
        with open(f"{t}/ascend910b/Add/k{i}.json", "w") as f:
            f.write('{"blockDim": 8, "kernelName": "k%d"}\n' % i)
        entries.append({"binDesc": {"blockDim": 8, "kernelName": f"k{i}", "workspace": [64]},
                        "binPath": f"{name}/ascend910b/Add/k{i}.o", "coreType": 2,
                        "simplifiedKey": f"Add/d=0,p=0/{name}/{i:x}"})
    with open(f"{t}/config/ascend910b/binary_info_config.json", "w") as f:
        f.write(json.dumps({"Add": {"staticList": entries}}, indent=2, sort_keys=True) + "\n")

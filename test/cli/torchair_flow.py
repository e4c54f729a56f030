#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""TorchAir's static-kernel client flow without torch, as Ascend/torchair runs it
(python/torchair/_acl_concrete_graph/static_kernel.py: _install_run_packages,
save_uninstall_info, uninstall_static_kernel; nothing copied):

  torchair_flow.py install DIR STATE   every DIR/*.run executed with no arguments (skipping one
                                       whose SHA-256 was installed before), then its uninstall.sh
                                       found by the glob */opp/static_kernel/ai_core/<stem>/
                                       uninstall.sh under $ASCEND_HOME_PATH/.. and recorded
  torchair_flow.py uninstall STATE [N] the recorded uninstall.sh scripts executed in the order
                                       they were recorded, with no arguments (TorchAir runs them
                                       all at exit; N stops after N so a test can look between)

STATE is a JSON file standing for the process's _installed_run_pkgs and _uninstall_paths.
A failed install or uninstall is reported on stderr and makes the exit status 1 (TorchAir only
logs it; the tests want to know).
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path


def load(state):
    if state.exists():
        return json.loads(state.read_text())
    return {"installed": [], "uninstall": []}


def save_uninstall_info(stem, s):
    root = Path(os.environ["ASCEND_HOME_PATH"]).parent
    pattern = f"*/opp/static_kernel/ai_core/{stem}/uninstall.sh"
    match = next(root.glob(pattern), None)
    if match is None:
        print(f"can not find uninstall path, pattern: {pattern}", file=sys.stderr)
        return False
    s["uninstall"].append(str(match))
    return True


def install(directory, state):
    s = load(state)
    ok = True
    for run_pkg in Path(directory).glob("*.run"):
        digest = hashlib.sha256(run_pkg.resolve().read_bytes()).hexdigest()
        if digest in s["installed"]:
            continue
        try:
            subprocess.run([str(run_pkg)], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as e:
            print(f"{run_pkg.name} install failed, msg: {e.stderr}", file=sys.stderr)
            ok = False
            continue
        ok = save_uninstall_info(run_pkg.name[:-4], s) and ok
        s["installed"].append(digest)
    state.write_text(json.dumps(s))
    return ok


def uninstall(state, count):
    s = load(state)
    ok = True
    todo = s["uninstall"] if count is None else s["uninstall"][:count]
    for script in todo:
        try:
            subprocess.run([script], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as e:
            print(f"{script} uninstall failed, msg:\n{e.stderr}", file=sys.stderr)
            ok = False
    s["uninstall"] = s["uninstall"][len(todo):]
    state.write_text(json.dumps(s))
    return ok


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "install":
        return 0 if install(sys.argv[2], Path(sys.argv[3])) else 1
    if len(sys.argv) in (3, 4) and sys.argv[1] == "uninstall":
        count = int(sys.argv[3]) if len(sys.argv) == 4 else None
        return 0 if uninstall(Path(sys.argv[2]), count) else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())

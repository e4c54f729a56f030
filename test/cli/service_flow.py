#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A serving process on an Ascend host, without torch, for holders.bats:

  service_flow.py EXIT DIR WORK   installs every DIR/*.run as TorchAir does (torchair_flow.py:
                                  executed with no arguments, by this process), writes WORK/ready
                                  (its pid), waits for WORK/stop (bounded), then exits as EXIT says

EXIT is how the engine leaves:
  torchair   runs each recorded uninstall.sh (found by TorchAir's glob), then exits
  vllm       vLLM-Ascend's NPUWorker.uninstall_static_kernel: a non-blocking flock of
             $ASCEND_HOME_PATH/opp/static_kernel/uninstall.lock, the top-level
             ai_core/uninstall.sh started with bash in a new session, output discarded; writes its
             pid to WORK/detached and exits at once
  helper     skforge.kernels.release_all() (python/skforge on PYTHONPATH), then exits

$SERVICE_SH (e.g. "busybox sh"), when set, is the shell every .run and uninstall.sh is executed
with, instead of its #!/bin/sh line.
"""
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchair_flow  # noqa: E402


def wait_for(path, seconds=120):
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            sys.exit(f"service {os.getpid()}: {path} did not appear in {seconds} s")
        time.sleep(0.02)


def install(directory, state, shell):
    """torchair_flow.install, each .run executed by `shell`."""
    if not shell:
        return torchair_flow.install(directory, state)
    s = torchair_flow.load(state)
    ok = True
    for run_pkg in Path(directory).glob("*.run"):
        result = subprocess.run(shell + [str(run_pkg)], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{run_pkg.name} install failed, msg: {result.stderr}", file=sys.stderr)
            ok = False
            continue
        ok = torchair_flow.save_uninstall_info(run_pkg.name[:-4], s) and ok
        s["installed"].append(hashlib.sha256(run_pkg.read_bytes()).hexdigest())
    state.write_text(json.dumps(s))
    return ok


def uninstall(state, shell):
    """torchair_flow.uninstall, each uninstall.sh executed by `shell`."""
    if not shell:
        return torchair_flow.uninstall(state, None)
    ok = True
    for script in torchair_flow.load(state)["uninstall"]:
        result = subprocess.run(shell + [script], capture_output=True, text=True)
        if result.returncode != 0:
            print(f"{script} uninstall failed, msg:\n{result.stderr}", file=sys.stderr)
            ok = False
    return ok


def vllm_exit(work, shell):
    static_kernel = os.path.join(os.environ["ASCEND_HOME_PATH"], "opp/static_kernel")
    script = os.path.join(static_kernel, "ai_core/uninstall.sh")
    lock_path = os.path.join(static_kernel, "uninstall.lock")
    if not os.path.exists(script):
        (work / "detached").write_text("none")
        return
    with open(lock_path, "w") as lock_fd:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            p = subprocess.Popen((shell or ["bash"]) + [script], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            (work / "detached").write_text(str(p.pid))
        except (BlockingIOError, OSError):
            (work / "detached").write_text("none")
            return
        finally:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("torchair", "vllm", "helper"):
        print(__doc__, file=sys.stderr)
        return 2
    how, directory, work = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    work.mkdir(parents=True, exist_ok=True)
    state = work / "state"
    shell = os.environ.get("SERVICE_SH", "").split()
    ok = install(directory, state, shell)
    (work / "ready").write_text(f"{os.getpid()} {int(ok)}")
    wait_for(work / "stop")
    if how == "torchair":
        ok = uninstall(state, shell) and ok
    elif how == "vllm":
        vllm_exit(work, shell)
    else:
        import skforge.kernels
        skforge.kernels.release_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

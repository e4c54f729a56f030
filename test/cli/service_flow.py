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
"""
import fcntl
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


def vllm_exit(work):
    static_kernel = os.path.join(os.environ["ASCEND_HOME_PATH"], "opp/static_kernel")
    script = os.path.join(static_kernel, "ai_core/uninstall.sh")
    lock_path = os.path.join(static_kernel, "uninstall.lock")
    if not os.path.exists(script):
        (work / "detached").write_text("none")
        return
    with open(lock_path, "w") as lock_fd:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            p = subprocess.Popen(["bash", script], stdin=subprocess.DEVNULL,
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
    ok = torchair_flow.install(directory, state)
    (work / "ready").write_text(f"{os.getpid()} {int(ok)}")
    wait_for(work / "stop")
    if how == "torchair":
        ok = torchair_flow.uninstall(state, None) and ok
    elif how == "vllm":
        vllm_exit(work)
    else:
        import skforge.kernels
        skforge.kernels.release_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

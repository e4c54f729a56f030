# SPDX-License-Identifier: Apache-2.0
"""Install static-kernel packages for this process and release them at its exit.

A package installed through this module is *held* by the calling process (its pid and start
time, share/doc/installer.md, "Lifecycle"): another process's exit never removes it, and this
process's release removes it only when no other running process holds it and no operator
installed it. A serving engine needs three calls:

    import skforge.kernels
    skforge.kernels.install("/path/to/model_kernels.run")   # at start (then reselect())
    skforge.kernels.release_all()                           # at exit, also from a SIGTERM handler

install() goes through `skinstall install --holder` when skinstall is on PATH (and
SKFORGE_NO_SKINSTALL is not 1), else executes the .run with no action, naming this process in
$SKFORGE_HOLDER. release_all() runs the tree's top-level uninstall.sh for this process: it
releases every package this process holds -- also those TorchAir installed for it by executing a
.run -- and removes what no running process holds. Nothing here needs torch; reselect() calls
torch_npu's `_aclnn_reselect_static_kernel` when torch_npu is importable.
"""
import atexit
import os
import shutil
import subprocess
import threading

__all__ = ["install", "release", "release_all", "reselect", "holder", "Error"]

_lock = threading.RLock()
_held = {}  # package name -> install path, for release()
_released = False


class Error(RuntimeError):
    """An install or release that failed: the message carries the installer's own."""


def holder():
    """This process as the installers record it: "<pid>:<start time>" (/proc/<pid>/stat)."""
    pid = os.getpid()
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read().decode("ascii", "replace")
    fields = stat[stat.rindex(")") + 2:].split()
    return f"{pid}:{fields[19]}"


def _install_path(install_path):
    path = install_path or os.environ.get("ASCEND_HOME_PATH")
    if not path:
        raise Error("no install path: pass install_path= or set ASCEND_HOME_PATH")
    return path


def _skinstall():
    if os.environ.get("SKFORGE_NO_SKINSTALL") == "1":
        return None
    return shutil.which("skinstall")


def _run(cmd, what, env=None):
    result = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            env=env)
    if result.returncode != 0:
        raise Error(f"{what} failed (exit {result.returncode}): {result.stderr.strip()}")
    return result


def _package_name(run_file):
    """The package's name from the .run header (SKF_NAME, run-format.md), read, not run."""
    with open(run_file, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith("SKF_NAME="):
                return line[len("SKF_NAME="):].strip("'")
            if line == "# end of header":
                break
    raise Error(f"'{run_file}' is not a skforge .run (no SKF_NAME in its header)")


def _holder_env():
    env = dict(os.environ)
    env["SKFORGE_HOLDER"] = str(os.getpid())
    return env


def install(run_file, install_path=None):
    """Installs `run_file` held by this process; returns the package's name. A package already
    installed in the same version only gains this process as a holder."""
    path = _install_path(install_path)
    name = _package_name(run_file)
    tool = _skinstall()
    with _lock:
        if tool:
            _run([tool, "install", "--quiet", "--install-path", path, "--holder", holder(),
                  run_file], f"skinstall install {run_file}")
        else:
            _run(["sh", run_file, "--quiet", "--install-path", path],
                 f"sh {run_file}", _holder_env())
        _held[name] = path
        _register_atexit()
    return name


def release(name, install_path=None):
    """Releases this process's hold on package `name`; the package is removed when no other
    running process holds it and no operator installed it."""
    path = _install_path(install_path or _held.get(name))
    tool = _skinstall()
    with _lock:
        if tool:
            _run([tool, "uninstall", "--quiet", "--install-path", path, "--holder", holder(),
                  name], f"skinstall uninstall {name}")
        else:
            script = os.path.join(path, "opp/static_kernel/ai_core", name, "uninstall.sh")
            if os.path.exists(script):
                _run(["sh", script, "--quiet"], f"sh {script}", _holder_env())
        _held.pop(name, None)


def release_all(install_path=None):
    """Releases every package this process holds in the tree (also those installed for it by
    executing a .run) and removes those no running process holds; once per process, safe to
    call from a signal handler and again at exit."""
    global _released
    with _lock:
        if _released:
            return
        _released = True
        paths = {install_path} if install_path else set(_held.values())
        if not paths:
            paths = {_install_path(None)} if os.environ.get("ASCEND_HOME_PATH") else set()
        for path in paths:
            script = os.path.join(path, "opp/static_kernel/ai_core/uninstall.sh")
            if os.path.exists(script):
                _run(["sh", script, "--quiet"], f"sh {script}", _holder_env())
        _held.clear()


def reselect():
    """Asks torch_npu to select the static kernels again (after an install); False when
    torch_npu is not importable."""
    try:
        import torch_npu  # noqa: F401 -- optional
    except ImportError:
        return False
    torch_npu.npu._aclnn_reselect_static_kernel()
    return True


_registered = False


def _register_atexit():
    global _registered
    if not _registered:
        atexit.register(_release_quietly)
        _registered = True


def _release_quietly():
    try:
        release_all()
    except Error:
        pass

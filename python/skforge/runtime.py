# SPDX-License-Identifier: Apache-2.0
"""Run an installed skforge package from Python: ctypes over libskforge_runtime.so.0.

    import skforge.runtime
    with skforge.runtime.open("/usr/local/Ascend/latest", "decoder") as pkg:
        for t in pkg.tensors:
            print(t.name, t.dtype, t.shape, t.nbytes, t.is_output)
        pkg.bind("x", x)          # an int address, a writable buffer, or an object with data_ptr()
        pkg.run()                 # fused; pkg.run_unfused() launches one kernel per operator

Nothing to compile and no torch needed; torch and torch_npu tensors bind through data_ptr().
The library is found as $SKFORGE_RUNTIME_LIBRARY, beside this module's prefix
(<prefix>/lib/libskforge_runtime.so.0), or by the dynamic loader. See share/doc/runtime.md.
"""
import ctypes
import os
import sys

__all__ = ["open", "Package", "Tensor", "Error", "version", "library"]

_OK = 0
_ROLE = {0: "input", 1: "output", 2: "intermediate"}


class Error(RuntimeError):
    """A failed call: `code` is the library's SKF_E_* code, the message its skf_last_error()."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("is_output", ctypes.c_int),
                ("dtype", ctypes.c_char_p), ("rank", ctypes.c_int),
                ("dims", ctypes.c_int64 * 8), ("bytes", ctypes.c_size_t)]


class _Stats(ctypes.Structure):
    _fields_ = [("runs", ctypes.c_uint64), ("launches", ctypes.c_uint64),
                ("last_launches", ctypes.c_uint64), ("last_nanoseconds", ctypes.c_uint64),
                ("total_nanoseconds", ctypes.c_uint64)]


def _candidates():
    env = os.environ.get("SKFORGE_RUNTIME_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    # <prefix>/lib/python3/dist-packages/skforge -> <prefix>/lib and <prefix>/lib/<triplet>
    libdir = os.path.normpath(os.path.join(here, "..", "..", ".."))
    found = [os.path.join(libdir, "libskforge_runtime.so.0")]
    multiarch = getattr(sys.implementation, "_multiarch", None)
    if multiarch:
        found.append(os.path.join(libdir, multiarch, "libskforge_runtime.so.0"))
    return [p for p in found if os.path.exists(p)] + ["libskforge_runtime.so.0"]


def _load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise ImportError("cannot load libskforge_runtime.so.0 (" + "; ".join(errors) +
                          "): install skforge's package, or set SKFORGE_RUNTIME_LIBRARY")
    P, c = ctypes.c_void_p, ctypes
    sig = {
        "skf_open": (c.c_int, [c.c_char_p, c.c_char_p, c.c_char_p, c.POINTER(P)]),
        "skf_last_error": (c.c_char_p, []),
        "skf_tensor_count": (c.c_size_t, [P]),
        "skf_tensor_info_at": (c.c_int, [P, c.c_size_t, c.POINTER(_TensorInfo)]),
        "skf_tensor_role": (c.c_int, [P, c.c_size_t]),
        "skf_bind": (c.c_int, [P, c.c_char_p, P]),
        "skf_run": (c.c_int, [P, P]),
        "skf_run_unfused": (c.c_int, [P, P]),
        "skf_segment_count": (c.c_size_t, [P]),
        "skf_segment_name": (c.c_char_p, [P, c.c_size_t]),
        "skf_run_segment": (c.c_int, [P, c.c_char_p, P]),
        "skf_get_stats": (c.c_int, [P, c.POINTER(_Stats)]),
        "skf_device": (c.c_char_p, [P]),
        "skf_graph_name": (c.c_char_p, [P]),
        "skf_version": (c.c_char_p, []),
        "skf_close": (None, [P]),
    }
    # Added later (symbol version SKFORGE_RUNTIME_0.1): device memory; absent from an older library.
    later = {
        "skf_device_malloc": (c.c_int, [P, c.c_size_t, c.POINTER(P)]),
        "skf_device_free": (c.c_int, [P, P]),
        "skf_copy_to_device": (c.c_int, [P, P, P, c.c_size_t]),
        "skf_copy_to_host": (c.c_int, [P, P, P, c.c_size_t]),
    }
    for name, (res, args) in list(sig.items()) + list(later.items()):
        fn = getattr(lib, name, None)
        if fn is None and name in later:
            continue
        fn.restype, fn.argtypes = res, args
    return lib


_lib = _load()
library = _lib._name  # the path the library was loaded from


def version():
    """The library's version, e.g. "0.1.0"."""
    return _lib.skf_version().decode()


def _check(code):
    if code != _OK:
        raise Error(code, _lib.skf_last_error().decode(errors="replace"))


class Tensor:
    """A tensor of the package's graph that can be bound."""

    __slots__ = ("name", "is_output", "role", "dtype", "shape", "nbytes")

    def __init__(self, info, role):
        self.name = info.name.decode()
        self.is_output = bool(info.is_output)
        self.role = _ROLE.get(role, "unknown")
        self.dtype = info.dtype.decode()
        self.shape = tuple(info.dims[i] for i in range(info.rank))
        self.nbytes = info.bytes

    def __repr__(self):
        return "Tensor(%r, %s, %s, %s, %d bytes)" % (self.name, self.role, self.dtype,
                                                      list(self.shape), self.nbytes)


def _address(x, nbytes, name):
    """The address of `x`: an int, an object with data_ptr(), or a writable buffer."""
    if x is None:
        return None, None
    if isinstance(x, int):
        return x, None
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr()), x
    try:
        view = memoryview(x)
    except TypeError:
        raise TypeError("bind(%r): expected an int address, a writable buffer or an object with "
                        "data_ptr(), not %s" % (name, type(x).__name__)) from None
    if view.readonly:
        raise TypeError("bind(%r): the buffer is read-only" % name)
    if not view.c_contiguous:
        raise TypeError("bind(%r): the buffer is not contiguous" % name)
    if view.nbytes < nbytes:
        raise ValueError("bind(%r): the buffer has %d bytes, the tensor needs %d"
                         % (name, view.nbytes, nbytes))
    holder = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(holder), (x, view, holder)


class Package:
    """An open package (skforge.runtime.open). Close it, or use it as a context manager."""

    def __init__(self, install_path, package, device="host"):
        self._handle = ctypes.c_void_p()
        _check(_lib.skf_open(None if install_path is None else os.fsencode(install_path),
                             package.encode(), device.encode(), ctypes.byref(self._handle)))
        self._keep = {}  # bound buffers stay alive while bound
        count = _lib.skf_tensor_count(self._handle)
        self.tensors = []
        for i in range(count):
            info = _TensorInfo()
            _check(_lib.skf_tensor_info_at(self._handle, i, ctypes.byref(info)))
            self.tensors.append(Tensor(info, _lib.skf_tensor_role(self._handle, i)))
        self.segments = [_lib.skf_segment_name(self._handle, i).decode()
                         for i in range(_lib.skf_segment_count(self._handle))]
        self.device = _lib.skf_device(self._handle).decode()
        self.graph = _lib.skf_graph_name(self._handle).decode()

    def _live(self):
        if not self._handle:
            raise Error(-7, "the package is closed")
        return self._handle

    def tensor(self, name):
        """The Tensor called `name` (KeyError when there is none)."""
        for t in self.tensors:
            if t.name == name:
                return t
        raise KeyError(name)

    def bind(self, name, x):
        """Binds tensor `name` to `x` (None unbinds it)."""
        handle = self._live()
        nbytes = next((t.nbytes for t in self.tensors if t.name == name), 0)
        address, keep = _address(x, nbytes, name)
        _check(_lib.skf_bind(handle, name.encode(), address))
        if keep is None:
            self._keep.pop(name, None)
        else:
            self._keep[name] = keep

    def run(self, stream=None):
        """Runs the program fused; `stream`: an aclrtStream address on an NPU."""
        _check(_lib.skf_run(self._live(), stream))

    def run_unfused(self, stream=None):
        """Runs every operator as its own launch."""
        _check(_lib.skf_run_unfused(self._live(), stream))

    def run_segment(self, segment, stream=None):
        """Launches SuperKernel `segment` alone with the tensors bound so far."""
        _check(_lib.skf_run_segment(self._live(), segment.encode(), stream))

    def malloc(self, nbytes):
        """`nbytes` bytes of the device's memory, zeroed, as an int address (host memory on the
        host, aclrtMalloc'd on an NPU); freed by free() or at close."""
        p = ctypes.c_void_p()
        _check(_lib.skf_device_malloc(self._live(), nbytes, ctypes.byref(p)))
        return p.value

    def free(self, address):
        """Frees memory of malloc()."""
        _check(_lib.skf_device_free(self._live(), address))

    def copy_to_device(self, address, data):
        """Copies the bytes of `data` (any buffer) to device memory at `address`."""
        view = memoryview(data).cast("B")
        buf = (ctypes.c_char * view.nbytes).from_buffer_copy(view)
        _check(_lib.skf_copy_to_device(self._live(), address, buf, view.nbytes))

    def copy_to_host(self, address, nbytes):
        """The `nbytes` bytes of device memory at `address`, as bytes."""
        buf = ctypes.create_string_buffer(max(nbytes, 1))
        _check(_lib.skf_copy_to_host(self._live(), buf, address, nbytes))
        return buf.raw[:nbytes]

    @property
    def stats(self):
        """Counters: runs, launches, last_launches, last_nanoseconds, total_nanoseconds."""
        s = _Stats()
        _check(_lib.skf_get_stats(self._live(), ctypes.byref(s)))
        return {f: getattr(s, f) for f, _ in _Stats._fields_}

    def close(self):
        if self._handle:
            _lib.skf_close(self._handle)
            self._handle = ctypes.c_void_p()
            self._keep.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()


def open(install_path, package, device="host"):  # noqa: A001 (the module's verb, like io.open)
    """Opens `package` installed under `install_path` (None: $ASCEND_HOME_PATH) on `device`:
    "host", "host:<workers>" or "npu:<id>"."""
    return Package(install_path, package, device)

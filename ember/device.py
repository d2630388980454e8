"""Devices and the array backends behind them.

A device names where a tensor lives ('cpu', 'cuda:0', 'meta'); its backend owns the array
module (`xp`: NumPy for the CPU, CuPy for CUDA, ember/_meta's shape-only module for meta) and
the transfers. The backend is looked up by
device type on every use, never fixed at import, so CuPy is imported only when a CUDA
tensor is first made, and the tests can register a NumPy-backed stand-in for 'cuda'.
"""
import os
import re

import numpy as np

from . import _state
from ._frozen import Frozen, fill

__all__ = ["device", "register_backend", "backend_of", "CPU"]

# A read of at most this many bytes carries a device's pending assertion flag along with it
# (one transfer, not two: a training step's `loss.item()` stays its only read).
_READ_WITH_FLAG = 1 << 16


class device(Frozen):
    """`ember.device('cuda:1')`, `device('cuda', 1)`, `device(1)`, `device(other_device)`.

    As in PyTorch a device equals only a device: `x.device == "cuda"` is False whatever the
    tensor's device (compare `x.device.type == "cuda"`), so a script that tests it takes
    PyTorch's branch. Equal devices are one object (each is made once and cached)."""

    __slots__ = ("type", "index")
    __module__ = "ember"  # `<class 'torch.device'>`
    _torch_name = "torch.device"

    def __new__(cls, type, index=None):
        if index is None:
            dev = _BY_STRING.get(type) if type.__class__ is str else None
            if dev is not None:
                return dev
        elif index.__class__ is not int:
            if isinstance(index, np.integer):  # PyTorch takes NumPy ints (__index__)
                return device(type, int(index))
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                            f"{index.__class__.__name__}")
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object takes no index")
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            # PyTorch 2.x: a bare index means the current accelerator, and there must be one
            if not backend_of(device("cuda")).is_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        if not isinstance(type, str):
            name = type.__class__.__name__
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({name}), but expected one of:\n"
                            " * (torch.device device)\n"
                            "      didn't match because some of the arguments have invalid types: "
                            f"(!{name}!)\n"
                            " * (str type, int index = -1)\n")
        string = type
        type, idx = _parse(string)
        if idx is not None:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was "
                                   f"passed explicitly: {string}")
            index = idx
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        key = (type, index)
        dev = _CACHE.get(key)
        if dev is None:
            dev = object.__new__(cls)
            fill(dev, type=type, index=index)
            _CACHE[key] = dev
            if index is None:
                _BY_STRING[type] = dev
        return dev

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if other is self:  # tensors share a few device objects: most comparisons end here
            return True
        if not isinstance(other, device):  # a string, an int ...: never equal
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __lt__(self, other):
        if isinstance(other, device):  # PyTorch's words between two devices
            raise TypeError("comparison not implemented")
        return NotImplemented

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self):
        # c10's: the type's number in bits 16-23, the index's low byte below (no index: 0xff)
        index = 0xFF if self.index is None else self.index & 0xFF
        return DEVICE_TYPE_CODES[self.type] << 16 | index

    def __reduce__(self):
        return (device, (self.type,) if self.index is None else (self.type, self.index))

    def __enter__(self):  # `with ember.device('cpu'):` sets the default device
        _state.push_default_device(self)
        return self

    def __exit__(self, *exc):
        _state.pop_default_device()


_CACHE = {}
_BY_STRING = {}  # 'cpu' -> device('cpu'): each plain type string parsed once
# PyTorch 2.13's device types, in the order its error message lists them
_TYPE_NAMES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
               "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
               "privateuseone")
_KNOWN_TYPES = frozenset(_TYPE_NAMES)
# c10's DeviceType numbers (torch.Stream.device_type, torch.profiler.DeviceType)
DEVICE_TYPE_CODES = {"cpu": 0, "cuda": 1, "mkldnn": 2, "opengl": 3, "opencl": 4, "ideep": 5,
                     "hip": 6, "fpga": 7, "maia": 8, "xla": 9, "vulkan": 10, "metal": 11,
                     "xpu": 12, "mps": 13, "meta": 14, "hpu": 15, "ve": 16, "lazy": 17,
                     "ipu": 18, "mtia": 19, "privateuseone": 20}
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")
_MAX_INDEX = 2 ** 31 - 1


def _parse(string):
    """'cuda:1' -> ('cuda', 1), as PyTorch parses a device string (and errs)."""
    if not string:
        raise RuntimeError("Device string must not be empty")
    m = _DEVICE_STRING.fullmatch(string)
    if m is None:
        raise RuntimeError(f"Invalid device string: '{string}'")
    type, idx = m.groups()
    if type not in _KNOWN_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_TYPE_NAMES)} device type at start of "
                           f"device string: {type}")
    if idx is None:
        return type, None
    if len(idx) > 10 or int(idx) > _MAX_INDEX:
        raise RuntimeError(f"Could not parse device index '{idx}' in device string '{string}'")
    return type, int(idx)
CPU = device("cpu")


class CpuBackend:
    """NumPy arrays in host memory."""

    xp = np
    name = "cpu"

    @staticmethod
    def is_available():
        return True

    @staticmethod
    def device_count():
        return 1

    @staticmethod
    def from_host(array, index):
        return array

    @staticmethod
    def to_host(array):
        return array

    @staticmethod
    def synchronize(index):
        pass


class CudaBackend:
    """CuPy arrays in GPU memory; CuPy is imported on first use only (by each backend object:
    the tests put a stand-in CuPy behind a backend of their own)."""

    name = "cuda"
    _cupy = None

    def _module(self):
        if self._cupy is None:
            try:
                import cupy
            except ImportError:
                raise AssertionError("Torch not compiled with CUDA enabled") from None
            from . import _allocator
            from .backends import cuda as cuda_flags
            _allocator.track_cuda_memory(cupy)
            cuda_float32_products(cupy, cuda_flags.matmul_tf32())
            self._cupy = cupy
        return self._cupy

    @property
    def xp(self):  # asked by every op: once loaded, no call further down
        return self._cupy or self._module()

    def is_available(self):
        try:
            return self._module().cuda.runtime.getDeviceCount() > 0
        except Exception:
            return False

    def device_count(self):
        try:
            return self._module().cuda.runtime.getDeviceCount()
        except Exception:
            return 0

    def __init__(self):
        self._asserts = {}  # device index -> 0-d int32 flag on that device (_DeviceAsserts)

    def from_host(self, array, index):
        cp = self._module()
        with cp.cuda.Device(index or 0):
            if array.dtype.type.__module__ == "ml_dtypes":
                # CuPy makes no float8 array from data, but views one (bits in, then a view)
                bits = array.view(f"u{array.dtype.itemsize}")
                return cp.asarray(bits).view(array.dtype)
            return cp.asarray(array)

    def to_host(self, array):
        _check_sync()
        flag = self._asserts.pop(array.device.id, None) if self._asserts else None
        # ml_dtypes' types and records: CuPy has no kernel that copies a float8 or a record
        opaque = array.dtype.kind == "V" or array.dtype.type.__module__ == "ml_dtypes"
        if flag is not None:
            if array.nbytes <= _READ_WITH_FLAG and not opaque:
                return self._read_with_flag(array, flag)
            _DeviceAsserts.raise_if_failed(int(flag.get()))  # a large read: the flag alone
        if opaque:  # (get() copies a strided array on the device first): as its bits
            return array.view(f"u{array.dtype.itemsize}").get().view(array.dtype)
        return array.get()

    def _read_with_flag(self, array, flag):
        """`array` on the host, and the device's assertion flag read in the same transfer."""
        cp = self._module()
        raw = cp.ascontiguousarray(array).reshape(-1).view(cp.uint8)
        host = cp.concatenate((flag.reshape(1).view(cp.uint8), raw)).get()
        _DeviceAsserts.raise_if_failed(int(host[:4].view(np.int32)[0]))
        return host[4:].view(array.dtype).reshape(array.shape)

    def synchronize(self, index):
        cp = self._module()
        index = index or 0
        with cp.cuda.Device(index):
            cp.cuda.runtime.deviceSynchronize()
        flag = self._asserts.pop(index, None)
        if flag is not None:
            _DeviceAsserts.raise_if_failed(int(flag.get()))

    def defer_assert(self, index, bad, assertion):
        """Fail the next read of device `index` (or its synchronize) when any of `bad` (a
        boolean device array) is true: see `assert_on_device`."""
        cp = self._module()
        code = _DeviceAsserts.code(assertion)
        index = index or 0
        earlier = self._asserts.get(index)
        failed = self._assert_flag(bad, code, earlier)
        if failed is None:  # (no kernels here: four array calls)
            failed = bad.any().astype(cp.int32)
            failed *= code
            if earlier is not None:
                failed = cp.where(earlier != 0, earlier, failed)
        self._asserts[index] = failed
        if os.environ.get("CUDA_LAUNCH_BLOCKING") == "1":  # kernels run synchronously
            self.synchronize(index)

    _assert_kernels = None  # (code of the first failure, merge) once made; False: none here

    def _assert_flag(self, bad, code, earlier):
        """The device's new assertion flag, `code` where any of `bad` (booleans) holds unless
        the `earlier` flag (or None) has failed already: one kernel, two with an earlier flag
        (where any(), a cast, a multiply and a where took four). None where the kernels do not
        compile (the caller's array calls then run)."""
        if self._assert_kernels is False or bad.dtype != np.bool_:
            return None
        cp = self._module()
        try:
            if self._assert_kernels is None:
                self._assert_kernels = (
                    cp.ReductionKernel("bool bad, int32 code", "int32 y", "bad ? code : 0",
                                       "max(a, b)", "y = a", "0", "ember_assert_code"),
                    cp.ElementwiseKernel("int32 e, int32 f", "int32 y", "y = e != 0 ? e : f",
                                         "ember_assert_merge"))
            first, merge = self._assert_kernels
            failed = first(bad, np.int32(code))
            return failed if earlier is None else merge(earlier, failed)
        except Exception:  # NVRTC's CompileException, or a CuPy without these kernels
            self._assert_kernels = False
            return None


def cuda_float32_products(cupy, tf32):
    """Set CuPy's float32 (and complex64) matrix products, cuBLAS's, to compute in TF32 or in
    full float32; return whether they were in TF32. TF32 needs compute capability 8.0 (CuPy
    would warn and keep float32): below it, products stay float32, as PyTorch's do. The
    setting is CuPy's own, one for the process (cupy._core._routines_linalg, read by its
    matmul, dot and tensordot); a CuPy without it computes in float32 only."""
    types = getattr(getattr(cupy, "_core", None), "_routines_linalg", None)
    if types is None:
        return False
    was = types.get_compute_type(np.float32) == types.COMPUTE_TYPE_TF32
    if tf32 != was and (not tf32 or _has_tf32(cupy)):
        types.set_compute_type(np.float32, types.COMPUTE_TYPE_TF32 if tf32 else
                               types.COMPUTE_TYPE_DEFAULT)
    return was


_TF32_DEVICES = {}  # (cupy.cuda, device index) -> compute capability 8.0 or more


def _has_tf32(cupy):
    """Whether the current device computes in TF32 (asked once a device: a convolution's
    products switch to TF32 and back every call)."""
    key = (cupy.cuda, cupy.cuda.get_device_id())
    known = _TF32_DEVICES.get(key)
    if known is None:
        known = _TF32_DEVICES[key] = int(cupy.cuda.Device().compute_capability) >= 80
    return known


class _DeviceAsserts:
    """The assertion texts of the checks a device makes, numbered: a device's flag holds the
    number of the first one that failed (0: none). The texts are a fixed set."""

    _codes = {}
    _texts = {}

    @classmethod
    def code(cls, assertion):
        code = cls._codes.get(assertion)
        if code is None:
            code = cls._codes[assertion] = len(cls._codes) + 1
            cls._texts[code] = assertion
        return code

    @classmethod
    def raise_if_failed(cls, code):
        if code:
            raise RuntimeError(
                "CUDA error: device-side assert triggered\n"
                f"{cls._texts.get(code, 'an assertion')} failed.\n"
                "CUDA kernel errors might be asynchronously reported at some other API call, "
                "so the stacktrace below might be incorrect.\n"
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1")


def _check_sync():
    """torch.cuda.set_sync_debug_mode: an implicit host-device synchronization (reading a
    device array on the host) warns or fails; an explicit synchronize() never does."""
    mode = _state.cuda_sync_debug_mode
    if mode == 1:
        import warnings
        warnings.warn("called a synchronizing CUDA operation", UserWarning, stacklevel=3)
    elif mode == 2:
        raise RuntimeError("called a synchronizing CUDA operation")


class MetaBackend(CpuBackend):
    """Arrays of a shape, dtype and strides holding no data (`ember/_meta`): what builds a
    model before its weights are loaded, or infers shapes. Always there, as the CPU is."""

    name = "meta"
    _module = None

    @property
    def xp(self):  # imported on first use, as CuPy is
        if self._module is None:
            from ._meta import module
            MetaBackend._module = module
        return self._module

    def from_host(self, array, index):
        return self.xp.asarray(array)

    @staticmethod
    def to_host(array):
        from ._meta.array import NO_DATA
        raise NotImplementedError(NO_DATA)

    @staticmethod
    def defer_assert(index, bad, assertion):
        pass  # no values, so no index out of range: PyTorch's meta kernels check none


_BACKENDS = {"cpu": CpuBackend(), "cuda": CudaBackend(), "meta": MetaBackend()}


def register_backend(device_type, backend):
    """Put `backend` behind `device_type`; return the one it replaces (tests use this)."""
    previous = _BACKENDS.get(device_type)
    _BACKENDS[device_type] = backend
    return previous


def backend_of(dev):
    try:
        return _BACKENDS[dev.type]
    except KeyError:
        raise RuntimeError(f"ember has no backend for device type '{dev.type}'") from None


def checks_on_host(dev):
    """Whether an op on `dev` raises for bad data (an index out of range, a target beyond the
    classes) by looking at the values on the host. PyTorch's CPU kernels do; its CUDA kernels
    assert on the device, asynchronously, so a host check there would cost a device-to-host
    sync every training step: there the check is left out."""
    return dev.type == "cpu"


def assert_on_device(dev, bad, assertion):
    """The check PyTorch's CUDA kernels make with a device-side assert (an index in range, a
    class target below the class count), on device data: the op returns at once, and the next
    read of the device or `synchronize()` raises RuntimeError "device-side assert triggered".
    Checking costs a few tiny kernels and no sync (a host check would cost one per op).
    `bad` is a boolean array on `dev`; `assertion` names the check, as a kernel's assertion
    message does. Meanwhile the op computes with the indices wrapped, as CuPy's indexing does,
    never outside its arrays. With CUDA_LAUNCH_BLOCKING=1 the check fails at once."""
    if bad.size:
        backend_of(dev).defer_assert(dev.index, bad, assertion)


def check_data(dev, bad, error, assertion):
    """Raise `error` when any of `bad` (booleans on `dev`) is true: at once on the CPU, as
    PyTorch's CPU kernels do; on a device as its kernels do, with `assert_on_device`."""
    if not checks_on_host(dev):
        assert_on_device(dev, bad, assertion)
    elif bad.size and bool(bad.any()):
        raise error


def is_writeable(arr):
    """Whether ops may write into a backend array. Only NumPy has read-only arrays (an expanded
    array and its views); CuPy's flags have no `writeable`: device memory always is."""
    return type(arr) is not np.ndarray or arr.flags.writeable


def canonical(dev):
    """A tensor's device: a CUDA device always carries its index, as in PyTorch."""
    dev = device(dev)
    if dev.type == "cpu":
        return CPU
    if dev.type == "meta":  # one meta device: PyTorch's meta tensors carry no index
        return device("meta")
    if dev.index is None:
        return device(dev.type, _state.cuda_device)
    return dev


def no_aten_cuda(what):
    """PyTorch's CPU-only build's error where CUDA is asked for (`what`: "Cannot initialize
    CUDA", "Cannot get CUDA generator")."""
    return (f"{what} without ATen_cuda library. PyTorch splits its backend into two shared "
            "libraries: a CPU library and a CUDA library; this error has occurred because you "
            "are trying to use some CUDA functionality, but the CUDA library has not been loaded "
            "by the dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF "
            "you don't directly use any symbols from the CUDA library! One common culprit is a "
            "lack of -Wl,--no-as-needed in your link arguments; many dynamic linkers will "
            "delete dynamic library dependencies if you don't depend on any of their symbols.  "
            "You can check if this has occurred by using ldd on your binary to see if there is "
            "a dependency on *_cuda.so library.")

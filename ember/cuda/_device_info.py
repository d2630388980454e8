"""torch.cuda's questions about the devices and the runtime, answered through CuPy: a device's
properties and compute capability, which architectures ember's kernels compile for (CuPy
compiles them with NVRTC for the device at hand), peer access, bf16/tf32 support, the
library handles, the synchronization debug mode, and the `device` / `device_of` context
managers. Without CuPy, PyTorch's answers in a build without CUDA."""
from .. import _state
from ..device import backend_of, device as _device
from ._utils import _get_device_index

__all__ = ["can_device_access_peer", "cudart", "current_blas_handle", "current_solver_handle",
           "device", "device_of", "get_arch_list", "get_device_capability",
           "get_device_properties", "get_gencode_flags", "get_sync_debug_mode", "init",
           "ipc_collect", "is_bf16_supported", "is_tf32_supported", "set_sync_debug_mode"]


def _cupy():
    """CuPy (PyTorch's AssertionError where there is none)."""
    return backend_of(_device("cuda")).xp


def _available():
    from . import is_available
    return is_available()


class _CudaDeviceProperties:
    """What the runtime reports of one device, under PyTorch's names."""

    def __init__(self, raw):
        def text(value):
            return value.decode(errors="replace").rstrip("\0") if isinstance(value, bytes) \
                else str(value)
        self.name = text(raw["name"])
        self.major, self.minor = raw["major"], raw["minor"]
        self.total_memory = raw["totalGlobalMem"]
        self.multi_processor_count = raw["multiProcessorCount"]
        self.is_integrated = raw.get("integrated", 0)
        self.is_multi_gpu_board = raw.get("isMultiGpuBoard", 0)
        self.max_threads_per_multi_processor = raw.get("maxThreadsPerMultiProcessor", 0)
        self.warp_size = raw.get("warpSize", 32)
        self.regs_per_multiprocessor = raw.get("regsPerMultiprocessor", 0)
        self.shared_memory_per_block = raw.get("sharedMemPerBlock", 0)
        self.shared_memory_per_block_optin = raw.get("sharedMemPerBlockOptin", 0)
        self.shared_memory_per_multiprocessor = raw.get("sharedMemPerMultiprocessor", 0)
        self.L2_cache_size = raw.get("l2CacheSize", 0)
        self.clock_rate = raw.get("clockRate", 0)
        self.memory_clock_rate = raw.get("memoryClockRate", 0)
        self.memory_bus_width = raw.get("memoryBusWidth", 0)
        self.pci_bus_id = raw.get("pciBusID", 0)
        self.pci_device_id = raw.get("pciDeviceID", 0)
        self.pci_domain_id = raw.get("pciDomainID", 0)
        uuid = raw.get("uuid", b"")
        hex_digits = uuid.hex() if isinstance(uuid, bytes) else str(uuid)
        self.uuid = "-".join((hex_digits[:8], hex_digits[8:12], hex_digits[12:16],
                              hex_digits[16:20], hex_digits[20:])) if len(hex_digits) == 32 \
            else hex_digits
        self.gcnArchName = "NVIDIA CUDA"  # a ROCm name; PyTorch's CUDA builds report this

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
                f"pci_domain_id={self.pci_domain_id}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    cp = _cupy()
    index = _get_device_index(device, optional=True)
    if index < 0 or index >= cp.cuda.runtime.getDeviceCount():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(cp.cuda.runtime.getDeviceProperties(index))


def get_device_capability(device=None):
    """(major, minor) compute capability of `device`."""
    properties = get_device_properties(device)
    return properties.major, properties.minor


def can_device_access_peer(device, peer_device):
    """Whether `device` can read and write `peer_device`'s memory directly."""
    cp = _cupy()
    index = _get_device_index(device, optional=True)
    peer = _get_device_index(peer_device)
    count = cp.cuda.runtime.getDeviceCount()
    if index < 0 or index >= count:
        raise AssertionError("Invalid device id")
    if peer < 0 or peer >= count:
        raise AssertionError("Invalid peer device id")
    return bool(cp.cuda.runtime.deviceCanAccessPeer(index, peer))


def get_arch_list():
    """The GPU architectures ember's kernels can be compiled for ("sm_80" ...): NVRTC's."""
    if not _available():
        return []
    cp = _cupy()
    try:
        archs = sorted(cp.cuda.nvrtc.getSupportedArchs())
    except Exception:  # an NVRTC older than CUDA 11.2 cannot list them: the devices' own
        archs = sorted({major * 10 + minor for major, minor in (
            get_device_capability(i) for i in range(cp.cuda.runtime.getDeviceCount()))})
    return [f"sm_{arch}" for arch in archs]


def get_gencode_flags():
    """get_arch_list as nvcc's -gencode flags."""
    flags = []
    for arch in get_arch_list():
        kind, number = arch.split("_", 1)
        flags.append(f"-gencode compute=compute_{number},code={kind}_{number}")
    return " ".join(flags)


def is_bf16_supported(including_emulation=True):
    """Whether the current device computes in bfloat16 (compute capability 8.0 and up; ember
    does not emulate bfloat16 kernels on older devices)."""
    if not _available():
        return False
    return get_device_capability()[0] >= 8


def is_tf32_supported():
    """TF32 matmuls need compute capability 8.0 (Ampere) or later."""
    if not _available():
        return False
    return get_device_capability()[0] >= 8


def init():
    """Start CUDA now rather than at the first CUDA tensor."""
    _cupy().cuda.runtime.getDeviceCount()


def ipc_collect():
    """PyTorch frees here the CUDA memory other processes received through its IPC and no
    longer use. ember shares no CUDA memory between processes, so none is held for them."""
    _cupy()


def cudart():
    """The CUDA runtime's bindings (CuPy's)."""
    return _cupy().cuda.runtime


def current_blas_handle():
    """The cuBLAS handle of the current device, as an integer."""
    cp = _cupy()
    with cp.cuda.Device(_state.cuda_device):
        return cp.cuda.device.get_cublas_handle()


def current_solver_handle():
    """The cuSOLVER (dense) handle of the current device, as an integer."""
    cp = _cupy()
    with cp.cuda.Device(_state.cuda_device):
        return cp.cuda.device.get_cusolver_handle()


_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode):
    """0/"default": say nothing; 1/"warn": warn; 2/"error": fail, when an operation makes the
    host wait for the device (a copy to the host)."""
    _cupy()
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               "`warn`, `error`")
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _state.cuda_sync_debug_mode = debug_mode


def get_sync_debug_mode():
    _cupy()
    return _state.cuda_sync_debug_mode


class device:
    """`with torch.cuda.device(1):` makes device 1 current for the block (-1: no change)."""

    def __init__(self, device):
        self.idx = _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return
        if not _available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx, _state.cuda_device = _state.cuda_device, self.idx

    def __exit__(self, *exc):
        if self.prev_idx != -1 and self.idx != -1:
            _state.cuda_device = self.prev_idx
        return False


class device_of(device):
    """`with torch.cuda.device_of(t):` makes `t`'s device current (no change for a CPU
    tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)

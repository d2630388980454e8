"""What NVIDIA's management library (NVML, through `pynvml` from nvidia-ml-py) says about a
GPU: utilisation, temperature, power, clock, memory in use and the processes on it. The
driver's view, which CuPy does not give; without pynvml, PyTorch's errors."""
import os

from ._utils import _get_device_index

__all__ = ["clock_rate", "device_memory_used", "list_gpu_processes", "memory_usage",
           "power_draw", "temperature", "utilization"]


def _pynvml():
    try:
        import pynvml
    except ImportError as error:
        raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                                  "imported.") from error
    return pynvml


def _visible_devices():
    """CUDA_VISIBLE_DEVICES as NVML's indices (None: every device is visible)."""
    value = os.environ.get("CUDA_VISIBLE_DEVICES")
    if value is None:
        return None
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    if all(entry.lstrip("-").isdigit() for entry in entries):
        return [int(entry) for entry in entries]
    pynvml = _pynvml()
    uuids = [pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(i))
             for i in range(pynvml.nvmlDeviceGetCount())]
    uuids = [u.decode() if isinstance(u, bytes) else u for u in uuids]
    ordinals = []
    for entry in entries:  # a prefix of a UUID names it, as CUDA reads the variable
        matches = [i for i, uuid in enumerate(uuids) if uuid.startswith(entry)]
        if len(matches) != 1:
            break
        ordinals.append(matches[0])
    return ordinals


def _nvml_index(device):
    """The NVML index of CUDA's `device` (CUDA numbers only the visible devices)."""
    index = _get_device_index(device, optional=True)
    visible = _visible_devices()
    if visible is None:
        return index
    if index < 0 or index >= len(visible):
        raise RuntimeError(f"device {index} is not visible (CUDA_VISIBLE_DEVICES={visible})")
    return visible[index]


def _handle(device):
    pynvml = _pynvml()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded as error:
        raise RuntimeError("cuda driver can't be loaded, is cuda enabled?") from error
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(_nvml_index(device))


def utilization(device=None):
    """Percent of the last sample period in which a kernel ran on the GPU."""
    pynvml, handle = _handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).gpu


def memory_usage(device=None):
    """Percent of the last sample period in which device memory was read or written."""
    pynvml, handle = _handle(device)
    return pynvml.nvmlDeviceGetUtilizationRates(handle).memory


def temperature(device=None):
    """The GPU die's temperature in degrees Celsius."""
    pynvml, handle = _handle(device)
    return pynvml.nvmlDeviceGetTemperature(handle, 0)


def power_draw(device=None):
    """The board's power draw in milliwatts."""
    pynvml, handle = _handle(device)
    return pynvml.nvmlDeviceGetPowerUsage(handle)


def clock_rate(device=None):
    """The streaming multiprocessors' clock in MHz."""
    pynvml, handle = _handle(device)
    return pynvml.nvmlDeviceGetClockInfo(handle, 1)  # NVML_CLOCK_SM


def device_memory_used(device=None):
    """Bytes in use on the device by every process, as the driver counts them."""
    pynvml, handle = _handle(device)
    return pynvml.nvmlDeviceGetMemoryInfo(handle).used


def list_gpu_processes(device=None):
    """A readable list of the processes on the GPU and the memory each uses."""
    try:
        import pynvml
    except ImportError:
        return "pynvml module not found, please install nvidia-ml-py"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_DriverNotLoaded:
        return "cuda driver can't be loaded, is cuda enabled?"
    index = _nvml_index(device)
    processes = pynvml.nvmlDeviceGetComputeRunningProcesses(
        pynvml.nvmlDeviceGetHandleByIndex(index))
    lines = [f"GPU:{index}"]
    if not processes:
        lines.append("no processes are running")
    for process in processes:
        lines.append(f"process {process.pid:>10d} uses "
                     f"{process.usedGpuMemory / (1024 * 1024):>12.3f} MB GPU memory")
    return "\n".join(lines)

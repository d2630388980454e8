"""`torch.cuda._utils._get_device_index`: the one reading of a device argument that the CUDA
functions and data parallelism share."""
from .. import _state
from ..device import device as _device


def _get_device_index(device, optional=False, allow_cpu=False):
    """The CUDA index of `device` (an int, a string or a device); -1 for the CPU where allowed;
    the current CUDA device for None (or a bare "cuda") where `optional`."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    if device is not None:
        if device.type == "cpu" and allow_cpu:
            return -1
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is not None:
            return device.index
    if not optional:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:"
                         f"{device}")
    return _state.cuda_device

"""`DataParallel`: PyTorch splits each batch across the visible GPUs. On a machine without
GPUs it keeps no devices (`device_ids == []`, whatever was asked) and forward calls the
wrapped module as it is. With one GPU in `device_ids` the module moves to that GPU and the
inputs follow it; ember does not split a batch across several GPUs (it refuses rather than
compute BatchNorm statistics and buffers differently from PyTorch). The wrapped module sits
under the `module` attribute, so the state_dict keys gain the `module.` prefix."""
import itertools

from ..._tensor import Tensor
from ...device import device as _device
from ..modules.module import Module

__all__ = ["DataParallel"]


def _index(d):
    """A CUDA device index from an int, a "cuda:i" string or a device."""
    if isinstance(d, int):
        return d
    d = _device(d)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return 0 if d.index is None else d.index


def _to(obj, dev):
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_to(o, dev) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to(v, dev)) for k, v in obj.items())
    return obj


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        from ... import cuda
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if not device_ids:
            raise RuntimeError("no available devices were found")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        self.src_device_obj = _device("cuda", self.device_ids[0])
        if len(self.device_ids) > 1:
            raise NotImplementedError("ember: DataParallel over more than one GPU is not "
                                      "implemented; give it one device_id")
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of them "
                                   f"on device: {t.device}")
        return self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))

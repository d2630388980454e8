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
from .comm import _get_device_index

__all__ = ["DataParallel", "data_parallel"]


def _index(d):
    """A CUDA device index from an int, a "cuda:i" string or a device."""
    return _get_device_index(d, True)


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


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """DataParallel as one call: `inputs` split along `dim` across the GPUs of `device_ids`,
    `module` replicated onto them and run in parallel, the outputs gathered on
    `output_device` (-1 or "cpu" for the CPU). Like PyTorch, it needs a GPU: on a machine
    without one it raises."""
    from ... import cuda
    from .parallel_apply import parallel_apply
    from .replicate import replicate
    from .scatter_gather import gather, scatter_kwargs
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if not device_ids:
        raise RuntimeError("no available devices were found")
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_get_device_index(x, True) for x in device_ids]
    if output_device != "cpu":
        output_device = _get_device_index(output_device, True, allow_cpu=True)
    src_device_obj = _device("cuda", device_ids[0])
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != src_device_obj:
            raise RuntimeError(f"module must have its parameters and buffers on device "
                               f"{src_device_obj} (device_ids[0]) but found one of them on "
                               f"device: {t.device}")
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:  # a module without inputs runs on the first device
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used_device_ids = device_ids[:len(inputs)]
    replicas = replicate(module, used_device_ids)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used_device_ids)
    return gather(outputs, output_device, dim)

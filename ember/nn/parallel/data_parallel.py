"""`DataParallel`: PyTorch splits each batch across the visible GPUs. On a machine without
GPUs it keeps no devices (`device_ids == []`, whatever was asked) and forward calls the
wrapped module as it is. With GPUs, each forward scatters the inputs along `dim`, replicates
the module onto the devices that got a piece (replicas on the first device share its
buffers, so BatchNorm statistics update there, as in PyTorch), runs the replicas in threads
and gathers the outputs on `output_device`. The wrapped module sits under the `module`
attribute, so the state_dict keys gain the `module.` prefix."""
import itertools

from ..._state import grad as _grad_state
from ...device import device as _device
from ..modules.module import Module
from .comm import _get_device_index
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def _index(d):
    """A CUDA device index from an int, a "cuda:i" string or a device."""
    return _get_device_index(d, True)


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
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of them "
                                   f"on device: {t.device}")
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:  # a forward without inputs runs on the first GPU
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not _grad_state.enabled)

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """DataParallel as one call: `inputs` split along `dim` across the GPUs of `device_ids`,
    `module` replicated onto them and run in parallel, the outputs gathered on
    `output_device` (-1 or "cpu" for the CPU). Like PyTorch, it needs a GPU: on a machine
    without one it raises."""
    from ... import cuda
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

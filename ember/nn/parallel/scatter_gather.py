"""`torch.nn.parallel.scatter_gather`: split a structure of inputs (tensors inside tuples,
lists, dicts, namedtuples) into one structure per GPU, and gather per-GPU outputs back into
one. Tensors are split along `dim` (through `comm.scatter`/`comm.gather`, so gradients flow
back through them); anything else is repeated for every device."""
import warnings

from ..._tensor import Tensor
from . import comm

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _is_namedtuple(obj):
    """Whether `obj` is a namedtuple (a tuple with `_asdict` and `_fields`)."""
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def is_namedtuple(obj):
    """Deprecated in PyTorch, kept for old callers."""
    warnings.warn("`is_namedtuple` is deprecated, please use the python checks instead",
                  FutureWarning, stacklevel=2)
    return _is_namedtuple(obj)


def scatter(inputs, target_gpus, dim=0):
    """`inputs` as one structure per device of `target_gpus`, tensors split along `dim`."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return comm.scatter(obj, target_gpus, None, dim)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """Positional and keyword inputs scattered alike; the shorter list is padded with empty
    `()`/`{}` so each device gets both."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _gather_tensors(target_device, dim, tensors):
    if any(t.device.type == "cpu" for t in tensors):
        raise AssertionError("Gather function not implemented for CPU tensors")
    if all(t.dim() == 0 for t in tensors) and dim == 0:
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were scalars; "
                      "will instead unsqueeze and return a vector.", stacklevel=3)
        tensors = [t.view(1) for t in tensors]
    if target_device != "cpu":
        target_device = comm._get_device_index(target_device, True)
    return comm.gather(tensors, dim, target_device)


def gather(outputs, target_device, dim=0):
    """Per-device `outputs` (same structure each) merged on `target_device`: tensors
    concatenated along `dim`, dicts and sequences merged entry by entry."""
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            return _gather_tensors(target_device, dim, outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs)))
        return type(out)(map(gather_map, zip(*outputs)))

    return gather_map(outputs)

"""`torch.fx.passes.shape_prop`: run a GraphModule on example inputs and record each node's
result shape, dtype and layout in `node.meta['tensor_meta']`."""
from typing import NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["ShapeProp", "TensorMetadata"]


class TensorMetadata(NamedTuple):
    shape: object
    dtype: object
    requires_grad: bool
    stride: tuple
    memory_format: object
    is_quantized: bool
    qparams: dict


def _extract(t):
    from ..._memory_format import channels_last, contiguous_format
    memory_format = None
    for fmt in (contiguous_format, channels_last):
        if t.is_contiguous(memory_format=fmt):
            memory_format = fmt
            break
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)

    def run_node(self, n):
        from ..._tensor import Tensor
        result = super().run_node(n)
        found = []

        def meta(x):
            if isinstance(x, Tensor):
                found.append(True)
                return _extract(x)
            return x
        value = map_aggregate(result, meta)
        if found:
            n.meta["tensor_meta"] = value
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        return super().run(*args)

"""QConfig: which observers (as factories) watch a module's activation and weight, and the
ready-made configurations for dynamic quantization (PyTorch's `torch.ao.quantization.qconfig`)."""
from collections import namedtuple

from ... import dtypes as _dt
from ...nn.modules.module import Module
from .observer import (PlaceholderObserver, default_dynamic_quant_observer,
                       default_weight_observer)

__all__ = ["QConfig", "default_dynamic_qconfig", "float16_dynamic_qconfig", "qconfig_equals"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """How to quantize a layer: `activation` and `weight` are observer factories (classes or
    `Observer.with_args(...)`), never observer instances, so each layer gets its own."""
    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, Module) or isinstance(weight, Module):
            raise ValueError(
                "QConfig received observer instance, please pass observer class instead. "
                "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                  weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(
    activation=PlaceholderObserver.with_args(dtype=_dt.float16, is_dynamic=True),
    weight=PlaceholderObserver.with_args(dtype=_dt.float16))


def qconfig_equals(q1, q2):
    """Whether two qconfigs build the same observers (factories compared by what they make)."""
    if q1 is None or q2 is None:
        return q1 == q2

    def same(f1, f2):
        p1, p2 = getattr(f1, "partial", f1), getattr(f2, "partial", f2)
        if hasattr(p1, "func") and hasattr(p2, "func"):
            return p1.func is p2.func and p1.args == p2.args and p1.keywords == p2.keywords
        return p1 == p2
    return same(q1.activation, q2.activation) and same(q1.weight, q2.weight)

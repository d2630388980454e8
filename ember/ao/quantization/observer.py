"""Observers: modules that watch the values flowing through them and choose the scale and zero
point that map those values onto an integer range (PyTorch's `torch.ao.quantization.observer`).

ember covers what dynamic quantization uses: `MinMaxObserver` (running min and max, affine or
symmetric) for weights, `PlaceholderObserver` (records only the target dtype) for activations
that are quantized on the fly and for float16 weights. `with_args` makes the factories that
a `QConfig` holds."""
import functools

import numpy as np

from ... import _qscheme
from ... import dtypes as _dt
from ...nn.modules.module import Module
from ...ops.creation import tensor

__all__ = ["ObserverBase", "MinMaxObserver", "PlaceholderObserver", "default_weight_observer",
           "default_dynamic_quant_observer", "default_placeholder_observer"]

_EPS = float(np.finfo(np.float32).eps)


class _PartialWrapper:
    """A factory with some arguments bound; prints as PyTorch's does (the partial, then `{}`)."""

    def __init__(self, partial):
        self.partial = partial

    def __call__(self, *args, **kwargs):
        return self.partial(*args, **kwargs)

    def __repr__(self):
        return repr(self.partial) + "{}"

    def with_args(self, **kwargs):
        return _PartialWrapper(functools.partial(self.partial, **kwargs))


class ObserverBase(Module):
    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    @classmethod
    def with_args(cls, **kwargs):
        return _PartialWrapper(functools.partial(cls, **kwargs))


def _default_range(dtype, reduce_range):
    """The integer range of `dtype`, halved (one bit fewer) under reduce_range."""
    if dtype in (_dt.qint8, _dt.int8):
        low, high = -128, 127
    elif dtype in (_dt.quint8, _dt.uint8):
        low, high = 0, 255
    elif dtype in (_dt.qint32, _dt.int32):
        low, high = -2 ** 31, 2 ** 31 - 1
    else:
        raise ValueError(f"Unsupported dtype for observer: {dtype}")
    if reduce_range:
        low, high = low // 2, high // 2
    return low, high


class MinMaxObserver(ObserverBase):
    """Keeps the running minimum and maximum of what it sees; `calculate_qparams` turns them
    into a scale and zero point (float32 arithmetic, as PyTorch's)."""

    def __init__(self, dtype=_dt.quint8, qscheme=_qscheme.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False,
                 **kwargs):
        super().__init__(dtype, is_dynamic)
        if qscheme not in (_qscheme.per_tensor_affine, _qscheme.per_tensor_symmetric):
            raise NotImplementedError(
                "MinMaxObserver's qscheme only support torch.per_tensor_symmetric "
                "and torch.per_tensor_affine.")
        self.qscheme = qscheme
        self.reduce_range = reduce_range
        self.eps = eps
        if (quant_min is None) != (quant_max is None):
            raise ValueError("quant_min and quant_max must both be given or both be None")
        if quant_min is None:
            quant_min, quant_max = _default_range(dtype, reduce_range)
        elif not quant_min <= 0 <= quant_max:
            raise AssertionError("Used-specified quantization range must include 0.")
        self.quant_min, self.quant_max = quant_min, quant_max
        self.register_buffer("min_val", tensor(float("inf")))
        self.register_buffer("max_val", tensor(float("-inf")))

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        values = x_orig.detach().float().cpu().numpy()
        self.min_val.fill_(min(float(self.min_val), float(values.min())))
        self.max_val.fill_(max(float(self.max_val), float(values.max())))
        return x_orig

    def calculate_qparams(self):
        """(scale, zero_point): float32 and int64 tensors of one element."""
        f32 = np.float32
        min_neg = min(f32(float(self.min_val)), f32(0))
        max_pos = max(f32(float(self.max_val)), f32(0))
        if not np.isfinite(min_neg) or not np.isfinite(max_pos):
            # nothing observed yet: PyTorch warns and answers the neutral parameters
            return tensor([1.0]), tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        if self.qscheme is _qscheme.per_tensor_symmetric:
            max_pos = max(-min_neg, max_pos)
            scale = max(f32(max_pos / f32((quant_max - quant_min) / 2)), f32(self.eps))
            zero_point = (quant_min + quant_max + 1) // 2 if self.dtype in (
                _dt.quint8, _dt.uint8) else 0
        else:
            scale = max(f32((max_pos - min_neg) / f32(quant_max - quant_min)), f32(self.eps))
            zero_point = quant_min - int(np.rint(min_neg / scale))
            zero_point = min(max(zero_point, quant_min), quant_max)
        return tensor([float(scale)]), tensor([int(zero_point)])

    def extra_repr(self):
        return f"min_val={float(self.min_val)}, max_val={float(self.max_val)}"


class PlaceholderObserver(ObserverBase):
    """Observes nothing: it carries the dtype (and range) a value is to be quantized to, for
    what is quantized on the fly (dynamic activations) or cast (float16 weights)."""

    def __init__(self, dtype=_dt.float32, custom_op_name="", compute_dtype=None,
                 quant_min=None, quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype, is_dynamic)
        if qscheme is None:
            qscheme = _qscheme.per_tensor_affine
        self.qscheme = qscheme
        self.quant_min, self.quant_max = quant_min, quant_max
        self.eps = eps
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")


default_weight_observer = MinMaxObserver.with_args(dtype=_dt.qint8,
                                                   qscheme=_qscheme.per_tensor_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=_dt.quint8, quant_min=0, quant_max=255, is_dynamic=True)
default_placeholder_observer = PlaceholderObserver

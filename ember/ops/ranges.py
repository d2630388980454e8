"""Ranges and grids of numbers: `arange`, `range`, `linspace`, `logspace` and `eye`, with
PyTorch's result dtypes, size rules and messages (the other factories are in `creation`)."""
import builtins
import math
import numbers

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import backend_of
from ._fma import fused_multiply_add
from .creation import (_finish, _float_dtype, _is_int, check_factory_grad, factory_out,
                       resolve_device)

__all__ = ["arange", "range", "linspace", "logspace", "eye"]
METHODS = []


# ---- ranges --------------------------------------------------------------------------------------
def _number(v):
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _is_float_arg(v):
    return isinstance(v, (builtins.float, np.floating)) or (
        isinstance(v, Tensor) and v.dtype.is_floating_point)


def _is_number(v):
    """What PyTorch's parser takes as a Number: a Python or NumPy number, a 0-dim tensor."""
    return isinstance(v, (numbers.Number, np.generic)) or (isinstance(v, Tensor) and not v.dim())


_ARANGE_OVERLOADS = (
    "(Number end, *, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
    "(Number start, Number end, *, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)",
    "(Number start, Number end, Number step = 1, *, Tensor out = None, torch.dtype dtype = None, "
    "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)")


def _check_arange_numbers(start, end, step):
    if end is None:
        if not _is_number(start):
            raise TypeError(f"arange(): argument 'end' (position 1) must be Number, not "
                            f"{type(start).__name__}")
        return
    given = (start, end) if type(step) is builtins.int and step == 1 else (start, end, step)
    if not builtins.all(_is_number(v) for v in given):
        raise TypeError("arange() received an invalid combination of arguments - got "
                        f"({', '.join(type(v).__name__ for v in given)}), but expected one of:\n"
                        + "".join(f" * {o}\n" for o in _ARANGE_OVERLOADS))


def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    _check_arange_numbers(start, end, step)
    if end is None:
        start, end = 0, start
    is_float = builtins.any(_is_float_arg(v) for v in (start, end, step))
    start, end, step = _number(start), _number(end), _number(step)
    if dtype is None:
        d = out.dtype if out is not None else (_dt.get_default_dtype() if is_float else _dt.int64)
    else:
        d = _dt.to_dtype(dtype)
    if d is _dt.bool or d.is_complex or d._kind:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{d._scalar_name}\'')
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dev = resolve_device(device)
    # on a GPU the values are made there, as PyTorch's kernel makes them: a copy from host
    # memory would wait for the stream's queued work (a GPT step's positions did, each step)
    xp = backend_of(dev).xp if dev.type == "cuda" and np.dtype(d.np).type.__module__ == \
        "numpy" else np
    if d.is_floating_point:
        n = math.ceil((end - start) / step)
        # PyTorch accumulates in double for float/double, in float for half/bfloat16
        acc = np.float32 if d in (_dt.float16, _dt.bfloat16) else np.float64
        arr = acc(start) + xp.arange(n, dtype=acc) * acc(step)
    else:
        istart, iend, istep = builtins.int(start), builtins.int(end), builtins.int(step)
        if d is _dt.int64:  # integer arithmetic on the truncated bounds
            if istep == 0:  # a fractional step truncated to 0: PyTorch's ValueError here
                raise ValueError("step must be nonzero")
            sgn = (istep > 0) - (istep < 0)
            n = (iend - istart + istep - sgn) // istep
        else:  # the count in double, the values from the truncated start and step
            n = math.ceil((end - start) / step)
        n = builtins.max(n, 0)
        if istep and builtins.abs(istart) + builtins.abs(n * istep) < 1 << 62:
            # (a step truncated to 0 repeats the start; past int64 the general form's wrap)
            # the same integers in one call (a device's launch) where three ran
            arr = xp.arange(istart, istart + n * istep, istep, dtype=np.int64)
        else:
            arr = istart + xp.arange(n, dtype=np.int64) * istep
    arr = arr.astype(d.np, copy=False)
    if xp is np:
        t = _finish(arr, dev, requires_grad)
    else:
        check_factory_grad(d, requires_grad)
        t = make_tensor(arr, dev)
        t._requires_grad = builtins.bool(requires_grad)
    return t if out is None else factory_out(out, t, "arange")


def _fmt(x):
    return f"{x:g}" if isinstance(x, builtins.float) else str(x)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
                  "which produces values in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    d = _float_dtype(dtype)
    n = builtins.int(math.floor((end - start) / step)) + 1
    arr = start + np.arange(n, dtype=np.float64) * step
    t = _finish(arr.astype(d.np), resolve_device(device), requires_grad)
    return t if out is None else factory_out(out, t, "range")


def _steps_arg(start, end, steps, fname):
    if not _is_int(steps):
        got = ", ".join(type(v).__name__ for v in (start, end, steps))
        raise TypeError(f"{fname}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return builtins.int(steps)


def _line(start, end, steps, d, fname, fused=False):
    """PyTorch's linspace kernel: start and end converted to the dtype first, the first half
    counted up from start and the second down from end, in the dtype's own arithmetic."""
    if d is _dt.bool:
        raise NotImplementedError(f'"{fname}_cpu" not implemented for \'Bool\'')
    i = np.arange(steps)
    if d.is_floating_point or d.is_complex:
        # (c10::Half and BFloat16 compute in float)
        work = np.float32 if d in (_dt.float16, _dt.bfloat16) else d.np.type
        start, end = work(d.np.type(start)), work(d.np.type(end))
        idx = i.astype(work)
    else:
        work = np.float64  # an integer dtype steps in double
        start, end = builtins.int(start), builtins.int(end)
        idx = i.astype(np.float64)
    if steps == 1:
        return np.full(1, start, dtype=work)
    step = (np.asarray(end, work) - np.asarray(start, work)) / work(steps - 1)
    step = np.asarray(step, dtype=work)
    halfway = steps // 2
    back = (steps - i - 1).astype(idx.dtype)
    if fused and d in (_dt.float32, _dt.float64):
        # PyTorch's compiled linspace kernel fuses each multiply-add (one rounding, not two):
        # unfused sums differ from its values in the last place (-1..1 in 101 steps: 37 of them)
        up, down = fused_multiply_add(step, idx, start), fused_multiply_add(-step, back, end)
    else:
        up, down = start + step * idx, end - step * back
    return np.where(i < halfway, up, down).astype(work, copy=False)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    is_complex = builtins.any(isinstance(_number(v), builtins.complex) for v in (start, end))
    steps = _steps_arg(start, end, steps, "linspace")
    start, end = _number(start), _number(end)
    if dtype is None:
        d = out.dtype if out is not None else (
            _dt.scalar_dtype(1j) if is_complex else _dt.get_default_dtype())
    else:
        d = _dt.to_dtype(dtype)
    arr = _line(start, end, steps, d, "linspace", fused=True).astype(d.np)
    t = _finish(arr, resolve_device(device), requires_grad)
    return t if out is None else factory_out(out, t, "linspace")


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    steps = _steps_arg(start, end, steps, "logspace")
    start, end = _number(start), _number(end)
    d = _dt.to_dtype(dtype) if dtype is not None else (
        out.dtype if out is not None else _dt.get_default_dtype())
    exps = _line(start, end, steps, d, "logspace")
    # the power is taken in double (std::pow(double base, exponent)), then converted
    wide = np.complex128 if d.is_complex else np.float64
    arr = np.power(np.asarray(base, dtype=wide), exps.astype(wide)).astype(d.np)
    t = _finish(arr, resolve_device(device), requires_grad)
    return t if out is None else factory_out(out, t, "logspace")


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    for name, v, pos in (("n", n, 1), ("m", m, 2)):
        if v is not None and not _is_int(v):
            raise TypeError(f"eye(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}")
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    m = n if m is None else m
    d = _dt.to_dtype(dtype) if dtype is not None else (
        out.dtype if out is not None else _dt.get_default_dtype())
    t = _finish(np.eye(n, m, dtype=d.np), resolve_device(device), requires_grad)
    return t if out is None else factory_out(out, t, "eye")

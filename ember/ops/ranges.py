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
from ._libm import libm
from .creation import (_convert_scalar, _finish, _float_dtype, _is_int, check_factory_grad,
                       factory_out, resolve_device)

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
    if d in _HALVES:
        return _half_line(start, end, steps, d)
    i = np.arange(steps)
    if d.is_floating_point or d.is_complex:
        work = d.np.type
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
        # (the index negated, not the step: a NaN step keeps its sign, as in PyTorch)
        up, down = fused_multiply_add(step, idx, start), fused_multiply_add(step, -back, end)
    else:
        up, down = start + step * idx, end - step * back
    return np.where(i < halfway, up, down).astype(work, copy=False)


_HALVES = (_dt.float16, _dt.bfloat16)
_REAL_FLOATS = _HALVES + (_dt.float32, _dt.float64)  # (not the float8 types: PyTorch has no
#                                                       linspace for them)


def _rounded(x, d):
    """x (float32, or float64 for float64) rounded to the real floating dtype `d`, held in
    float32 for float16 and bfloat16: c10's Half and BFloat16 compute each operation in
    float and round its result to the type, so every step of their arithmetic is this."""
    if d is _dt.bfloat16:  # (its conversion makes every NaN the one positive quiet NaN)
        x = np.where(np.isnan(x), np.float32(np.nan), x)
    if d in _HALVES:
        return np.asarray(x, np.float32).astype(d.np).astype(np.float32)
    return np.asarray(x, d.np)


def _bound(value, d):
    """A start or end (already checked by `_check_conversion`) as PyTorch's Scalar conversion to
    the real floating dtype `d` makes it: a double goes to a half type through float, two
    roundings (1 + 2**-11 + 2**-40 is 1.0 in float16, not the nearest 1.001)."""
    return _rounded(np.float32(value) if d in _HALVES else value, d)


def _check_conversion(d, steps, start, end=None):
    """PyTorch converts the bounds to a floating dtype with its overflow check (a finite
    value past the dtype's range raises) where steps > 1; a single step is a fill with the
    start (linspace) or its power (logspace), which checks float32 and float64 but converts
    to float16 and bfloat16 unchecked (1e39 is inf)."""
    if steps > 1 and d in _REAL_FLOATS:
        _convert_scalar(start, d), _convert_scalar(end, d)
    elif steps == 1 and d in (_dt.float32, _dt.float64):
        _convert_scalar(start, d)


def _half_line(start, end, steps, d):
    """PyTorch's CPU linspace of float16 and bfloat16 (float32 values of the dtype): its
    kernel is serial for every dtype (no vector path whose chunks could split the halves
    differently), and for these two the step is of the dtype itself, so each operation
    rounds to it: the difference of the bounds, the count steps - 1 and the step itself;
    the index, which is converted to the dtype before the multiply (so from 2049 in
    float16 and 257 in bfloat16 it rounds), the product, and the sum. An overflowing
    difference makes the step inf and the values inf or NaN, as in PyTorch."""
    with np.errstate(all="ignore"):
        if steps == 1:  # (filled with the start, through float, unchecked)
            return _rounded(np.float32(start), d).reshape(1)
        start, end = _bound(start, d), _bound(end, d)
        step = _rounded(_rounded(end - start, d) / _rounded(np.float32(steps - 1), d), d)
        i = np.arange(steps)
        up = _rounded(start + _rounded(step * _rounded(i.astype(np.float32), d), d), d)
        back = _rounded((steps - 1 - i).astype(np.float32), d)
        down = _rounded(end - _rounded(step * back, d), d)
        return np.where(i < steps // 2, up, down)


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
    _check_conversion(d, steps, start, end)
    arr = _line(start, end, steps, d, "linspace", fused=True).astype(d.np)
    t = _finish(arr, resolve_device(device), requires_grad)
    return t if out is None else factory_out(out, t, "linspace")


def _log_exponents(start, end, steps, d):
    """PyTorch's logspace exponents for a real floating dtype `d`, in double: the bounds
    converted to `d` and their difference taken in `d`, but the step (that difference over
    steps - 1) and start + step * i (below steps // 2; end - step * (steps - 1 - i) from
    there) in double, unfused; a single step is the start as given, unconverted."""
    if steps == 1:
        return np.full(1, builtins.float(start))
    start, end = _bound(start, d), _bound(end, d)
    with np.errstate(all="ignore"):
        step = np.float64(_rounded(end - start, d)) / (steps - 1)
        i = np.arange(steps)
        up = np.float64(start) + step * i
        down = np.float64(end) - step * (steps - 1 - i)
    return np.where(i < steps // 2, up, down)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    steps = _steps_arg(start, end, steps, "logspace")
    start, end = _number(start), _number(end)
    d = _dt.to_dtype(dtype) if dtype is not None else (
        out.dtype if out is not None else _dt.get_default_dtype())
    if steps > 1:
        _check_conversion(d, steps, start, end)
    if d in _REAL_FLOATS:
        exps = _log_exponents(start, end, steps, d)
    else:
        exps = _line(start, end, steps, d, "logspace")
    # the power is taken in double (std::pow(double base, exponent)), then converted (to a
    # half type through float, as c10 converts a double)
    wide = np.complex128 if d.is_complex else np.float64
    with np.errstate(over="ignore", invalid="ignore"):
        arr = (np.power(np.asarray(base, dtype=wide), exps.astype(wide)) if d.is_complex
               else libm("power", base, exps))
        if steps == 1:  # (the fill value is the power)
            _check_conversion(d, steps, arr[0].item())
        if d in _HALVES:
            arr = _rounded(arr.astype(np.float32), d)
        arr = arr.astype(d.np)
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

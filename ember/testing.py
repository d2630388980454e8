"""`ember.testing.assert_close`, with PyTorch's default tolerances per dtype and its message;
the deprecated `assert_allclose` (its own, looser defaults) that older tutorials call."""
import numpy as np

from . import dtypes as _dt
from ._tensor import Tensor

__all__ = ["assert_close", "make_tensor"]  # assert_allclose is deprecated, as PyTorch's

_TOLERANCES = {_dt.float16: (1e-3, 1e-5), _dt.bfloat16: (1.6e-2, 1e-5),
               _dt.float32: (1.3e-6, 1e-5), _dt.float64: (1e-7, 1e-7),
               _dt.complex64: (1.3e-6, 1e-5), _dt.complex128: (1e-7, 1e-7)}


def _as_tensor(x):
    from .ops.creation import tensor
    if isinstance(x, Tensor):
        return x
    # a Python float or complex compares in double precision (PyTorch's tolerances for it)
    return tensor(x, dtype={float: _dt.float64, complex: _dt.complex128}.get(type(x)))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                 f"{len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            raise AssertionError("The keys of the mappings do not match")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)
        return
    a, e = _as_tensor(actual), _as_tensor(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {a.shape} != "
                             f"{e.shape}.")
    if check_dtype and a.dtype is not e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {a.dtype} != "
                             f"{e.dtype}.")
    if check_device and a.device != e.device:
        raise AssertionError(msg or f"The values for attribute 'device' do not match: {a.device} "
                             f"!= {e.device}.")
    if rtol is None:
        rtol, atol = _TOLERANCES.get(a.dtype, (0.0, 0.0))
    x = a.detach().cpu()._array.astype(np.float64 if not a.is_complex() else np.complex128)
    y = e.detach().cpu()._array.astype(x.dtype)
    close = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    raise AssertionError(msg or _mismatch_message(a, e, close, rtol, atol))


def _mismatch_message(a, e, matches, rtol, atol):
    """PyTorch's text: a 0-dim pair as "Scalars" with both values; else "Tensor-likes" with the
    greatest differences among the mismatches, computed in the tensors' dtype (integers in
    int64, their ratio in float32) and printed as Python numbers. A tolerance of zero on
    both reads "not equal!" and no "(up to ... allowed)"."""
    equal = rtol == 0 and atol == 0

    def line(kind, value, index, tol):
        text = (f"{kind.title()} difference: {value}" if index is None else
                f"Greatest {kind} difference: {value} at index {index}")
        return text if equal else f"{text} (up to {tol} allowed)"

    if a.dim() == 0:
        actual, expected = a.item(), e.item()
        abs_diff = abs(actual - expected)
        rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
        kind, extra, at_abs, at_rel = "Scalars", f"Expected {expected} but got {actual}.", None, None
    else:
        x, y = (t.detach().cpu()._array.reshape(-1) for t in (a, e))
        if x.dtype.kind in "biu":
            x, y = x.astype(np.int64), y.astype(np.int64)
        bad = ~matches.reshape(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = np.abs(x - y)
            diff[~bad] = 0
            rel = (diff.astype(np.float32) / np.abs(y).astype(np.float32)
                   if diff.dtype.kind == "i" else diff / np.abs(y))
        rel[~bad] = 0
        i, j = int(np.argmax(diff)), int(np.argmax(rel))  # (the first NaN, as torch.max)
        abs_diff, rel_diff = diff[i].item(), rel[j].item()
        at_abs, at_rel = (tuple(int(k) for k in np.unravel_index(n, a.shape)) for n in (i, j))
        total = x.size
        extra = (f"Mismatched elements: {int(bad.sum())} / {total} "
                 f"({int(bad.sum()) / total:.1%})")
        kind = "Tensor-likes"
    return (f"{kind} are not {'equal' if equal else 'close'}!\n\n{extra}\n"
            f"{line('absolute', abs_diff, at_abs, atol)}\n{line('relative', rel_diff, at_rel, rtol)}")


_ALLCLOSE_TOLERANCES = {_dt.float16: (1e-3, 1e-3), _dt.float32: (1e-4, 1e-5),
                        _dt.float64: (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    import warnings
    from .ops.creation import tensor
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed "
                  "in a future release. Please use `torch.testing.assert_close()` instead. You "
                  "can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:  # the looser of the two dtypes' tolerances
        pairs = [_ALLCLOSE_TOLERANCES.get(t.dtype, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(r for r, _ in pairs), max(a for _, a in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    from .ops.creation import tensor
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
    d = _dt.to_dtype(dtype)
    rng = np.random.default_rng()
    if d is _dt.bool:
        arr = rng.integers(0, 2, shape).astype(bool)
    elif not (d.is_floating_point or d.is_complex):
        arr = rng.integers(-9 if low is None else low, 10 if high is None else high, shape)
    else:
        arr = rng.uniform(-9 if low is None else low, 9 if high is None else high, shape)
    t = tensor(arr, dtype=d, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t

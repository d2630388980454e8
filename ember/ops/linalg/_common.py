"""Helpers shared by the products' modules: the operand checks, bfloat16 results rounded
back, `out=`, small pieces of backward formulas (`_scaled`, `_needs`), and `_warn_once` for
deprecations (which the decompositions family uses too).
"""
from ..._tensor import Tensor


def _check_same(a, b, what):
    if not isinstance(a, Tensor):  # `(1,) @ t` reaches here too, and must be a TypeError
        raise TypeError(f"{what}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(a).__name__}")
    if not isinstance(b, Tensor):
        raise TypeError(f"{what}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(b).__name__}")
    if a._array.dtype is not b._array.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype._cpp_name} != {b.dtype._cpp_name}")
    if a._device != b._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {a._device} and {b._device}!")


def _same_dtype(arr, like):
    """NumPy's matmul of ml_dtypes' bfloat16 answers in float32: round back, as PyTorch's
    bfloat16 products (accumulated in float32) do."""
    return arr if arr.dtype == like.dtype else arr.astype(like.dtype)


def _out(res, out, fname):
    if out is None:
        return res
    from .._graph import write_out
    return write_out(out, res, fname)


def _scaled(t, s):
    return t if s == 1 else t * s


def _needs(node, i):
    return node._next[i][0] is not None


_WARNED = set()


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        import warnings
        warnings.warn(message, UserWarning, stacklevel=3)

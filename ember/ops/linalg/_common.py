"""Helpers shared by the products' modules: the operand checks, bfloat16 results rounded
back, `out=`, small pieces of backward formulas (`_scaled`, `_needs`).
"""
from ..._tensor import Tensor


def mm_dtype_error(a, b):
    """mm's dtype error for operands a and b (None when they agree)."""
    if a.dtype is b.dtype:
        return None
    return f"expected m1 and m2 to have the same dtype, but got: {a.dtype._cpp_name} != " \
           f"{b.dtype._cpp_name}"


def _check_same(a, b, what, dtype_error=mm_dtype_error):
    """The operands of a product: tensors of one dtype on one device. `dtype_error(a, b)`
    words a dtype mismatch as the op does (None: the product this op dispatches to checks
    the dtypes, as matmul's do)."""
    if not isinstance(a, Tensor):  # `(1,) @ t` reaches here too, and must be a TypeError
        raise TypeError(f"{what}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(a).__name__}")
    if not isinstance(b, Tensor):
        raise TypeError(f"{what}(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(b).__name__}")
    message = dtype_error(a, b) if dtype_error is not None else None
    if message is not None:
        raise RuntimeError(message)
    if a._device != b._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {a._device} and {b._device}!")


def mv_dtype_error(result_like, mat, vec):
    """mv/addmv's dtype error (None when they agree); mv's result takes vec's dtype."""
    names = [t.dtype._scalar_name for t in (result_like, mat, vec)]
    if len(set(names)) == 1:
        return None
    return f"addmv input tensors must have the same dtype, but got {', '.join(names[:2])}, " \
           f"and {names[2]}"


def bmm_dtype_error(a, b):
    """A batched product's dtype error (None when they agree)."""
    if a.dtype is b.dtype:
        return None
    return f"expected scalar type {a.dtype._scalar_name} but found {b.dtype._scalar_name}"


def _same_dtype(arr, like):
    """NumPy's matmul of ml_dtypes' bfloat16 answers in float32: round back, as PyTorch's
    bfloat16 products (accumulated in float32) do."""
    return arr if arr.dtype == like.dtype else arr.astype(like.dtype)


def _out(res, out, fname):
    if out is None:
        return res
    from .._writes import write_out
    return write_out(out, res, fname)


def _scaled(t, s):
    return t if s == 1 else t * s


def _needs(node, i):
    return node._next[i][0] is not None

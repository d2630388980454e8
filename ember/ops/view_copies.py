"""The `*_copy` forms of the view ops (`permute_copy`, `select_copy`, `split_copy` ...): the
view op's values in memory of their own, laid out contiguously, as PyTorch's functionalised
ops give them. Each is its view op followed by a contiguous clone, so its gradient is the view
op's (the clone's backward passes the gradient through)."""
import builtins

from .. import _memory_format as _mf
from .._tensor import Tensor, _wrap_dim
from ._writes import write_out
from .complex_views import view_as_complex, view_as_real
from .rearrange import diagonal, split, split_with_sizes
from .shape import (clone, permute, select, squeeze, t, transpose, unbind, unsqueeze,
                    view)
from .strided import as_strided, unfold

__all__ = ["view_copy", "permute_copy", "transpose_copy", "t_copy", "squeeze_copy",
           "unsqueeze_copy", "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy",
           "unbind_copy", "unfold_copy", "diagonal_copy", "detach_copy", "alias_copy",
           "as_strided_copy", "values_copy", "indices_copy", "view_as_real_copy",
           "view_as_complex_copy"]
METHODS = []


def _write(out, copy, fname):
    """PyTorch's `*_copy(..., out=)`: `out` must have the result's dtype exactly (no cast);
    unlike most ops' out= forms, an input that requires grad is no error."""
    if isinstance(out, Tensor) and out.dtype is not copy.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {copy.dtype._cpp_name}, but got "
                           f"{out.dtype._cpp_name} instead")
    return write_out(out, copy.detach(), fname)


def _own(result, out, fname):
    copy = clone(result, memory_format=_mf.contiguous_format)
    return copy if out is None else _write(out, copy, fname)


def _own_all(results, out, fname):
    copies = [clone(r, memory_format=_mf.contiguous_format) for r in results]
    if out is None:
        return copies
    if len(out) != len(copies):
        raise RuntimeError(f"{fname}_Tensor_out() expected an out= argument of size "
                           f"{len(copies)}, got size {len(out)}")
    for o, c in zip(out, copies):
        _write(o, c, fname)
    return None


def _check_input(input, fname):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def view_copy(input, size=None, *, dtype=None, out=None):
    """`input.view(size)` or `input.view(dtype)` (the bytes reinterpreted) in new memory."""
    _check_input(input, "view_copy")
    if (size is None) == (dtype is None):
        raise TypeError("view_copy() takes a size or a dtype (exactly one)")
    return _own(view(input, size if dtype is None else dtype), out, "view_copy")


def permute_copy(input, dims, *, out=None):
    _check_input(input, "permute_copy")
    return _own(permute(input, dims), out, "permute_copy")


def transpose_copy(input, dim0, dim1, *, out=None):
    _check_input(input, "transpose_copy")
    return _own(transpose(input, dim0, dim1), out, "transpose_copy")


def t_copy(input, *, out=None):
    _check_input(input, "t_copy")
    return _own(t(input), out, "t_copy")


def squeeze_copy(input, dim=None, *, out=None):
    _check_input(input, "squeeze_copy")
    return _own(squeeze(input, dim), out, "squeeze_copy")


def unsqueeze_copy(input, dim, *, out=None):
    _check_input(input, "unsqueeze_copy")
    return _own(unsqueeze(input, dim), out, "unsqueeze_copy")


def select_copy(input, dim, index, *, out=None):
    _check_input(input, "select_copy")
    return _own(select(input, dim, index), out, "select_copy")


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """`input` sliced `start:end:step` along `dim`, in new memory."""
    _check_input(input, "slice_copy")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    if input._array.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input._array.ndim)
    index = (builtins.slice(None),) * d + (builtins.slice(start, end, step),)
    return _own(input[index], out, "slice_copy")


def split_copy(input, split_size, dim=0, *, out=None):
    _check_input(input, "split_copy")
    return _own_all(split(input, split_size, dim), out, "split_copy")


def split_with_sizes_copy(input, split_sizes, dim=0, *, out=None):
    _check_input(input, "split_with_sizes_copy")
    return _own_all(split_with_sizes(input, split_sizes, dim), out, "split_with_sizes_copy")


def unbind_copy(input, dim=0, *, out=None):
    _check_input(input, "unbind_copy")
    return _own_all(unbind(input, dim), out, "unbind_copy")


def unfold_copy(input, dimension, size, step, *, out=None):
    _check_input(input, "unfold_copy")
    return _own(unfold(input, dimension, size, step), out, "unfold_copy")


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    _check_input(input, "diagonal_copy")
    return _own(diagonal(input, offset, dim1, dim2), out, "diagonal_copy")


def detach_copy(input, *, out=None):
    _check_input(input, "detach_copy")
    return _own(input.detach(), out, "detach_copy")


def alias_copy(input, *, out=None):
    _check_input(input, "alias_copy")
    return _own(input, out, "alias_copy")


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    _check_input(input, "as_strided_copy")
    return _own(as_strided(input, size, stride, storage_offset), out, "as_strided_copy")


def values_copy(input, *, out=None):
    """A sparse COO tensor's values, in new memory."""
    _check_input(input, "values_copy")
    return _own(input.values(), out, "values_copy")


def indices_copy(input, *, out=None):
    _check_input(input, "indices_copy")
    return _own(input.indices(), out, "indices_copy")


def view_as_real_copy(input, *, out=None):
    _check_input(input, "view_as_real_copy")
    return _own(view_as_real(input), out, "view_as_real_copy")


def view_as_complex_copy(input, *, out=None):
    _check_input(input, "view_as_complex_copy")
    return _own(view_as_complex(input), out, "view_as_complex_copy")

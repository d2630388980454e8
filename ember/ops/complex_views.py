"""Complex numbers as pairs of reals: `view_as_real` / `view_as_complex` (views sharing
memory), `Tensor.real` / `Tensor.imag` (selections of the real view, so writes through them
reach the complex tensor), `complex`, `polar`, `conj_physical` and the conjugate/negative
bit queries.

ember's `conj` materialises its result (PyTorch only sets a bit): the result carries the
bit PyTorch would report (`is_conj`), and `resolve_conj` gives it back without it.
"""
import numpy as np

from .. import dtypes as _dt
from .._tensor import make_tensor, Tensor, xp_of
from ._graph import Node, record
from ._writes import inplace
from .shape import make_view_of, select

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "complex", "polar",
           "conj_physical", "conj_physical_", "is_conj", "resolve_conj", "resolve_neg", "is_neg"]
METHODS = ["conj_physical", "conj_physical_", "is_conj", "resolve_conj", "resolve_neg",
           "is_neg"]


def _strided(xp, arr, shape, strides):
    if xp is np:
        return np.lib.stride_tricks.as_strided(arr, shape, strides, writeable=True)
    return xp.lib.stride_tricks.as_strided(arr, shape, strides)


class ViewAsRealBackward0(Node):
    def backward(self, grad):
        return view_as_complex(grad.contiguous())


def view_as_real(input):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")
    return _view_as_real(input)


def _view_as_real(input):
    arr = input._array
    if input.dtype._kind:  # complex32: its float16 pairs, viewed through the record's fields
        return _view_complex32_as_real(input)
    half = arr.real  # a view with the complex array's strides, over the real parts
    view = _strided(xp_of(input), half, arr.shape + (2,), arr.strides + (half.itemsize,))
    out = make_view_of(input, view, _view_as_real)
    record(ViewAsRealBackward0, (input,), out)
    return out


def _view_complex32_as_real(input):
    arr = input._array
    half = arr["real"]
    view = _strided(xp_of(input), half, arr.shape + (2,), arr.strides + (half.itemsize,))
    out = make_view_of(input, view, _view_as_real)
    record(ViewAsRealBackward0, (input,), out)
    return out


class ViewAsComplexBackward0(Node):
    def backward(self, grad):
        return _view_as_real(grad)


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def view_as_complex(input):
    arr = input._array
    if arr.dtype not in _COMPLEX_OF and arr.dtype != np.float16:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {input.dtype._scalar_name}")
    if arr.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if arr.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    strides = input.stride() if arr.size else (2,) * (arr.ndim - 1) + (1,)
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    xp = xp_of(input)
    shape = arr.shape[:-1]
    to = _COMPLEX_OF.get(arr.dtype, _dt.complex32.np)  # float16 pairs: complex32
    if arr.size:
        view = arr.view(to)[..., 0]
    else:
        view = xp.empty(shape, to)
    out = make_view_of(input, view, view_as_complex)
    record(ViewAsComplexBackward0, (input,), out)
    return out


def real(input):
    if not input.dtype.is_complex:
        return input
    return select(_view_as_real(input), -1, 0)


def imag(input):
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    out = select(_view_as_real(input), -1, 1)
    if is_conj(input):
        out._neg_bit = True
    return out


def _set_part(part):
    def setter(self, value):
        part(self).copy_(value)
    return setter


Tensor.real = property(real, _set_part(real))
Tensor.imag = property(imag, _set_part(imag))


# ---- building complex tensors -------------------------------------------------------------------
_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _check_pair(real_part, imag_part, fname):
    for name, v, pos in (("real", real_part, 1), ("imag", imag_part, 2)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{fname}(): argument '{name if fname == 'complex' else ('abs', 'angle')[pos - 1]}' "
                            f"(position {pos}) must be Tensor, not {type(v).__name__}")
    a, b = real_part._array.dtype, imag_part._array.dtype
    if a not in _FLOATS or b not in _FLOATS:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real_part.dtype._scalar_name} and {imag_part.dtype._scalar_name}")
    if a != b:
        raise RuntimeError(f"Expected object of scalar type {real_part.dtype._scalar_name} but got "
                           f"scalar type {imag_part.dtype._scalar_name} for second argument")
    if real_part._device != imag_part._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {real_part._device} and {imag_part._device}!")
    return xp_of(real_part), _COMPLEX_OF.get(a, _dt.complex32.np)  # half pairs: complex32


class ComplexBackward0(Node):
    def backward(self, grad):
        return (real(grad) if self.needs_input_grad[0] else None,
                imag(grad) if self.needs_input_grad[1] else None)


def complex(real, imag, *, out=None):
    xp, ct = _check_pair(real, imag, "complex")
    a, b = xp.broadcast_arrays(real._array, imag._array)
    if a.dtype == np.float16:  # complex32 (two float16 fields): its parts side by side
        res = xp.stack([a, b], axis=-1).view(ct)[..., 0]
    else:
        res = xp.empty(a.shape, ct)
        res.real, res.imag = a, b
    result = make_tensor(res, real._device)
    if out is not None:
        from ._writes import write_out
        return write_out(out, result, "complex")
    record(ComplexBackward0, (real, imag), result)
    return result


class PolarBackward0(Node):
    def backward(self, grad):
        r, theta = self.saved_tensors
        gr, gi = _parts(grad)
        c, s = theta.cos(), theta.sin()
        return (gr * c + gi * s if self.needs_input_grad[0] else None,
                r * (gi * c - gr * s) if self.needs_input_grad[1] else None)


def _parts(z):
    return real(z), imag(z)


def polar(abs, angle, *, out=None):
    xp, ct = _check_pair(abs, angle, "polar")
    if abs._array.dtype == np.float16:
        raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
    r, t = xp.broadcast_arrays(abs._array, angle._array)
    res = xp.empty(r.shape, ct)
    res.real, res.imag = r * xp.cos(t), r * xp.sin(t)
    result = make_tensor(res, abs._device)
    if out is not None:
        from ._writes import write_out
        return write_out(out, result, "polar")
    node = record(PolarBackward0, (abs, angle), result)
    if node is not None:
        node.save_for_backward(abs, angle)
    return result


# ---- conjugation ------------------------------------------------------------------------------
class ConjPhysicalBackward0(Node):
    def backward(self, grad):
        return conj_physical(grad)


def conj_physical(input, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"conj_physical(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.dtype.is_complex:
        if out is not None:
            return out.copy_(input)
        return input
    xp = xp_of(input)
    result = make_tensor(xp.conj(input._array), input._device)
    if out is not None:
        from ._writes import write_out
        return write_out(out, result, "conj_physical")
    record(ConjPhysicalBackward0, (input,), result)
    return result


class ConjPhysicalBackward1(ConjPhysicalBackward0):
    """conj_physical_ (recorded for real tensors too, where it changes nothing)."""


def conj_physical_(input):
    def compute(s):
        arr = s._array
        res = make_tensor(xp_of(s).conj(arr) if s.dtype.is_complex else arr.copy(), s._device)
        record(ConjPhysicalBackward1, (s,), res)
        return res
    return inplace(input, compute)


def is_conj(input):
    return input.__dict__.get("_conj_bit", False) if input.dtype.is_complex else False


def is_neg(input):
    return input.__dict__.get("_neg_bit", False)


def resolve_conj(input):
    return input.clone() if is_conj(input) else input


def resolve_neg(input):
    return input.clone() if is_neg(input) else input

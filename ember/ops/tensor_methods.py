"""`adjoint` (the conjugate matrix transpose, a function and a method) and tensor-only methods:
`new_empty_strided` (uninitialised memory laid out with the given strides) and the CPU
element-by-element Python callables `apply_` / `map_` / `map2_`. (The Python and NumPy protocols, `x in
t`, `reversed(t)`, `np.exp(t)`, are the Tensor's own, in _tensor.py.)
"""
import numbers

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor
from .creation import _like, empty_strided

__all__ = ["adjoint"]
METHODS = ["adjoint", "new_empty_strided", "apply_", "map_", "map2_"]


def adjoint(input):
    """The conjugate transpose of the last two dims (a view; conjugation is lazy in PyTorch)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"adjoint(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._array.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input._array.ndim}-D tensor.")
    t = input.transpose(-2, -1)
    return t.conj() if input.dtype.is_complex else t


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                      layout=None, pin_memory=False):
    """An uninitialised tensor of `size` whose memory is laid out with `stride` (elements)."""
    d, dev = _like(self, dtype, device, "new_empty_strided")
    return empty_strided(size, stride, dtype=d, device=dev, requires_grad=requires_grad)


def _check_apply(self, others, name):
    for t in (self,) + others:
        if t._requires_grad:
            raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                               f"var.detach().{name}() instead.")
    if self._device.type != "cpu":
        raise RuntimeError(f"{name} is only implemented on CPU tensors")


def _convert(value, dtype):
    if dtype.is_complex:
        if not isinstance(value, numbers.Complex):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        return complex(value)
    if dtype == _dt.bool:
        return bool(value)
    if not isinstance(value, numbers.Real):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return value


def _write(self, values):
    arr = self._array
    out = np.array([_convert(v, self.dtype) for v in values], dtype=object).reshape(arr.shape)
    with np.errstate(all="ignore"):
        arr[...] = out.astype(arr.dtype)  # an int tensor truncates a float, as C++'s cast
    # PyTorch writes the elements without bumping the version counter: so do we
    return self


def apply_(self, callable):
    """Replace each element x by callable(x) (a Python number); CPU only, no autograd."""
    _check_apply(self, (), "apply_")
    return _write(self, [callable(v) for v in self._array.ravel().tolist()])


def map_(self, tensor, callable):
    """Replace each element x by callable(x, y), y the matching element of `tensor`
    broadcast to self's shape; CPU only, no autograd."""
    _check_apply(self, (tensor,), "map_")
    if tensor.dtype != self.dtype:
        raise TypeError(f"map_: expected torch.{self.dtype._tensor_type} for 'other' (got "
                        f"torch.{tensor.dtype._tensor_type})")
    other = tensor.expand(self._array.shape)._array
    return _write(self, [callable(x, y) for x, y in zip(self._array.ravel().tolist(),
                                                        other.ravel().tolist())])


def map2_(self, x, y, callable):
    """Replace each element s by callable(s, a, b), a and b the matching elements of `x` and
    `y` broadcast to self's shape; CPU only, no autograd."""
    _check_apply(self, (x, y), "map2_")
    for name, t in (("x", x), ("y", y)):
        if t.dtype != self.dtype:
            raise TypeError(f"map2_: expected torch.{self.dtype._tensor_type} for argument "
                            f"'{name}' (got torch.{t.dtype._tensor_type})")
    shape = self._array.shape
    a, b = x.expand(shape)._array, y.expand(shape)._array
    return _write(self, [callable(s, p, q) for s, p, q in zip(
        self._array.ravel().tolist(), a.ravel().tolist(), b.ravel().tolist())])

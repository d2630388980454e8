"""The out-of-place writes into a view: `select_scatter`, `slice_scatter`, `diagonal_scatter`,
`as_strided_scatter` give a copy of `input` with `src` written where `select` / a slice /
`diagonal` / `as_strided` (on the contiguous copy) would look.

The forward writes into a fresh copy through ember's own view ops (one definition of where a
view lies); each backward is the pair (the gradient with zeros where src went, the gradient's
view), written with these same ops so it differentiates again.
"""
import builtins

from .._tensor import make_tensor
from ._graph import Node, record
from ._writes import writable, with_out

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter"]
METHODS = ["select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter"]


def _scatter(cls, input, src, view, attrs):
    out = make_tensor(input._array.copy(), input._device)
    target = view(out)
    if target._array.shape != src._array.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._array.shape)}, slice size = {list(target._array.shape)}")
    if src._device != input._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input._device} and {src._device}!")
    writable(target._array)[...] = src._array.astype(out._array.dtype, copy=False)
    node = record(cls, (input, src), out)
    if node is not None:
        node.view = view
        node.__dict__.update(attrs)
    return out


class _ScatterBackward(Node):
    def backward(self, grad):
        from .creation import zeros
        view = self.view(grad)
        grad_input = grad_src = None
        if self._next[0][0] is not None:
            grad_input = self.scatter(grad, zeros(view.shape, dtype=grad.dtype, device=grad.device))
        if self._next[1][0] is not None:
            grad_src = view
        return grad_input, grad_src


class SelectScatterBackward0(_ScatterBackward):
    def scatter(self, grad, z):
        return select_scatter(grad, z, self.dim, self.index)


class SliceScatterBackward0(_ScatterBackward):
    def scatter(self, grad, z):
        return slice_scatter(grad, z, self.dim, self.start, self.end, self.step)


class DiagonalScatterBackward0(_ScatterBackward):
    def scatter(self, grad, z):
        return diagonal_scatter(grad, z, self.offset, self.dim1, self.dim2)


def select_scatter(input, src, dim, index):
    return _scatter(SelectScatterBackward0, input, src, lambda t: t.select(dim, index),
                    {"dim": dim, "index": index})


@with_out("slice_scatter")
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    d = dim
    if input._array.ndim:
        from .._tensor import _wrap_dim
        d = _wrap_dim(dim, input._array.ndim)
    index = (builtins.slice(None),) * d + (builtins.slice(start, end, step),)
    return _scatter(SliceScatterBackward0, input, src, lambda t: t[index],
                    {"dim": d, "start": start, "end": end, "step": step})


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _scatter(DiagonalScatterBackward0, input, src,
                    lambda t: t.diagonal(offset, dim1, dim2),
                    {"offset": offset, "dim1": dim1, "dim2": dim2})


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return _scatter(AsStridedScatterBackward0, input, src,
                    # the strides address a contiguous tensor (out is one; a gradient may not be)
                    lambda t: t.contiguous().as_strided(size, stride, storage_offset),
                    {"size": size, "stride": stride, "storage_offset": storage_offset})


class AsStridedScatterBackward0(_ScatterBackward):
    def scatter(self, grad, z):
        return as_strided_scatter(grad, z, self.size, self.stride,
                                  self.storage_offset)

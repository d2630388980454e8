"""unfold / fold: im2col and col2im as user ops."""
import math

from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from ._im2col import col2im, im2col, out_size, pad_array
from .functional import _check_tensor, _int_tuple


class Im2ColBackward0(Node):
    def backward(self, grad):
        return _fold(grad, *self.args)


class Col2ImBackward0(Node):
    def backward(self, grad):
        return _unfold(grad, *self.args)


def _unfold(x, size, kernel, dilation, padding, stride):
    xp = xp_of(x)
    xpad = pad_array(xp, x._array, padding, padding)
    col, osz = im2col(xp, xpad, kernel, stride, dilation, slot=None)
    n, c = x.shape[:2]
    out = make_tensor(col.reshape(n, c * math.prod(kernel), math.prod(osz)), x._device)
    node = record(Im2ColBackward0, (x,), out)
    if node is not None:
        node.args = (size, kernel, dilation, padding, stride)
    return out


def _fold(col, size, kernel, dilation, padding, stride):
    xp = xp_of(col)
    n = col.shape[0]
    c = col.shape[1] // math.prod(kernel)
    osz = out_size(tuple(s + 2 * p for s, p in zip(size, padding)), kernel, stride, dilation)
    arr = col._array.reshape((n, c) + tuple(kernel) + osz)
    out = make_tensor(col2im(xp, arr, size, kernel, stride, dilation, padding, padding),
                      col._device)
    node = record(Col2ImBackward0, (col,), out)
    if node is not None:
        node.args = (size, kernel, dilation, padding, stride)
    return out


def _pair(v, what):
    return _int_tuple(v, 2, what, "unfold")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """`nn.functional.unfold`: (N, C, H, W) to (N, C*kh*kw, L) sliding blocks (im2col)."""
    _check_tensor(input, "input", "unfold", 1)
    if input.ndim not in (3, 4) or 0 in input.shape[1:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    size = tuple(x.shape[2:])
    blocks = out_size(tuple(s + 2 * p for s, p in zip(size, padding)), kernel, stride, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the "
                           f"array of sliding blocks as {blocks}, but its components must be at "
                           "least one.")
    out = _unfold(x, size, kernel, dilation, padding, stride)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """`nn.functional.fold`: (N, C*kh*kw, L) blocks summed into (N, C, H, W) (col2im)."""
    _check_tensor(input, "input", "fold", 1)
    if input.ndim not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    size = _pair(output_size, "output_size")
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    k = math.prod(kernel)
    if x.shape[1] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={kernel}.")
    blocks = out_size(tuple(s + 2 * p for s, p in zip(size, padding)), kernel, stride, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least one.")
    if x.shape[2] != math.prod(blocks):
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {math.prod(blocks)}, but got "
                           f"input.size(2)={x.shape[2]}.")
    out = _fold(x, size, kernel, dilation, padding, stride)
    return out.squeeze(0) if unbatched else out

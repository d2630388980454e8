"""Memory formats (`ember.channels_last` ...): how a dense tensor's elements lie in memory.

A tensor's array may have any strides, so `channels_last` is real: NHWC memory seen as NCHW.
This file holds the format objects and PyTorch's rules on strides (which strides a format
gives a shape, whether strides are contiguous in a format, which format strides suggest,
which strides `preserve_format` keeps); it works on shapes and element strides only."""
import builtins

import numpy as np

from ._dtype_casts import bits_of, empty
from ._frozen import Frozen, fill

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format"]


class memory_format(Frozen):
    """One of PyTorch's four memory formats; the four are singletons."""
    __module__ = "ember"  # `<class 'torch.memory_format'>`
    __slots__ = ("_name",)
    _torch_name = "torch.memory_format"

    def __init__(self, name):
        fill(self, _name=name)

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):  # the four are singletons: unpickle to the same object
        return (_format_by_name, (self._name,))


def _format_by_name(name):
    return globals()[name]


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

_RANK = {channels_last: 4, channels_last_3d: 5}
# the order in which channels_last walks the dims, innermost first
_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}
_CPP_NAME = {contiguous_format: "Contiguous", channels_last: "ChannelsLast",
             channels_last_3d: "ChannelsLast3d", preserve_format: "Preserve"}


def parse(fmt, fname, default):
    """The memory_format argument of `fname`: None gives `default`; anything else must be one."""
    if fmt is None:
        return default
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    return fmt


def check_rank(fmt, ndim):
    rank = _RANK.get(fmt)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")


def format_strides(shape, fmt):
    """The strides a fresh tensor of `shape` gets in `fmt` (contiguous or channels_last*)."""
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    check_rank(fmt, len(shape))
    strides = [0] * len(shape)
    order = _ORDER[len(shape)] if fmt in _RANK else range(len(shape) - 1, -1, -1)
    expected = 1
    for d in order:
        strides[d] = expected
        expected *= shape[d] if fmt in _RANK else builtins.max(shape[d], 1)
    return tuple(strides)


def is_channels_last_strides(shape, strides):
    """Raw strides that are exactly what channels_last(_3d) gives this shape."""
    n = len(shape)
    return n in _ORDER and tuple(strides) == format_strides(shape, _fmt_of_rank(n))


def _fmt_of_rank(n):
    return channels_last if n == 4 else channels_last_3d


def is_contiguous_as(shape, strides, fmt):
    """PyTorch's `is_contiguous(memory_format=fmt)` answer for these sizes and strides."""
    if fmt not in _RANK:
        if 0 in shape:
            return True
        order = range(len(shape) - 1, -1, -1)
    elif len(shape) != _RANK[fmt]:
        return False
    else:
        order = _ORDER[len(shape)]
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return shape[d] == 0 and fmt not in _RANK
            expected *= shape[d]
    return True


def _strides_like_channels_last(shape, strides):
    """PyTorch's heuristic: do these strides order the dims as channels_last does? Ambiguous
    cases (a trivial channel stride, all-equal strides of size-1 dims) count as NCHW."""
    n = len(shape)
    if n not in _ORDER or strides[1] == 0:
        return False
    low = 0
    for d in _ORDER[n]:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True


def suggest(shape, strides):
    """PyTorch's `suggest_memory_format`: the format these strides look like."""
    if _strides_like_channels_last(shape, strides):
        return _fmt_of_rank(len(shape))
    return contiguous_format


def is_dense(shape, strides):
    """PyTorch's is_non_overlapping_and_dense: the elements fill their span exactly."""
    if is_contiguous_as(shape, strides, contiguous_format):
        return True
    if len(shape) in _ORDER and is_contiguous_as(shape, strides, _fmt_of_rank(len(shape))):
        return True
    expected = 1
    for stride, size in sorted((st, n) for n, st in zip(shape, strides) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def target_strides(shape, strides, fmt):
    """The strides of a copy made in `fmt`; preserve keeps a dense tensor's own strides and
    gives any other tensor the format its strides suggest."""
    if fmt is preserve_format:
        if is_dense(shape, strides):
            return tuple(strides)
        fmt = suggest(shape, strides)
    return format_strides(shape, fmt)


def plainly_contiguous(array):
    """C-contiguous in the sense that a plain copy keeps the reported strides (NumPy calls an
    array contiguous whatever its size-1 axes' strides; channels_last ones must be kept)."""
    return array.flags.c_contiguous and not (array.ndim in _ORDER and 1 in array.shape)


def c_ordered(array):
    """`array`, or a copy of it laid out C-contiguously. PyTorch computes some ops into a
    fresh contiguous tensor whatever their input's layout (softmax, the cumulative scans,
    tril, masked_fill, reductions along a dim ...), where NumPy's results follow the input's
    order: a transposed or channels_last input would give a result that `.view` refuses.
    (NumPy calls an array with size-1 axes contiguous whatever their strides; channels_last
    ones, which `Tensor.stride` reports, are copied too.)"""
    if plainly_contiguous(array) or (array.flags.c_contiguous and not is_channels_last_strides(
            array.shape, tuple(s // array.itemsize for s in array.strides))):
        return array
    return array.copy(order="C")


def iterator_strides(shape, inputs):
    """The element strides PyTorch's TensorIterator gives a new output of `shape` computed from
    inputs with these element strides (0 along broadcast dims), as its reorder_dimensions
    sorts the dims: fastest first, each pair ordered by the first input whose strides along
    both are nonzero and differ (equal strides: the larger dim after), else left as it was."""
    ndim = len(shape)
    perm = list(builtins.range(ndim - 1, -1, -1))  # fastest first

    def order(d0, d1):
        for strides in inputs:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    for i in builtins.range(1, ndim):
        d1 = i
        for d0 in builtins.range(i - 1, -1, -1):
            comparison = order(perm[d0], perm[d1])
            if comparison > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif comparison < 0:
                break
    strides, step = [0] * ndim, 1
    for d in perm:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _broadcast_strides(shape, array):
    """An operand's element strides against the result's `shape`: 0 along broadcast dims."""
    lead = len(shape) - array.ndim
    return (0,) * lead + tuple(0 if n == 1 and shape[lead + d] != 1 else s // array.itemsize
                               for d, (n, s) in enumerate(zip(array.shape, array.strides)))


def in_iterator_order(result, operands, device):
    """The result of a NumPy op on `operands` (arrays or numbers) laid out as
    TensorIterator lays PyTorch's out. Where the operands' orders conflict, NumPy's sorts the
    dims its own way (C order, or a mix); PyTorch's follows the first operand that orders a
    pair of dims (`iterator_strides`): channels_last + contiguous is channels_last, a
    transposed matrix + a contiguous one is transposed. A C-ordered first operand gives C
    order in both (NumPy's conflicts go to C order, and it decides PyTorch's), so a caller on
    a hot path may skip the call then."""
    arrays = [a for a in operands if getattr(a, "ndim", 0)]
    if result.ndim < 2 or all(a.flags.c_contiguous for a in arrays):
        return result
    shape = result.shape
    strides = iterator_strides(shape, [_broadcast_strides(shape, a) for a in arrays])
    if all(n == 1 or s * result.itemsize == t
           for n, s, t in zip(shape, strides, result.strides)):
        return result
    from .device import backend_of
    return laid_out(backend_of(device).xp, result, strides)


def joined_layout(joined, tensors):
    """cat's or stack's result `joined` in PyTorch's layout: NumPy's follows its inputs'
    order, PyTorch's is channels_last where every input suggests that, else contiguous
    (two transposed matrices join into a contiguous one)."""
    if plainly_contiguous(joined) or \
            all(suggest(t._array.shape, t.stride()) is not contiguous_format for t in tensors):
        return joined
    return c_ordered(joined)


def follow_channels_last(result, *inputs):
    """`result` (a tensor, or a tuple of them, an op has just made) laid out channels_last(_3d)
    when one of `inputs` (tensors of the same rank, or None) has strides that suggest that
    format, as PyTorch's CPU kernels for convolution (input or weight), 2-d pooling, resampling,
    padding, group norm and the pixel and channel shuffles lay out theirs; NumPy computes them
    contiguous. A model turned channels_last (`model.to(memory_format=...)`) keeps that
    format layer after layer, and `out.is_contiguous(memory_format=channels_last)` answers as
    in PyTorch. Contiguous inputs, the common case, cost one flags check each.

    The result's node is marked to give its first input's gradient channels_last too, as
    PyTorch's backward kernels do (`_channels_last_input`, honoured by the autograd engine): a
    gradient in the other layout would meet the saved activations of the ops before it, and
    NumPy walks operands of two layouts several times slower."""
    results = result if isinstance(result, tuple) else (result,)
    ndim = results[0]._array.ndim
    if ndim not in _ORDER:
        return result
    for t in inputs:
        if t is None or t._array.ndim != ndim or plainly_contiguous(t._array) or \
                suggest(t._array.shape, t.stride()) is contiguous_format:
            continue
        from .device import backend_of
        for r in results:
            a = r._array
            strides = format_strides(a.shape, _fmt_of_rank(ndim))
            if any(r is x for x in inputs):
                continue
            # a fresh result, not an input or a view (no alias to keep), and not so already
            if r._base is None and tuple(s // a.itemsize for s in a.strides) != strides:
                r._array = laid_out(backend_of(r._device).xp, a, strides)
            if r._grad_fn is not None:
                r._grad_fn._channels_last_input = True
        break
    return result


def in_channels_last(grad):
    """A gradient for an input that suggested channels_last, laid out so (a copy the graph
    records when it has one)."""
    if grad is None or grad._array.ndim not in _ORDER:
        return grad
    return grad.contiguous(memory_format=_fmt_of_rank(grad._array.ndim))


def empty_array(xp, shape, dtype, strides):
    """An uninitialised array with exactly these element strides (non-negative, dense)."""
    shape = tuple(shape)
    if tuple(strides) == format_strides(shape, contiguous_format):
        return empty(xp, shape, dtype)
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    flat = empty(xp, span, dtype)
    byte_strides = tuple(s * flat.itemsize for s in strides)
    if isinstance(flat, np.ndarray):  # its base is `flat` itself, so views chain as usual
        return np.ndarray(shape, flat.dtype, buffer=flat, strides=byte_strides)
    return xp.lib.stride_tricks.as_strided(flat, shape, byte_strides)


def laid_out(xp, array, strides, dtype=None):
    """A copy of `array` (converted to `dtype`) with these element strides."""
    out = empty_array(xp, array.shape, array.dtype if dtype is None else dtype, strides)
    bits = bits_of(array.dtype) if out.dtype == array.dtype else None
    if bits is not None:
        out.view(bits)[...] = array.view(bits)
        return out
    out[...] = array
    return out


def lay_out_fresh(t, strides, xp):
    """Give a freshly made tensor (no views, no graph) these strides, keeping its values."""
    if tuple(strides) != format_strides(t._array.shape, contiguous_format):
        t._array = laid_out(xp, t._array, strides)
    return t


def lay_out_like(t, like, memory_format, fname):
    """A `*_like` factory's result laid out as `memory_format` says for the tensor `like`."""
    if memory_format is None and plainly_contiguous(like._array):
        return t  # the common case, kept cheap: a contiguous input gives a contiguous result
    fmt = parse(memory_format, fname, preserve_format)
    check_rank(fmt, like.dim())
    strides = target_strides(tuple(like.shape), like.stride(), fmt)
    from .device import backend_of
    return lay_out_fresh(t, strides, backend_of(t._device).xp)

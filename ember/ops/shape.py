"""Shape ops: views (view, reshape, expand, permute, transpose, squeeze, unsqueeze, narrow,
select, unbind, flatten), copies (clone, contiguous) and joins (cat, stack).

A view op returns a tensor over a NumPy/CuPy view of its input's memory, sharing the base
and version counter, and remembers how to redo itself from the base (`_view_fn`), so an
in-place write through the view can rewire the base's graph (`_writes.inplace`).
"""
import builtins
import math
import operator

import numpy as np

from .. import _dtype_casts as _casts, _memory_format as _mf, dtypes as _dt
from .._tensor import Tensor, _make, _wrap_dim, make_tensor, xp_of
from ..device import backend_of
from .._state import grad as _grad_state
from ._graph import Node, first_order_arrays, record
from ._writes import INFERENCE_MODE, NO_GRAD_MODE, mark_multi_output_views, write_out
from ._varargs import int_list_error, varargs_or_keyword

__all__ = ["reshape", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
           "narrow", "select", "unbind", "clone", "cat", "concat", "concatenate", "stack",
           "swapaxes", "swapdims", "movedim", "moveaxis", "expand_copy", "broadcast_to"]
METHODS = ["view", "view_as", "reshape", "reshape_as", "flatten", "squeeze", "unsqueeze",
           "permute", "transpose", "t", "narrow", "select", "unbind", "clone", "contiguous",
           "expand", "expand_as", "swapaxes", "swapdims", "movedim", "moveaxis", "broadcast_to"]


def make_view_of(source, array, replay):
    """The result of a view op: `array` views `source`'s memory; `replay(base)` redoes the
    chain of view ops from the root base (for in-place writes through the view)."""
    base = source._base if source._base is not None else source
    out = _make(Tensor, array, source._device, base, source._vc)
    if source._inference is not out._inference:
        # a view is an inference tensor exactly when its source is, wherever it is made
        out._inference = source._inference
    if source._vc.value:  # the class default is 0: skip the instance-dict write when it is
        out._fn_version = source._vc.value
    # PyTorch's CreationMeta: how the view was made decides whether it may be written to
    # in place under autograd (ops/_graph.py _check_view_inplace); views of it inherit it
    if not _grad_state.enabled:
        out._creation_meta = INFERENCE_MODE if _grad_state.inference else NO_GRAD_MODE
    elif source._creation_meta is not None:
        out._creation_meta = source._creation_meta
    parent = source._view_fn
    if source._base is None:
        out._view_fn = replay
    elif parent is not None:
        out._view_fn = lambda b: replay(parent(b))
    if not array.size:
        # NumPy leaves an empty slice's data pointer at its base, so the offset PyTorch gives
        # (where the view would start) is kept here; a view of an empty view inherits it,
        # and the ops that move the start add their shift (shift_empty_view)
        out._empty_offset = source.storage_offset() * source._array.itemsize // array.itemsize
    return out


def shift_empty_view(out, source, dim, start):
    """An empty view `out` of `source` starting `start` steps along `dim`: its storage offset
    moves by as many of source's strides (a no-op for a view that holds elements)."""
    if not out._array.size and start:
        out._empty_offset += start * source.stride(dim)
    return out


def _is_size_int(v):
    return isinstance(v, (builtins.int, np.integer, Tensor))


def _size_args(args, fname="view", what="size", position=1, _int=builtins.int):
    size = args
    if len(size) == 1 and not isinstance(size[0], (_int, np.integer, Tensor)):
        if not isinstance(size[0], (tuple, list)):
            raise int_list_error(args, fname, what, position, _is_size_int)
        size = tuple(size[0])
    for s in size:
        if type(s) is not _int:
            # a float or None is refused, not truncated
            if not builtins.all(_is_size_int(v) for v in size):
                raise int_list_error(args, fname, what, position, _is_size_int)
            return tuple(_int(s) for s in size)
    return size


def _view_mismatch(args):
    """PyTorch's TypeError for view() arguments that fit neither of its signatures (a dtype,
    or a size list starting with an int), or None when they fit one."""
    one = args[0]
    if len(args) == 1 and isinstance(one, (tuple, list)) and (not one or _is_size_int(one[0])):
        return None
    if len(args) > 1 and _is_size_int(one) and not isinstance(one, bool):
        return None
    sigs = [" * (torch.dtype dtype)", " * (tuple of ints size)"]
    if len(args) == 1:  # one argument is matched against each signature, and told why not
        if isinstance(one, (tuple, list)):
            left, right = ("(", ")") if isinstance(one, tuple) else ("[", "]")
            got = (f"{type(one).__name__} of {left}"
                   f"{', '.join(type(v).__name__ for v in one)}{right}")
        else:
            got = type(one).__name__
        sigs = [f"{s}\n      didn't match because some of the arguments have invalid types: "
                f"(!{got}!)" for s in sigs]
    return TypeError(f"view() received an invalid combination of arguments - got "
                     f"({', '.join(type(a).__name__ for a in args)}), but expected one of:\n"
                     + "\n".join(sigs) + "\n")


def _infer_size(size, numel):
    if -1 not in size and math.prod(size) == numel:
        for s in size:
            if s < 0:
                break
        else:
            return size  # the common case, checked cheaply
    neg = [i for i, s in enumerate(size) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(size):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(size)}")
    if neg:
        known = 1
        for s in size:
            if s != -1:
                known *= s
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(size)} because "
                               "the unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
        size = list(size)
        size[neg[0]] = numel // known
        return tuple(size)
    n = 1
    for s in size:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


class ViewBackward0(Node):
    def backward(self, grad):
        return grad.reshape(self._meta[0][0])


def view(self, *args, size=None, dtype=None):
    if dtype is not None:
        if args or size is not None:
            raise TypeError("view() got multiple values for argument 'dtype'")
        args = (dtype,)
    size = args if size is None else varargs_or_keyword(args, size, "size", "view")
    if len(size) == 1 and not isinstance(size[0], (builtins.int, np.integer, tuple, list, Tensor)):
        if isinstance(size[0], _dt.dtype) or dtype is not None:
            from .conversion import view_dtype
            return view_dtype(self, size[0])
        raise _view_mismatch(size)
    try:
        size = _size_args(size)
    except TypeError as e:
        raise (_view_mismatch(size) or e) from None
    shape = _infer_size(size, self._array.size)
    src = self._array
    arr = src.reshape(shape)
    # A view's base is the memory's owner (NumPy collapses chains of views, down to an array
    # whose base is not an array: from a buffer, or unpickled); a copy has another owner.
    owner = src.base if type(src.base) is type(src) else src
    if arr.size and arr.base is not owner:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    out = make_view_of(self, arr, lambda b: b.view(shape))
    if self._requires_grad or self._fw_grad is not None:  # else record() would do nothing
        record(ViewBackward0, (self,), out)
    return out


def view_as(self, other):
    return view(self, other.shape)


class ReshapeAliasBackward0(ViewBackward0):
    pass


class UnsafeViewBackward0(ViewBackward0):
    pass


def reshape(input, *args, shape=None):
    if shape is not None:  # the test first: reshape is on the hot path
        args = varargs_or_keyword(args, shape, "shape", "reshape")
    shape = _infer_size(_size_args(args, "reshape", "shape"), input._array.size)
    try:
        arr = input._array.reshape(shape, copy=False)
    except ValueError:  # not viewable: PyTorch's reshape clones, then views the copy unsafely
        copied = contiguous(input)
        return unsafe_view(copied, shape)
    out = make_view_of(input, arr, lambda b: b.reshape(shape))
    record(ViewBackward0, (input,), out)
    return out


def unsafe_view(input, shape):
    """aten._unsafe_view: `input` (contiguous, and owned by the caller: a fresh result)
    reshaped, recorded as UnsafeViewBackward0. The result is not a view for autograd: nothing
    else sees the memory, so in-place writes need no view bookkeeping."""
    out = make_tensor(input._array.reshape(shape), input._device)
    record(UnsafeViewBackward0, (input,), out)
    return out


def reshape_as(self, other):
    return reshape(self, other.shape)


def flatten(input, start_dim=0, end_dim=-1):
    shape = input._array.shape
    if not shape:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, len(shape)), _wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


class ExpandBackward0(Node):
    def backward(self, grad):
        return grad.sum_to_size(self._meta[0][0])


def _xp(t):
    from .._tensor import xp_of
    return xp_of(t)


def expand(self, *args, size=None, implicit=False):
    # `implicit` marks an expand that broadcasting inserted (tracing's bookkeeping): no effect
    sizes = _size_args(args if size is None else varargs_or_keyword(args, size, "size", "expand"),
                       "expand")
    shape = self._array.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(torch.{self.dtype._tensor_type}{{{list(shape)}}}, "
                           f"size={list(sizes)}): "
                           f"the number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = []
    for i in range(len(sizes) - 1, -1, -1):  # PyTorch checks from the last dim
        s = sizes[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            if s < 0:  # PyTorch's size check, which sees a negative element count
                raise RuntimeError("numel: integer multiplication overflow")
            target.append(s)
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        elif s < 0 and cur == 1:  # PyTorch's size check, which sees a negative element count
            raise RuntimeError("numel: integer multiplication overflow")
        elif cur != s and cur != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
        target.append(s)
    target = tuple(reversed(target))
    arr = self._array.view() if target == shape else broadcast_array(self._array, target,
                                                                     self._device)
    out = make_view_of(self, arr, lambda b: b.expand(target))
    record(ExpandBackward0, (self,), out)
    return out


def broadcast_array(arr, target, device):
    """A read-only view of `arr` (on `device`) broadcast to `target` (stride 0 where it
    repeats)."""
    if type(arr) is np.ndarray and arr.flags.c_contiguous:
        # np.broadcast_to costs ~2.5us, most of a small op's budget; this costs ~0.6us
        lead = len(target) - arr.ndim
        strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else st for n, st, m in
                                      zip(arr.shape, arr.strides, target[lead:]))
        try:
            out = np.ndarray(target, arr.dtype, buffer=arr, strides=strides)
        except (TypeError, ValueError, BufferError):
            return np.broadcast_to(arr, target)
        out.flags.writeable = False
        return out
    return backend_of(device).xp.broadcast_to(arr, target)


def expand_as(self, other):
    return expand(self, other.shape)


def broadcast_to(input, *args, size=None):
    """`torch.broadcast_to(t, size)`, and the method's `t.broadcast_to(2, 3)` too."""
    return expand(input, *args, size=size)


def expand_copy(input, size, *, implicit=False, out=None):
    res = expand(input, size).clone()
    return res if out is None else write_out(out, res, "expand_copy")


class PermuteBackward0(Node):
    def backward(self, grad):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return grad.permute(inverse)


def permute(input, *args, dims=None):
    dims = _size_args(args if dims is None else varargs_or_keyword(args, dims, "dims", "permute"),
                      "permute", "dims")
    n = input._array.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. input."
                           f"dim() = {n} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    out = make_view_of(input, input._array.transpose(dims), lambda b: b.permute(dims))
    node = record(PermuteBackward0, (input,), out)
    if node is not None:
        node.dims = dims
    return out


class TransposeBackward0(Node):
    def backward(self, grad):
        return grad.transpose(self.dim0, self.dim1)


def transpose(input, dim0, dim1):
    n = input._array.ndim
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    axes = list(range(n))
    if n:  # a 0-dim tensor transposes (0, -1) to itself
        axes[d0], axes[d1] = axes[d1], axes[d0]
    out = make_view_of(input, input._array.transpose(axes), lambda b: b.transpose(d0, d1))
    node = record(TransposeBackward0, (input,), out)
    if node is not None:
        node.dim0, node.dim1 = d0, d1
    return out


swapdims = transpose


def swapaxes(input, axis0, axis1):
    """`transpose` under NumPy's name, with NumPy's parameter names (PyTorch's too)."""
    return transpose(input, axis0, axis1)


class TBackward0(TransposeBackward0):
    pass


def t(input):
    n = input._array.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    if n < 2:  # the identity, recorded as a transpose all the same
        out = make_view_of(input, input._array.view(), lambda b: b.t())
        node = record(TBackward0, (input,), out)
        if node is not None:
            node.dim0 = node.dim1 = 0
        return out
    out = make_view_of(input, input._array.T, lambda b: b.t())
    node = record(TBackward0, (input,), out)
    if node is not None:
        node.dim0, node.dim1 = 0, 1
    return out


class AliasBackward0(Node):
    def backward(self, grad):
        return grad


def movedim(input, source, destination):
    n = input._array.ndim
    src = [source] if isinstance(source, builtins.int) else list(source)
    dst = [destination] if isinstance(destination, builtins.int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    for name, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    if n == 0:
        return permute(input, ())
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, order)


moveaxis = movedim


class SqueezeBackward0(Node):
    def backward(self, grad):
        return grad.reshape(self._meta[0][0])


class SqueezeBackward1(SqueezeBackward0):
    pass


class SqueezeBackward2(SqueezeBackward0):
    pass


def wrap_dims_once(dims, ndim):
    """`dims` wrapped into [0, ndim), each at most once: PyTorch names the first repeat."""
    seen = []
    for d in dims:
        d = _wrap_dim(d, ndim)
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    return seen


def squeeze(input, dim=None):
    shape = input._array.shape
    if dim is None:
        axes = tuple(i for i, s in enumerate(shape) if s == 1)
        cls = SqueezeBackward0
    else:
        dims = (dim,) if isinstance(dim, (builtins.int, np.integer)) else tuple(dim)
        axes = tuple(sorted(wrap_dims_once(dims, len(shape))))
        axes = tuple(a for a in axes if shape and shape[a] == 1)
        cls = SqueezeBackward1 if isinstance(dim, (builtins.int, np.integer)) else SqueezeBackward2
    arr = input._array.squeeze(axes) if axes else input._array.view()
    out = make_view_of(input, arr, lambda b: b.squeeze(dim))
    record(cls, (input,), out)
    return out


class UnsqueezeBackward0(Node):
    def backward(self, grad):
        return grad.squeeze(self.dim)


def _int_dim(dim):
    """unsqueeze's `dim` as an int (anything with __index__ but a bool), or PyTorch's
    TypeError in the words of the method form, `x.unsqueeze(1.0)`."""
    if not isinstance(dim, bool):
        try:
            return operator.index(dim)
        except TypeError:
            pass
    raise TypeError(f"unsqueeze(): argument 'dim' (position 1) must be int, not "
                    f"{type(dim).__name__}")


def unsqueeze(input, dim):
    dim = _int_dim(dim)
    n = input._array.ndim
    d = _wrap_dim(dim, n + 1)
    arr = _xp(input).expand_dims(input._array, d)
    out = make_view_of(input, arr, lambda b: b.unsqueeze(d))
    node = record(UnsqueezeBackward0, (input,), out)
    if node is not None:
        node.dim = d
    return out


def _scattered(grad, shape, region):
    """A first-order backward's gradient of a view: zeros of the input's `shape` with `grad`
    written at `region` (an index), on arrays; None where the formula runs in ember ops."""
    arrays = first_order_arrays(grad)
    if arrays is None:
        return None
    full = xp_of(grad).zeros(shape, arrays[0].dtype)
    full[region] = arrays[0]
    return make_tensor(full, grad._device)


class NarrowBackward0(Node):
    def backward(self, grad):
        shape = self._meta[0][0]
        done = _scattered(grad, shape, (slice(None),) * self.dim +
                          (slice(self.start, self.start + self.length),))
        if done is not None:
            return done
        from .creation import zeros
        full = zeros(shape, dtype=grad.dtype, device=grad.device)
        full.narrow(self.dim, self.start, self.length).copy_(grad)
        return full


class SliceBackward0(NarrowBackward0):
    step = 1  # `x[::2]` (indexing sets it); narrow's slices are contiguous

    def backward(self, grad):
        if self.step == 1:
            return NarrowBackward0.backward(self, grad)
        stop = self.start + (self.length - 1) * self.step + 1 if self.length else self.start
        region = (slice(None),) * self.dim + (slice(self.start, stop, self.step),)
        done = _scattered(grad, self._meta[0][0], region)
        if done is not None:
            return done
        from .creation import zeros
        full = zeros(self._meta[0][0], dtype=grad.dtype, device=grad.device)
        full[region].copy_(grad)
        return full


def narrow(input, dim, start, length):
    shape = input._array.shape
    if not shape:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    start = builtins.int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -shape[d] <= start <= shape[d]:
        raise IndexError(f"start out of range (expected to be in range of [{-shape[d]}, "
                         f"{shape[d]}], but got {start})")
    if start < 0:
        start += shape[d]
    if start + length > shape[d]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({shape[d]}).")
    index = (slice(None),) * d + (slice(start, start + length),)
    out = make_view_of(input, input._array[index], lambda b: b.narrow(d, start, length))
    shift_empty_view(out, input, d, start)
    node = record(SliceBackward0, (input,), out)
    if node is not None:
        node.dim, node.start, node.length = d, start, length
    return out


class SelectBackward0(Node):
    def backward(self, grad):
        shape = self._meta[0][0]
        done = _scattered(grad, shape, (slice(None),) * self.dim + (self.index,))
        if done is not None:
            return done
        from .creation import zeros
        full = zeros(shape, dtype=grad.dtype, device=grad.device)
        full.select(self.dim, self.index).copy_(grad)
        return full


def select(input, dim, index):
    shape = input._array.shape
    if not shape:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, len(shape))
    i = builtins.int(index)
    if not -shape[d] <= i < shape[d]:
        raise IndexError(f"select(): index {i} out of range for tensor of size {list(shape)} at "
                         f"dimension {d}")
    i %= shape[d]
    # the trailing Ellipsis keeps a 0-d result a view (a bare int index gives a NumPy scalar)
    arr = input._array[(slice(None),) * d + (i, Ellipsis)]
    out = make_view_of(input, arr, lambda b: b.select(d, i))
    shift_empty_view(out, input, d, i)
    node = record(SelectBackward0, (input,), out)
    if node is not None:
        node.dim, node.index = d, i
    return out


class UnbindBackward0(Node):
    def backward(self, *grads):
        return stack(grads, self.dim)


def unbind(input, dim=0):
    shape = input._array.shape
    if not shape:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, len(shape))
    prefix = (slice(None),) * d
    outs = []
    for i in range(shape[d]):
        outs.append(shift_empty_view(make_view_of(input, input._array[prefix + (i, Ellipsis)],
                                                  lambda b, i=i: b.select(d, i)), input, d, i))
    mark_multi_output_views(outs)
    node = record(UnbindBackward0, (input,), *outs)
    if node is not None:
        node.dim = d
        node._out_meta = tuple((o._array.shape, o.dtype, o._device) for o in outs)
    return tuple(outs)


class CloneBackward0(Node):
    def backward(self, grad):
        return grad


def clone(input, *, memory_format=None):
    fmt = _mf.parse(memory_format, "clone", _mf.preserve_format)
    out = make_tensor(_copy_as(input, fmt, "clone"), input._device)
    record(CloneBackward0, (input,), out)
    return out


def _copy_as(t, fmt, fname):
    """A copy of `t`'s array laid out in `fmt` (preserve: a dense tensor keeps its strides,
    a sliced or expanded one takes the format its strides suggest)."""
    arr = t._array
    _mf.check_rank(fmt, arr.ndim)
    if t.dtype._kind in (_dt.SUB_INT, _dt.SUB_UINT):  # PyTorch has no copy kernel for these
        raise _casts.not_implemented("copy_kernel", t.dtype)
    if (_mf.plainly_contiguous(arr) and fmt is not _mf.channels_last
            and fmt is not _mf.channels_last_3d):
        return _casts.on_bits(lambda a: a.copy(), arr)
    strides = _mf.target_strides(arr.shape, t.stride(), fmt)
    return _mf.laid_out(backend_of(t._device).xp, arr, strides)


def contiguous(self, memory_format=None):
    fmt = _mf.parse(memory_format, "contiguous", _mf.contiguous_format)
    if self.is_contiguous(fmt):
        return self
    if fmt is _mf.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    out = make_tensor(_copy_as(self, fmt, "contiguous"), self._device)
    record(CloneBackward0, (self,), out)
    return out


class CatBackward0(Node):
    def backward(self, grad):
        res, start = [], 0
        for size, (shape, _) in zip(self.sizes, self._meta):
            if size is None:  # a skipped legacy 1-D empty input: an empty gradient
                from .creation import zeros
                res.append(zeros(shape, dtype=grad.dtype, device=grad.device))
                continue
            res.append(grad.narrow(self.dim, start, size))
            start += size
        return tuple(res)


def _check_joinable(tensors, fname):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        "not Tensor")
    tensors = list(tensors)
    if not tensors:
        if fname == "cat":
            raise ValueError(f"torch.{fname}(): expected a non-empty list of Tensors")
        raise RuntimeError(f"{'vstack' if fname == 'row_stack' else fname} expects a non-empty "
                           "TensorList")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    dev = tensors[0]._device
    for t in tensors[1:]:
        if t._device != dev:
            raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                               f"two devices, {dev} and {t._device}!")
    return tensors


def cat(tensors, dim=0, *, out=None):
    tensors = _check_joinable(tensors, "cat")
    for i, t in enumerate(tensors):
        if t._array.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    # PyTorch skips 1-D empty tensors in cat (a legacy rule kept for compatibility)
    parts = [t for t in tensors if not (t._array.ndim == 1 and t._array.size == 0)] or tensors[:1]
    ref = parts[0]._array
    d = _wrap_dim(dim, ref.ndim)
    before, after = ref.shape[:d], ref.shape[d + 1:]
    for i, t in enumerate(parts):
        a = t._array
        if a.shape[:d] != before or a.shape[d + 1:] != after or a.ndim != ref.ndim:
            _refuse_cat_shapes(ref, a, d, i)
    arrays = _joined_arrays(parts)
    xp = xp_of(parts[0])
    joined = _casts.on_bits(lambda *a: xp.concatenate(a, axis=d), *arrays)
    res = make_tensor(_mf.joined_layout(joined, parts), parts[0]._device)
    node = record(CatBackward0, tuple(tensors), res)
    if node is not None:
        node.dim = d
        kept = {id(t) for t in parts}  # `t in parts` would compare tensors with ==
        node.sizes = [t._array.shape[d] if id(t) in kept else None for t in tensors]
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, "cat")
    return res


def _refuse_cat_shapes(ref, a, d, i):
    """PyTorch's error for part `i` of a cat whose shape does not join `ref`'s along `d`."""
    if a.ndim != ref.ndim:
        raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} and "
                           f"{a.ndim}")
    for k in range(ref.ndim):
        if k != d and a.shape[k] != ref.shape[k]:
            raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                               f"size {ref.shape[k]} but got size {a.shape[k]} for tensor "
                               f"number {i} in the list.")


def _joined_arrays(tensors):
    """The arrays of tensors to join (cat, stack), cast to the dtype they promote to; as they
    are when they share one dtype (the common case, which needs no promotion)."""
    first = tensors[0]._array.dtype
    for t in tensors:
        if t._array.dtype is not first:
            break
    else:
        return [t._array for t in tensors]
    dtype = _dt.promote_operands([(t.dtype, t._array.ndim) for t in tensors])
    return [t._array if t._array.dtype is dtype.np else t._array.astype(dtype.np) for t in tensors]


concat = concatenate = cat


class StackBackward0(Node):
    def backward(self, grad):
        return grad.unbind(self.dim)


def stack(tensors, dim=0, *, out=None):
    tensors = _check_joinable(tensors, "stack")
    shape = tensors[0]._array.shape
    for i, t in enumerate(tensors):
        if t._array.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(shape)} "
                               f"at entry 0 and {list(t._array.shape)} at entry {i}")
    d = _wrap_dim(dim, len(shape) + 1)
    arrays = _joined_arrays(tensors)
    xp = xp_of(tensors[0])
    joined = _casts.on_bits(lambda *a: xp.stack(a, axis=d), *arrays)
    res = make_tensor(_mf.joined_layout(joined, tensors), tensors[0]._device)
    node = record(StackBackward0, tuple(tensors), res)
    if node is not None:
        node.dim = d
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, "stack")
    return res

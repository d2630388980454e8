"""Writes into tensors that exist: in-place ops (`inplace`, and `inplace_saving_result` for
an op whose backward reads only its result), the checks PyTorch makes before a write (views
of several outputs, inference tensors, leaves, memory that overlaps itself) and `out=`
(`write_out`). Each rewires the graph through `record` (`_graph`), so a write is one
mechanism for every op."""
import functools
import inspect
import re
import warnings

import numpy as np

from .. import _dtype_casts as _casts
from .._autograd_meta import _refresh_view_grad_fn, forward_grad, set_tangent
from .._state import forward_ad as _fw, grad as _grad_state
from .._tensor import Tensor, make_tensor
from ..device import is_writeable
from ._dual import carry_tangent, has_tangent
from ._graph import Node, _any_requires_grad, record

__all__ = ["inplace", "write_out"]


# ---- in-place ops ------------------------------------------------------------------------
# Told of each tensor about to be written in place (allow_mutation_on_saved_tensors copies
# what backward saved of its memory first). Empty almost always: a write checks one list.
write_watchers = []


def before_write(t):
    for watch in write_watchers:
        watch(t)


def inplace(self, compute, others=(), allow_overlap=False, saves_input=True):
    """Run an in-place op: `compute(self)` gives the new value of `self` out of place (an
    ember op, so the graph is built for it); its array is written into self's memory.

    `others` are the tensor operands, to know whether autograd must track the write.
    Self keeps its identity and memory; its version is bumped; the graph is rewired so that
    `self` (or, for a view, its base through PyTorch's CopySlices) is the op's output.
    `allow_overlap`: the op may write into an expanded tensor (PyTorch's fill_, zero_ ...).
    `saves_input` False: the op's node saves none of its operands (add_, sub_), so self's
    values need no copy aside before they are overwritten.
    """
    if self._inference:
        check_inference_write(self)
    if not allow_overlap and 0 in self._array.strides:
        check_no_internal_overlap(self._array)
    if write_watchers:
        before_write(self)
    tracked = tracks(self, others)
    if tracked:
        _check_leaf_inplace(self)
    if not tracked:
        value = compute(self)
        _store(self, value)
        self._vc.value += 1
        return self
    if self._base is not None and self._view_fn is not None:
        _inplace_on_view(self, compute)
        return self
    # Out of place on a copy of self standing where self stands in the graph (the node may
    # save it, and self's memory is about to change), then self becomes the op's output.
    before = _alias(self)
    if saves_input:
        before._array = before._array.copy()
    value = compute(before)
    if _fw.level is not None:
        carry_tangent(self, value)
    _store(self, value)
    self._vc.value += 1
    self._grad_fn, self._output_nr = value._grad_fn, value._output_nr
    self._requires_grad = value._requires_grad
    return self


def inplace_saving_result(self, write, node_cls, **fields):
    """An in-place unary op whose backward reads only its result (relu_, hardtanh_):
    `write(array)` puts the new values into self's memory in one pass, and the node (with
    `fields` set on it) saves self itself, as PyTorch's does; `inplace` copies self aside,
    computes out of place and copies back (three passes: torchvision's ResNets run relu_ after
    every batch norm). Returns False where `inplace` must run instead: a tracked view
    (CopySlices) or leaf (its error), forward-mode AD, an inference tensor, memory read-only
    or overlapping itself."""
    arr = self._array
    if self._inference or _fw.level is not None or 0 in arr.strides or not is_writeable(arr):
        return False
    tracked = tracks(self)
    if tracked and (self._base is not None or self._grad_fn is None):
        return False
    if write_watchers:
        before_write(self)
    before = _alias(self) if tracked else None
    write(arr)
    self._vc.value += 1
    if tracked:
        self._output_nr = 0
        node = record(node_cls, (before,), self)
        if node is not None:
            for name, value in fields.items():
                setattr(node, name, value)
            node.save_for_backward(self)
    return True


def _inplace_on_view(view, compute):
    """In-place on a view, tracked: the base becomes the output of a CopySlices node.
    Only the view's region is copied (the op may save it), never the whole base."""
    base, view_fn = view._base, view._view_fn
    base_before = _alias(base)
    region = view_fn(base_before).clone()
    if _fw.level is not None and has_tangent(view):  # the view's own tangent holds there
        set_tangent(region, forward_grad(view))
    value = compute(region)
    _store(view, value)
    base._vc.value += 1
    new_base = CopySlices.apply(base_before, value, view_fn)
    base._grad_fn, base._output_nr = new_base._grad_fn, new_base._output_nr
    base._requires_grad = new_base._requires_grad
    if _fw.level is not None:
        carry_tangent(base, new_base)
        carry_tangent(view, value)
    _refresh_view_grad_fn(view)


def _alias(t):
    """A new tensor object over `t`'s memory standing where `t` stands in the graph."""
    a = make_tensor(t._array, t._device)
    fn = t.grad_fn
    if fn is not None:
        a._requires_grad, a._grad_fn, a._output_nr = True, fn, t._output_nr
    if t._fw_grad is not None:
        a._fw_grad = t._fw_grad
    return a


def _store(self, value):
    """Write an op's result into `self`'s memory, with PyTorch's shape and cast checks."""
    arr = value._array
    if arr.shape != self._array.shape:
        try:
            shape = np.broadcast_shapes(arr.shape, self._array.shape)
        except ValueError:
            shape = arr.shape
        if shape != self._array.shape:
            raise RuntimeError(f"output with shape {list(self._array.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
    src, dst = value.dtype, self.dtype
    if src is not dst and src._category > dst._category:
        raise RuntimeError(f"result type {src._scalar_name} can't be cast to the desired output "
                           f"type {dst._scalar_name}")
    if value._device != self._device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {value._device} and {self._device}!")
    dst = writable(self._array)
    bits = _casts.bits_of(dst.dtype) if arr.dtype == dst.dtype else None
    if bits is None:
        dst[...] = arr
    else:  # bfloat16, float8: copied as their bits (CuPy cannot copy float8 values)
        dst.view(bits)[...] = arr.view(bits)


# ---- writing into expanded memory -----------------------------------------------------------
def has_internal_overlap(arr):
    """PyTorch's has_internal_overlap == YES: some dimension repeats memory (stride 0)."""
    if arr.size == 0:
        return False
    for n, st in zip(arr.shape, arr.strides):
        if st == 0 and n > 1:
            return True
    return False


def check_no_internal_overlap(arr):
    if has_internal_overlap(arr):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the tensor "
                           "before performing the operation.")


def writable(arr):
    """`arr` to write into: NumPy marks an expanded array (and views of it) read-only, where
    PyTorch lets the ops that allow it (and views without overlap) write its memory."""
    if is_writeable(arr):
        return arr
    w = arr.view()  # a new view: the tensor's own array stays read-only for the next write
    w.flags.writeable = True
    return w


def warn_expanded(t, op, example, stacklevel=3):
    """PyTorch's deprecation warning for an indexing write into an expanded tensor (the
    caller's caller is the user's line; one more level for each helper in between)."""
    if has_internal_overlap(t._array):
        warnings.warn(f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor "
                      f"before performing this operation. This also applies to advanced indexing "
                      f"e.g. {example}", UserWarning, stacklevel=stacklevel)


def tracks(self, others=()):
    """Whether autograd records an in-place op on `self` whose tensor operands are `others`
    (or forward AD does: an operand carries a tangent)."""
    if _fw.level is not None and _any_tangent(self, others):
        return True
    return _grad_state.enabled and (self._requires_grad or _any_requires_grad(others)
                                    or (self._base is not None and self._base._requires_grad))


def _any_tangent(self, others):
    if has_tangent(self) or (self._base is not None and has_tangent(self._base)):
        return True
    for t in others:
        if isinstance(t, Tensor) and has_tangent(t):
            return True
    return False



# PyTorch's CreationMeta of a view (Tensor._creation_meta; None is DEFAULT): a view made
# by an op returning several views, or made with grad mode off, may not be written to in
# place where autograd tracks the write
MULTI_OUTPUT_NODE, NO_GRAD_MODE, INFERENCE_MODE = "multi_output_node", "no_grad_mode", "inference_mode"


def mark_multi_output_views(views):
    """unbind, split, chunk ...: their outputs are views PyTorch forbids writing in place
    under autograd (the op's single node could not rebase each one's gradient)."""
    if _grad_state.enabled:
        for v in views:
            v._creation_meta = MULTI_OUTPUT_NODE


def _check_view_inplace(t):
    meta = t._creation_meta
    fn = t.grad_fn
    if fn is not None:
        op = re.sub(r"Backward\d*$", "", fn.name())
        msg = f"Output {t._output_nr} of {op} is a view and is being modified inplace."
    elif meta is INFERENCE_MODE:
        msg = ("A view was created in inference mode and is being modified inplace in normal "
               "mode.")
    else:
        msg = ("A view was created in no_grad mode and is being modified inplace with grad mode "
               "enabled.")
    if meta is MULTI_OUTPUT_NODE:
        msg += (" This view is the output of a function that returns multiple views. Such "
                "functions do not allow the output views to be modified inplace. You should "
                "replace the inplace operation by an out-of-place one.")
    else:
        block = "inference_mode" if meta is INFERENCE_MODE else "no_grad"
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You "
                "can clarify your code by moving both the view and the inplace either both "
                f"inside the {block} block (if you don't want the inplace to be tracked) or both "
                "outside (if you want the inplace to be tracked).")
    raise RuntimeError(msg)


def check_inference_write(t):
    """PyTorch's guard for an inference tensor (made in inference_mode, or a view of one):
    outside inference_mode its memory may not be written (nothing could track the write)."""
    if t._inference and not _grad_state.inference:
        raise RuntimeError(
            "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
            "make a clone to get a normal tensor before doing inplace update.See "
            "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _check_leaf_inplace(t):
    if t._base is not None and t._creation_meta is not None:
        _check_view_inplace(t)
    if t._requires_grad and t._grad_fn is None and t._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = t._base
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


class CopySlices(Node):
    """The base after an in-place write into one of its views: the base's gradient outside
    the view, and the written value's gradient inside it."""

    def name(self):
        return "torch::autograd::CopySlices"

    @staticmethod
    def apply(base_before, value, view_fn):
        out = make_tensor(base_before._array, base_before._device)
        node = record(CopySlices, (base_before, value), out)
        if node is not None:
            node.view_fn = view_fn
            node.order = _memory_order(base_before._array)
        return out

    def backward(self, grad):
        if self.order is not None:
            # as PyTorch, the gradient takes the base's memory layout first: a view made by
            # as_strided names positions in memory, not indices
            inverse = [0] * len(self.order)
            for i, d in enumerate(self.order):
                inverse[d] = i
            grad = grad.permute(self.order).contiguous().permute(inverse)
        grad_base = grad.clone()
        self.view_fn(grad_base).zero_()
        return grad_base, self.view_fn(grad)


def _memory_order(arr):
    """The dims of `arr` from the largest stride to the smallest where that is not their own
    order (a transposed base), else None."""
    order = sorted(range(arr.ndim), key=lambda d: -arr.strides[d])
    return None if order == list(range(arr.ndim)) else order


# ---- out= ----------------------------------------------------------------------------------
def write_out(out, result, fname):
    """`op(..., out=out)`: PyTorch resizes a mismatched `out` (it must be castable to) and
    refuses when autograd would have to track the write."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._inference:
        check_inference_write(out)
    if _grad_state.enabled and (result._requires_grad or out._requires_grad):
        raise RuntimeError(f"{fname}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    src, dst = result.dtype, out.dtype
    if src is not dst and src._category > dst._category:
        raise RuntimeError(f"result type {src._scalar_name} can't be cast to the desired output "
                           f"type {dst._scalar_name}")
    if write_watchers:
        before_write(out)
    if out._array.shape != result._array.shape:
        if out._array.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(out._array.shape)}, which does not match the required output "
                          f"shape {list(result._array.shape)}. This behavior is deprecated, and "
                          "in a future PyTorch release outputs will not be resized unless they "
                          "have zero elements. You can explicitly reuse an out tensor t by "
                          "resizing it, inplace, to zero elements with t.resize_(0).",
                          UserWarning, stacklevel=3)
        out._array = result._array.astype(out._array.dtype, copy=True)
    else:
        check_no_internal_overlap(out._array)
        writable(out._array)[...] = result._array
    out._vc.value += 1
    return out


def with_out(fname):
    """Gives an op that returns one tensor PyTorch's keyword `out=` (written by `write_out`),
    for ops off the hot path whose bodies return in several places."""
    def wrap(fn):
        @functools.wraps(fn)
        def op(*args, out=None, **kwargs):
            res = fn(*args, **kwargs)
            return res if out is None else write_out(out, res, fname)
        sig = inspect.signature(fn)
        op.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + [
            inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)])
        return op
    return wrap

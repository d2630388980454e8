"""The one op mechanism: how an op's result joins the autograd graph.

An op computes its forward on backend arrays, then calls `record(NodeClass, inputs, out)`.
If grad mode is on and an input requires grad, `record` makes a node (the result's
`grad_fn`, named as PyTorch names it: `MulBackward0`) holding edges to the inputs' nodes.
The node's `backward` is written with ember ops on Tensors, so the engine can build a graph
of the backward pass itself (`create_graph=True`). User `autograd.Function`s are nodes too.

In-place ops go through `inplace`, out= through `write_out`: one path each for every op.
"""
import contextlib
import functools
import inspect
import os
import re
import warnings
import weakref

import numpy as np

_new = object.__new__

from .. import _dtype_casts as _casts
from .._state import (anomaly as _anomaly, flop_counter as _flops, forward_ad as _fw,
                      grad as _grad_state, profiler as _profiler, saved_tensor_hooks as _saved_hooks,
                      selective_checkpoint as _sac,
                      selective_checkpoint_anywhere as _sac_anywhere,
                      saved_tensor_hooks_anywhere as _saved_hooks_anywhere)
from .._autograd_meta import _refresh_view_grad_fn, forward_grad, set_tangent
from .._tensor import Tensor, _make, make_tensor
from ..device import is_writeable
from ..utils.hooks import register as _register_hook
from ._dual import carry_tangent, has_tangent, input_tangents, mark_pending

__all__ = ["Node", "AccumulateGrad", "record", "record_number", "inplace", "write_out",
           "first_order_arrays"]


@contextlib.contextmanager
def grad_disabled():
    """A region that records no graph, for ops that adjust a value in place without letting
    the adjustment into its gradient (autograd's `no_grad` is a floor above the ops)."""
    previous = _grad_state.enabled
    _grad_state.enabled = False
    try:
        yield
    finally:
        _grad_state.enabled = previous


class _HookDict(dict):
    """A dict that weakref can point at (handles must not keep a freed node alive)."""
    __slots__ = ("__weakref__",)


class Node:
    """A backward function in the graph. Subclasses define `backward(self, *grad_outputs)`.

    Fields set by `record`: `_next` (edges: (node, output_nr) per input, node None for an
    input that needs no gradient) and `_meta` ((shape, numpy dtype) per input: the engine
    reduces broadcast gradients and casts to the input's dtype with it).
    """

    _saved = ()
    _freed = False
    _pre_hooks = None    # output_nr -> {id: hook}: tensor hooks of this node's outputs
    _retained = None     # output_nr -> weakref of a tensor that called retain_grad()
    _hooks = None        # post hooks: hook(grad_inputs, grad_outputs)
    _node_prehooks = None
    _materialize_grads = True
    _builtin = True      # False for a custom autograd.Function's node
    _out_meta = None     # (shape, dtype, device) per output, on a node of several outputs
    _channels_last_input = False  # give input 0's gradient channels_last (the engine does)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return self._next

    @property
    def needs_input_grad(self):
        return tuple(edge[0] is not None for edge in self._next)

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    # ---- saved tensors --------------------------------------------------------------
    def save_for_backward(self, *tensors):
        self._saved = tuple([None if t is None else _save(self, t) for t in tensors])

    save = save_for_backward

    @property
    def saved_tensors(self):
        self._raise_if_freed()
        return tuple([None if s is None else _unpack(self, s) for s in self._saved])

    def _raise_if_freed(self):
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward.")

    def _release(self):
        if self._saved:
            self._saved = ()
            self._freed = True

    # ---- hooks ------------------------------------------------------------------------
    def _register_tensor_hook(self, output_nr, hook):
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(output_nr, _HookDict())
        return _register_hook(hooks, hook)

    def _retain(self, tensor):
        if self._retained is None:
            self._retained = {}
        self._retained[tensor._output_nr] = weakref.ref(tensor)

    def register_hook(self, hook):
        """`hook(grad_inputs, grad_outputs)` runs after this node; may return new grad_inputs."""
        if self._hooks is None:
            self._hooks = _HookDict()
        return _register_hook(self._hooks, hook)

    def register_prehook(self, hook):
        """`hook(grad_outputs)` runs before this node; may return new grad_outputs."""
        if self._node_prehooks is None:
            self._node_prehooks = _HookDict()
        return _register_hook(self._node_prehooks, hook)

    def backward(self, *grad_outputs):
        raise NotImplementedError(f"{type(self).__name__} has no backward")

    def apply(self, *grad_outputs):
        return self.backward(*grad_outputs)

    __call__ = apply


# A first-order backward (grad mode off: nothing will differentiate it again) of float32 or
# float64 tensors may compute its formula on their arrays: the NumPy operations the ember ops
# would run, in the same order, so the same bits, without an op's dispatch per step (2-3 us
# each on a small tensor). Under create_graph, while a dual level is open (forward AD runs
# formulas with grad mode on, and tangents may ride on the gradients) and while the profiler
# records (it lists the ops a backward node runs) and while FLOPs are counted (the products
# of the formula are counted as the ops they are), the formula runs in ember ops.
_ARRAY_FORMULA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def first_order_arrays(grad, *saved):
    """The arrays of `grad` and the `saved` tensors (None for a None) when a backward formula
    may compute on them directly (grad mode off, no dual level, no profiler or FLOP
    counter, one float32/float64 dtype, one device), else None."""
    if _grad_state.enabled or _fw.level is not None or _profiler.active is not None \
            or _flops.active is not None:
        return None
    g = grad._array
    if g.dtype not in _ARRAY_FORMULA_DTYPES:
        return None
    arrays = [g]
    for t in saved:
        if t is None:
            arrays.append(None)
        elif t._array.dtype is not g.dtype or t._device is not grad._device:
            return None
        else:
            arrays.append(t._array)
    return arrays


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds incoming gradients into `leaf.grad`."""

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def __init__(self, leaf):
        self.variable = leaf
        self._next = ()
        self._meta = ()


def _save(node, t):
    """Remember a tensor for backward with its version; an output of `node` is kept without
    its grad_fn (that would be a reference cycle) and gets it back on unpacking. Under
    saved_tensors_hooks the pack hook decides what is kept instead."""
    if t._inference:  # it has no version counter PyTorch could check later
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. Please do not use Tensors created "
            "in inference mode in computation tracked by autograd. To work around this, you "
            "can make a clone to get a normal tensor and use it in autograd, or use "
            "`torch.no_grad()` instead of `torch.inference_mode()`.")
    if _saved_hooks_anywhere.count and _saved_hooks.stack:
        return _HookedSave(node, t)
    if t._grad_fn is node:
        return (None, t._array, t._device, t._vc, t._vc.value, t._output_nr)
    return (t, None, None, None, t._vc.value, None)


class _HookedSave:
    """A tensor saved under saved_tensors_hooks: what its pack hook returned, and where the
    tensor stood in the graph, so the tensor the unpack hook gives back stands there again
    (a backward with create_graph=True differentiates through it). As PyTorch, a hooked
    save is not version-checked: the hooks own the value."""
    __slots__ = ("packed", "unpack_hook", "requires_grad", "is_output", "edge", "output_nr")

    def __init__(self, node, t):
        if _saved_hooks.disabled is not None:
            raise RuntimeError(_saved_hooks.disabled)
        pack_hook, self.unpack_hook = _saved_hooks.stack[-1]
        version = t._vc.value
        with grad_disabled():
            self.packed = pack_hook(t)
        if t._vc.value != version:
            raise RuntimeError("A saved tensor pack hook is modifying its input in place. Tensors "
                               "provided as input to pack hook cannot be modified by in-place "
                               "operations as this can lead to unexpected side-effects. Please "
                               "open an issue if you need to perform in-place operations on the "
                               "input to a pack hook.")
        self.requires_grad = t._requires_grad
        self.is_output = t._grad_fn is node
        self.output_nr = t._output_nr
        # a node holding its own output's edge would be a reference cycle: rebuilt on unpack
        self.edge = None if self.is_output or not t._requires_grad else edge(t)

    def unpack(self, node):
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(t).__name__}")
        if not self.requires_grad:
            return t
        fn, nr = (node, self.output_nr) if self.is_output else self.edge
        if t._requires_grad and edge(t) == (fn, nr):
            return t  # the hook handed back the tensor itself
        alias = _make(Tensor, t._array, t._device)
        alias._requires_grad = True
        if type(fn) is AccumulateGrad:  # a leaf: the alias accumulates into it
            alias._grad_accumulator = weakref.ref(fn)
        else:
            alias._grad_fn, alias._output_nr = fn, nr
        return alias


def _unpack(node, saved):
    if saved.__class__ is _HookedSave:
        return saved.unpack(node)
    t, array, device, vc, version, output_nr = saved
    if t is None:
        t = _make(Tensor, array, device, version=vc)
        t._requires_grad, t._grad_fn, t._output_nr = True, node, output_nr
    else:
        vc = t._vc
    if vc.value != version:
        raise RuntimeError(_modified_message(t, vc.value, version))
    return t


def _modified_message(t, now, expected):
    shape = list(t._array.shape)
    where = ""
    if t._grad_fn is not None:
        # PyTorch names the op here, without the node's "Backward0" suffix
        op = re.sub(r"Backward\d*$", "", type(t._grad_fn).__name__)
        where = f", which is output {t._output_nr} of {op},"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{t.dtype._tensor_type} {shape}]{where} is at version {now}; "
            f"expected version {expected} instead. Hint: enable anomaly detection to find the "
            "operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False).")


_NO_EDGE = (None, 0)


def edge(t):
    """The edge into the graph for input `t`: its grad_fn, its leaf accumulator, or none."""
    if t._requires_grad:
        fn = t._grad_fn if t._base is None else t.grad_fn
        if fn is not None:
            return (fn, t._output_nr)
        acc = t._grad_accumulator
        acc = acc() if acc is not None else None
        if acc is None:
            acc = AccumulateGrad(t)
            t._grad_accumulator = weakref.ref(acc)
        return (acc, 0)
    # A view that was not tracked when made joins the graph once its base does (in-place).
    if t._base is not None and t._base._requires_grad and t.grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    return _NO_EDGE


def record(cls, inputs, *outputs):
    """Make `outputs` the results of a new `cls` node over `inputs` when autograd must track
    it; return the node (to save tensors and attributes on) or None. Inputs with tangents
    (forward AD) get the node made regardless, for their results' tangents."""
    if _fw.level is not None:
        tangents = input_tangents(inputs)
        if tangents is not None:
            return _record_dual(cls, inputs, outputs, tangents)
    if not _grad_state.enabled:
        return None
    for t in inputs:
        if t._requires_grad:
            break
    else:
        return None
    if _sac_anywhere.count:
        _tell_selective_checkpoint(cls, inputs, outputs)
    node = _new(cls)
    if len(inputs) == 1:  # unary ops and views: their one input without comprehensions
        t = inputs[0]
        node._next = (edge(t),)
        node._meta = ((t._array.shape, t._array.dtype),)
    else:
        node._next = tuple([edge(t) for t in inputs])
        node._meta = tuple([(t._array.shape, t._array.dtype) for t in inputs])
    if _anomaly.enabled:
        node.metadata["traceback_"] = forward_traceback()
    if len(outputs) == 1:
        out = outputs[0]
        out._requires_grad = True
        out._grad_fn = node
        return node
    for i, out in enumerate(outputs):
        if out is not None:
            out._requires_grad = True
            out._grad_fn = node
            out._output_nr = i
    return node


_OWN_CODE = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d)
                  for d in ("ops", "autograd", "_tensor.py"))


def forward_traceback():
    """Where the op was called (for anomaly mode's report of a failing backward): the stack,
    less ember's own op machinery at its top, as PyTorch's shows the Python frames above its
    C++ ops."""
    import traceback
    frames = traceback.extract_stack()[:-2]
    while frames and frames[-1].filename.startswith(_OWN_CODE):
        frames.pop()
    return traceback.format_list(frames)


def _tell_selective_checkpoint(cls, inputs, outputs):
    """A selective checkpoint region runs: its policy hears of this op call (forward) or its
    kept outputs take the recomputed ones' place (recomputation)."""
    mode = _sac.mode
    if mode is not None:
        mode.on_op(cls, inputs, outputs)


def kept_output(cls, inputs):
    """In a selective checkpoint's recomputation, the array the forward kept for this call
    of a one-output op `cls` over `inputs` (so an expensive op need not compute it again),
    else None. The op still records its node; `record` then takes the kept output."""
    mode = _sac.mode
    if mode is None or not _grad_state.enabled or not _any_requires_grad(inputs):
        return None
    return mode.peek(cls)


def node_of(t):
    """The node an op just made for its result `t`: its grad_fn, or the node made for
    forward AD alone (for ops that set attributes on their node after recording)."""
    fn = t._grad_fn
    if fn is None and t._fw_grad is not None:
        fn = getattr(t._fw_grad[1], "node", None)
    return fn


def _record_dual(cls, inputs, outputs, tangents):
    """`record` where inputs carry tangents: the node of the op, tracked by autograd as
    ever where autograd tracks it, else made for forward AD alone (its results stay out of
    the reverse graph)."""
    if _grad_state.enabled and _any_requires_grad(inputs):
        level, _fw.level = _fw.level, None  # record it as autograd would, then add tangents
        try:
            node = record(cls, inputs, *outputs)
        finally:
            _fw.level = level
    else:
        node = _new(cls)
        node._next = (_NO_EDGE,) * len(inputs)
        node._meta = tuple([(t._array.shape, t._array.dtype) for t in inputs])
    mark_pending(node, tangents, outputs)
    return node


# the 0-dim tensor PyTorch wraps a Python number into: its dtype by the number's type
_WRAPPED_META = {bool: ((), np.dtype(np.bool_)), int: ((), np.dtype(np.int64)),
                 float: ((), np.dtype(np.float64)), complex: ((), np.dtype(np.complex128))}


def record_number(cls, t, number, out, number_first=False):
    """`record` for an op over tensor `t` and a Python number where PyTorch wraps the number
    into a 0-dim tensor input (add, sub, mul, div, where): the node gets an edge (None, 0)
    for it, so `next_functions` and a node hook's grad_inputs count it, and its backward
    returns None in that place. Written out (no loops) since `x * 2.0` is a hot path."""
    dual = _fw.level is not None and has_tangent(t)
    tracked = t._requires_grad and _grad_state.enabled
    if not (tracked or dual):
        return None
    node = _new(cls)
    e = edge(t) if tracked else _NO_EDGE
    m = (t._array.shape, t._array.dtype)
    n = _WRAPPED_META.get(type(number)) or ((), getattr(number, "dtype", None))
    if number_first:
        node._next, node._meta = (_NO_EDGE, e), (n, m)
    else:
        node._next, node._meta = (e, _NO_EDGE), (m, n)
    if tracked:
        if _sac_anywhere.count:
            _tell_selective_checkpoint(cls, (t, number)[::-1] if number_first else (t, number),
                                       (out,))
        out._requires_grad = True
        out._grad_fn = node
    if dual:
        tangents = input_tangents((t,))
        mark_pending(node, (None,) + tangents if number_first else tangents + (None,), (out,))
    return node


def needs_grad(*inputs):
    """Whether an op over these tensors would be recorded."""
    if _fw.level is not None and input_tangents(inputs) is not None:
        return True
    if not _grad_state.enabled:
        return False
    for t in inputs:
        if t._requires_grad:
            return True
    return False


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


def _any_requires_grad(tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t._requires_grad:
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


def not_a_tensor(fname, obj, arg="input", pos=1):
    """PyTorch's TypeError for a non-tensor where a tensor argument belongs (ops call it when
    reading `._array` fails, so the common path pays nothing for the check)."""
    return TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not "
                     f"{type(obj).__name__}")

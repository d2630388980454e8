"""The one op mechanism: how an op's result joins the autograd graph.

An op computes its forward on backend arrays, then calls `record(NodeClass, inputs, out)`.
If grad mode is on and an input requires grad, `record` makes a node (the result's
`grad_fn`, named as PyTorch names it: `MulBackward0`) holding edges to the inputs' nodes.
The node's `backward` is written with ember ops on Tensors, so the engine can build a graph
of the backward pass itself (`create_graph=True`). User `autograd.Function`s are nodes too.

In-place ops go through `_writes.inplace`, out= through `_writes.write_out`: one path each
for every op.
"""
import contextlib
import os
import re
import weakref

import numpy as np

_new = object.__new__

from .._state import (anomaly as _anomaly, flop_counter as _flops, forward_ad as _fw,
                      grad as _grad_state, profiler as _profiler, saved_tensor_hooks as _saved_hooks,
                      selective_checkpoint as _sac,
                      selective_checkpoint_anywhere as _sac_anywhere,
                      saved_tensor_hooks_anywhere as _saved_hooks_anywhere)
from .._tensor import Tensor, _make
from ..utils.hooks import register as _register_hook
from ._dual import has_tangent, input_tangents, mark_pending

__all__ = ["Node", "AccumulateGrad", "record", "record_number", "first_order_arrays"]


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

def _any_requires_grad(tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t._requires_grad:
            return True
    return False


def not_a_tensor(fname, obj, arg="input", pos=1):
    """PyTorch's TypeError for a non-tensor where a tensor argument belongs (ops call it when
    reading `._array` fails, so the common path pays nothing for the check)."""
    return TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be Tensor, not "
                     f"{type(obj).__name__}")

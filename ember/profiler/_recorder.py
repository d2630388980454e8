"""Recording the ops ember runs while a profiler is on.

No op pays anything when nothing is profiled: when the first profiler starts, the public op
functions (`ember.*` ops, `ember.linalg`, `ember.nn.functional`, and the Tensor methods and
operators) are replaced by timing wrappers, and the originals are put back when the last
one stops. The autograd engine times each node's backward itself (one flag read per
backward). Each event knows its parent, so self time is its time less its children's.
"""
import functools
import inspect
import threading
import time

from .. import _state

__all__ = ["Recorder", "RawEvent", "start", "stop", "input_shapes"]


class RawEvent:
    __slots__ = ("name", "start_ns", "end_ns", "parent", "children", "shapes", "thread",
                 "annotation")

    def __init__(self, name, parent, shapes, annotation):
        self.name = name
        self.parent = parent
        self.children = []
        self.shapes = shapes
        self.thread = threading.get_ident()
        self.annotation = annotation
        self.end_ns = None
        self.start_ns = time.perf_counter_ns()


class Recorder:
    def __init__(self, record_shapes):
        self.record_shapes = record_shapes
        self.events = []
        self._local = threading.local()
        self.base_ns = time.perf_counter_ns()
        self.wall_base_us = time.time() * 1e6

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def open(self, name, args=(), kwargs=None, annotation=False):
        stack = self._stack()
        shapes = input_shapes(args, kwargs) if self.record_shapes else []
        event = RawEvent(name, stack[-1] if stack else None, shapes, annotation)
        if event.parent is not None:
            event.parent.children.append(event)
        self.events.append(event)
        stack.append(event)
        return event

    def close(self, event):
        event.end_ns = time.perf_counter_ns()
        stack = self._stack()
        if stack and stack[-1] is event:
            stack.pop()
        elif event in stack:
            stack.remove(event)


def input_shapes(args, kwargs):
    """The shape of each tensor argument ([] for the others), as the profiler lists them."""
    from .._tensor import Tensor
    values = list(args) + (list(kwargs.values()) if kwargs else [])
    return [list(v.shape) if isinstance(v, Tensor) else [] for v in values]


# ---- the wrappers ------------------------------------------------------------------------
_OPERATOR_NAMES = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub",
    "__rsub__": "rsub", "__isub__": "sub_", "__mul__": "mul", "__rmul__": "mul",
    "__imul__": "mul_", "__truediv__": "div", "__rtruediv__": "div", "__itruediv__": "div_",
    "__floordiv__": "floor_divide", "__rfloordiv__": "floor_divide", "__mod__": "remainder",
    "__rmod__": "remainder", "__pow__": "pow", "__rpow__": "pow", "__ipow__": "pow_",
    "__matmul__": "matmul", "__rmatmul__": "matmul", "__neg__": "neg", "__abs__": "abs",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor",
    "__invert__": "bitwise_not",
}

_targets = None     # [(owner, attribute, original, op name)], found once
_installed = [0]    # how many profilers are recording
_lock = threading.Lock()


def _wrap(fn, name):
    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        rec = _state.profiler.active
        if rec is None:
            return fn(*args, **kwargs)
        event = rec.open(name, args, kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            rec.close(event)
    return profiled


def _wrap_inplace_flag(fn, name, position):
    """A functional with an `inplace` flag (F.relu, F.dropout ...): recorded as its in-place
    op (`aten::relu_`) when the flag is on, as PyTorch's functional calls that op."""
    @functools.wraps(fn)
    def profiled(*args, **kwargs):
        rec = _state.profiler.active
        if rec is None:
            return fn(*args, **kwargs)
        flag = kwargs["inplace"] if "inplace" in kwargs else (
            len(args) > position and args[position])
        event = rec.open(name + "_" if flag is True else name, args, kwargs)
        try:
            return fn(*args, **kwargs)
        finally:
            rec.close(event)
    return profiled


def _inplace_position(fn):
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    return names.index("inplace") if "inplace" in names else None


def _find_targets():
    import ember
    from .. import linalg, ops
    from .._tensor import Tensor
    from ..nn import functional
    found = []
    for name in ops.__all__:
        value = getattr(ember, name, None)
        if inspect.isfunction(value):
            found.append((ember, name, value, "aten::" + name))
    for module, prefix in ((linalg, "aten::linalg_"), (functional, "aten::")):
        for name in getattr(module, "__all__", ()):
            value = module.__dict__.get(name)
            if inspect.isfunction(value):
                found.append((module, name, value, prefix + name))
    methods = {n for family in ops.FAMILIES for n in family.METHODS}
    for name in sorted(methods):
        value = Tensor.__dict__.get(name)
        if inspect.isfunction(value):
            found.append((Tensor, name, value, "aten::" + name))
    for name, op_name in _OPERATOR_NAMES.items():
        value = Tensor.__dict__.get(name)
        if inspect.isfunction(value):
            found.append((Tensor, name, value, "aten::" + op_name))
    return found


def start(recorder):
    global _targets
    with _lock:
        _state.profiler.active = recorder
        _installed[0] += 1
        if _installed[0] > 1:
            return
        if _targets is None:
            _targets = _find_targets()
        for owner, attr, original, name in _targets:
            position = _inplace_position(original)
            setattr(owner, attr, _wrap(original, name) if position is None
                    else _wrap_inplace_flag(original, name, position))


def stop(recorder):
    with _lock:
        if _state.profiler.active is recorder:
            _state.profiler.active = None
        _installed[0] -= 1
        if _installed[0] > 0:
            return
        for owner, attr, original, _ in _targets:
            setattr(owner, attr, original)

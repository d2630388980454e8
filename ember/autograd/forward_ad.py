"""`torch.autograd.forward_ad`: forward-mode automatic differentiation.

Inside a dual level, `make_dual(x, t)` gives a tensor carrying tangent `t`; every op on it
gives results carrying J @ t, read with `unpack_dual`. How an op's tangent comes out of its
backward formula (one derivative per op) is told in ember/ops/_dual.py; the computation
itself lives here, a floor above the ops, since it runs the engine.
"""
from typing import NamedTuple

from .._state import autocast as _autocast, forward_ad as _fw, grad as _grad_state
from .._autograd_meta import forward_grad, set_tangent
from .._tensor import Tensor
from ..ops import _dual, _graph, _writes
from ..ops.creation import zeros as _zeros
from . import engine as _engine
from .grad_mode import _DecoratorContextManager

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1


class _Level:
    """The token tensors' tangents are kept with: closing the level makes them all stale."""


def enter_dual_level():
    """Open a dual level (forward AD's scope) and return its number. Levels do not nest."""
    global _current_level
    if _fw.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _fw.level = _Level()
    _writes.write_watchers.append(_dual.resolve_pending)
    _current_level += 1
    return _current_level


def exit_dual_level(*, level=None):
    """Close the dual level: every tangent made in it is forgotten."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _fw.level = None
    _dual.forget_pending()
    if _dual.resolve_pending in _writes.write_watchers:
        _writes.write_watchers.remove(_dual.resolve_pending)
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """A view of `tensor` carrying `tangent` (of its size) at the dual level."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if tangent.shape != tensor.shape:
        raise RuntimeError("Trying to set a forward gradient that has a different size than "
                           "that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if tangent.device != tensor.device:
        raise RuntimeError("Trying to set a forward gradient that is on a different device "
                           f"than that of the original Tensor, this is not supported. Tensor "
                           f"is on {tensor.device} while the given forward gradient is on "
                           f"{tangent.device}.")
    dual = _untangled(tensor)
    set_tangent(dual, tangent)
    return dual


class UnpackedDualTensor(NamedTuple):
    """What unpack_dual returns: the primal (a view without tangent) and the tangent."""
    primal: Tensor
    tangent: Tensor | None


def unpack_dual(tensor, *, level=None):
    """(primal, tangent) of a dual tensor: the tangent is None where it has none."""
    if level is None:
        level = _current_level
    if level < 0 or not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    tangent = forward_grad(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_untangled(tensor), tangent)


def _untangled(tensor):
    """A view of `tensor` (tracked by reverse mode as any view) with no tangent."""
    level, _fw.level = _fw.level, None
    try:
        return tensor.view_as(tensor)
    finally:
        _fw.level = level


class dual_level(_DecoratorContextManager):
    """The scope of forward AD: `with dual_level(): ...` (also a decorator)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


# ---- an op's tangents, from its backward ----------------------------------------------------
class _Sink(_graph.Node):
    """Stands in an edge of an input that has a tangent, so the node's backward computes
    that input's gradient (it skips inputs whose edge is empty). Never run. It is a node
    with no edges because the graph of that gradient may lead back through the node itself
    (a saved result that requires grad, as tanh's), and the engine then walks these edges."""

    _next = ()


_SINK_EDGE = (_Sink(), 0)


def _node_jvp(node):
    """The tangents of `node`'s outputs (None for non-differentiable ones), from the
    tangents its inputs had when it ran: J @ t = d<backward(v), t>/dv."""
    tangents, outputs = node._fw_inputs, node._fw_outputs
    grad_was, level, cast = _grad_state.enabled, _fw.level, _autocast.thread.dtypes
    next_edges = node._next
    # the tangent is itself differentiable (reverse over forward) when its inputs are
    keep = grad_was and (any(e[0] is not None for e in next_edges)
                         or any(u is not None and u.requires_grad for u in tangents))
    _grad_state.enabled, _fw.level = True, None
    if cast:
        _autocast.thread.dtypes = {}
    try:
        node._next = tuple(_graph._NO_EDGE if u is None else _SINK_EDGE for u in tangents)
        vs = _output_gradients(node, outputs)
        grads = node.backward(*vs)
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        gs, us = [], []
        for i, u in enumerate(tangents):
            g = grads[i] if i < len(grads) else None
            if u is None or g is None or not g.requires_grad:
                continue
            gs.append(_as_input(g, node._meta[i]))
            us.append(u if u.dtype == g.dtype else u.to(g.dtype))
        wanted = [v for v in vs if v is not None and v.requires_grad]
        got = _engine.grad(gs, wanted, us, retain_graph=keep, create_graph=keep,
                           allow_unused=True) if gs and wanted else [None] * len(wanted)
    finally:
        node._next = next_edges
        _grad_state.enabled, _fw.level = grad_was, level
        if cast:
            _autocast.thread.dtypes = cast
    got = iter(got)
    results = []
    for v, o in zip(vs, outputs):
        if o is None or v is None or not v.requires_grad:
            results.append(None)
            continue
        t = next(got)
        results.append(t if t is not None else _zeros(o[0], dtype=o[1], device=o[2]))
    return results


def _output_gradients(node, outputs):
    """v: a zero gradient requiring grad for each output with a tangent; for the others
    what the engine would hand the backward (zeros where the node materialises, else None)."""
    every = getattr(node, "_out_meta", None) or outputs
    vs = []
    for i, meta in enumerate(every):
        differentiable = i < len(outputs) and outputs[i] is not None and (
            outputs[i][1].is_floating_point or outputs[i][1].is_complex)
        if differentiable:
            shape, dtype, device = outputs[i]
            vs.append(_zeros(shape, dtype=dtype, device=device).requires_grad_())
        elif node._materialize_grads and meta is not None and meta[1] is not None:
            vs.append(_zeros(meta[0], dtype=meta[1], device=meta[2]))
        else:
            vs.append(None)
    return vs


def _as_input(g, meta):
    """A gradient the backward returned, reduced and cast to its input as the engine does."""
    shape, np_dtype = meta
    if tuple(g.shape) != tuple(shape):
        g = g.sum_to_size(shape)
    if g._array.dtype != np_dtype:
        from ..dtypes import FROM_NUMPY
        g = g.to(FROM_NUMPY[np_dtype])
    return g


_fw.resolve = _node_jvp

"""Forward-mode AD's place in the one op mechanism.

A tensor carries a tangent at the open dual level (`Tensor._fw_grad`, read through
`forward_grad`). When an op's inputs carry tangents, `record` (ops/_graph.py) gives it a
node even where autograd would not track it, holding the inputs' tangents; its results get
a *pending* tangent on that node. The tangent is computed when first read, once the op has
saved what its backward needs, from the node's own backward formula (the double-vjp:
the backward is linear in the output gradient v, so differentiating <backward(v), tangents>
with respect to v gives J @ tangents). So each op has one derivative, its backward, and
forward mode follows it. ember.autograd.forward_ad installs that computation
(`_state.forward_ad.resolve`), as it sits a floor above the ops.

Before an in-place write, and before a backward frees saved tensors, every pending tangent
is computed, so what the nodes saved is still as it was when the op ran (PyTorch computes
tangents as each op runs).
"""
import weakref

from .._state import forward_ad as _fw, grad as _grad_state
from .._autograd_meta import forward_grad, set_tangent

__all__ = ["input_tangents", "mark_pending", "carry_tangent", "resolve_pending", "has_tangent"]


def has_tangent(t):
    """Whether tensor `t` carries a tangent at the open level (without computing it)."""
    entry = t._fw_grad
    return entry is not None and entry[0] is _fw.level


def refuse_tangent(t, op_name):
    """PyTorch's NotImplementedError for an op without a forward-mode formula, where `t`
    carries a tangent (it refuses before any other check of the call)."""
    if _fw.level is not None and has_tangent(t):
        raise NotImplementedError(
            f"Trying to use forward AD with {op_name} that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
            "pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
            "its implementation or submit a PR adding the implementation to derivatives.yaml")


def input_tangents(inputs):
    """The inputs' tangents (None where one has none), or None when no input has one or
    forward AD is off (no open level, inference mode)."""
    if _grad_state.inference:
        return None
    found = False
    for t in inputs:
        if t is not None and t._fw_grad is not None and t._fw_grad[0] is _fw.level:
            found = True
            break
    if not found:
        return None
    return tuple(None if t is None else forward_grad(t) for t in inputs)


class _Pending:
    """An output's tangent still to be computed from its op's node."""
    __slots__ = ("node", "index")

    def __init__(self, node, index):
        self.node, self.index = node, index

    def resolve(self):
        node = self.node
        tangents = node.__dict__.get("_fw_results")
        if tangents is None:
            tangents = node._fw_results = _fw.resolve(node)
            node._fw_inputs = None  # what they were computed from can go
        return tangents[self.index]


_pending = []  # weak references to tensors whose tangent is pending


def mark_pending(node, tangents, outputs):
    """Give the differentiable `outputs` of `node` pending tangents computed from the
    inputs' `tangents`."""
    node._fw_inputs = tangents
    node._fw_outputs = tuple(None if o is None else (o._array.shape, o.dtype, o._device)
                             for o in outputs)
    for i, out in enumerate(outputs):
        if out is not None and (out.dtype.is_floating_point or out.dtype.is_complex):
            set_tangent(out, _Pending(node, i))
            _pending.append(weakref.ref(out))


def on_dual_node(node):
    """Whether `node` computes tangents (then its backward may need every operand)."""
    return node.__dict__.get("_fw_inputs") is not None


def carry_tangent(dst, src):
    """After an in-place op wrote `src`'s value into `dst`: `dst` takes `src`'s tangent,
    computed now (what its node saved may be `dst`'s memory, about to change again)."""
    if src._fw_grad is not None and src._fw_grad[0] is _fw.level:
        set_tangent(dst, forward_grad(src))
    elif dst._fw_grad is not None:
        dst._fw_grad = None


def resolve_pending(*_):
    """Compute every pending tangent now (called before in-place writes and backward)."""
    refs = _pending[:]
    _pending.clear()
    for ref in refs:
        t = ref()
        if t is not None:
            forward_grad(t)


def forget_pending():
    """The level closed: pending tangents will never be read."""
    _pending.clear()

"""A tensor's autograd metadata that the Tensor class does not keep up itself: its
forward-mode tangent at the open dual level (read and set by the ops, forward_ad and custom
Functions), and the grad_fn a view gets again after an in-place write through an alias."""
from ._state import forward_ad as _forward_ad, grad as _grad_state


def forward_grad(t):
    """`t`'s tangent at the open dual level, or None. An op's result holds a pending
    tangent until something reads it (it is computed from the op's node once the op has
    saved what its backward needs). A view whose memory was written since its tangent was
    set takes its base's tangent through the same view (as PyTorch's tangent of a view is a
    view of its base's tangent)."""
    entry = t._fw_grad
    if entry is None:
        return None
    level, value, version = entry
    if level is not _forward_ad.level:
        return None
    if version != t._vc.value and t._base is not None and t._view_fn is not None:
        base_tangent = forward_grad(t._base)
        if base_tangent is not None:
            level, _forward_ad.level = _forward_ad.level, None
            try:
                value = t._view_fn(base_tangent)
            finally:
                _forward_ad.level = level
            set_tangent(t, value)
            return value
    from ._tensor import Tensor  # (here: _tensor imports this module)
    if not isinstance(value, Tensor):
        value = value.resolve()
        t._fw_grad = (level, value, version)
    return value


def set_tangent(t, value):
    """Give `t` tangent `value` (a Tensor, or a pending one) at the open dual level."""
    t._fw_grad = (_forward_ad.level, value, t._vc.value)


def _refresh_view_grad_fn(view):
    """After an in-place write through any alias, a view's grad_fn is rebuilt from its base."""
    view._fn_version = view._vc.value
    base = view._base
    if not (base._requires_grad and _grad_state.enabled) or view._view_fn is None:
        return
    fresh = view._view_fn(base)
    _as_strided_named(fresh._grad_fn)
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = True


_AS_STRIDED = {}


def _as_strided_named(node):
    """PyTorch regenerates a view's grad_fn with as_strided: users see AsStridedBackward0.
    ember replays the view ops instead, and gives the replayed node that name."""
    if node is None:
        return
    cls = type(node)
    if cls.__name__ == "AsStridedBackward0":
        return
    named = _AS_STRIDED.get(cls)
    if named is None:
        named = _AS_STRIDED[cls] = type("AsStridedBackward0", (cls,), {})
    node.__class__ = named

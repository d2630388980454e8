"""`RemovableHandle` (`torch.utils.hooks`): what every hook registration returns, on tensors,
autograd nodes, modules and optimizers alike; and the marking of hooks that are not meant to be
saved with a tensor. Ground floor: it knows only dicts (and a tensor's `_backward_hooks`)."""
import itertools
import warnings
import weakref

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Decorator: mark hook `f` as one that is not saved with its tensor, which silences
    warn_if_has_hooks about it."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor):
    """Warn about each backward hook of `tensor` that saving it would lose."""
    hooks = tensor._backward_hooks
    for hook in (hooks or {}).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)


def _reference(d):
    """A weak reference where the dict allows one (a handle the user keeps must not keep a
    freed graph node's hooks alive); a plain dict is held strongly."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class RemovableHandle:
    """The caller stores its hook under `handle.id`; `remove()` takes it out of the hooks dict
    and of the extra dicts that hold per-hook flags (a forward hook's `with_kwargs` ...)."""

    _ids = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.id = next(RemovableHandle._ids)
        self.hooks_dict_ref = _reference(hooks_dict)
        if extra_dict is None:
            extra_dict = ()
        elif not isinstance(extra_dict, (list, tuple)):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(_reference(d) for d in extra_dict)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register(hooks_dict, hook):
    """Store `hook` in `hooks_dict` under a new handle's id; return the handle."""
    handle = RemovableHandle(hooks_dict)
    hooks_dict[handle.id] = hook
    return handle

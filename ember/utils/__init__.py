"""`ember.utils`, as `torch.utils`. This package file imports nothing, so the ground-floor
`ember.utils.hooks` loads alone; `import ember` brings `data` and `checkpoint`."""

__all__ = ["set_module", "swap_tensors"]


def set_module(obj, mod):
    """Give `obj` the `__module__` it should print with."""
    if not isinstance(mod, str):
        raise TypeError("The mod argument should be a string")
    obj.__module__ = mod


def _slots(kind):
    return {name for klass in kind.__mro__ for name in vars(klass).get("__slots__", ())
            if name not in ("__dict__", "__weakref__")}


def swap_tensors(t1, t2):
    """Swap the whole contents of two tensors (class, data, autograd state, attributes) while
    each object keeps its identity, so every reference to `t1` now sees what `t2` held."""
    import weakref
    for name, t in (("t1", t1), ("t2", t2)):
        if not hasattr(t, "_array"):
            raise AttributeError(f"'{type(t).__name__}' object has no attribute '_use_count'")
        if weakref.getweakrefcount(t):
            raise RuntimeError(f"Cannot swap {name} because it has weakref associated with it")
    slots1, slots2 = _slots(type(t1)), _slots(type(t2))
    if slots1 != slots2:
        raise RuntimeError("Cannot swap t1 and t2 if they have different slots")
    for name in slots1:
        missing = object()
        a, b = getattr(t1, name, missing), getattr(t2, name, missing)
        for t, value in ((t1, b), (t2, a)):
            if value is missing:
                delattr(t, name)
            else:
                setattr(t, name, value)
    t1.__dict__, t2.__dict__ = t2.__dict__, t1.__dict__
    t1.__class__, t2.__class__ = t2.__class__, t1.__class__

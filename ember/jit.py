"""`ember.jit`: scripting and tracing run the eager function (what backend="eager" means in
PyTorch): same results, no compilation."""
__all__ = ["compile", "script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing", "save",
           "load", "ScriptModule"]


class ScriptModule:
    pass


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    return func


def ignore(drop=False, **kwargs):
    return drop if callable(drop) else (lambda fn: fn)


def unused(fn):
    return fn


def export(fn):
    return fn


def is_scripting():
    return False


def is_tracing():
    return False


def save(m, f, _extra_files=None):
    from .serialization import save as _save
    _save(m, f)


def load(f, map_location=None, _extra_files=None):
    from .serialization import load as _load
    return _load(f, map_location=map_location, weights_only=False)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """`torch.compile` with the eager backend's semantics: the model or function, unchanged."""
    if model is None:
        return lambda m: m
    return model

"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Each is a context manager and a decorator; the switch is thread-local (`_state.grad`).
"""
import functools
import inspect

from .._state import grad as _grad

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled",
           "enforce_grad_layout_policy"]


def is_grad_enabled():
    return _grad.enabled


def is_inference_mode_enabled():
    return _grad.inference


class _DecoratorContextManager:
    """A context manager that is also a decorator: the decorated function (or each step of
    a decorated generator) runs inside a fresh `clone()` of it."""

    def clone(self):
        return self.__class__()

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        gen.close()
                        raise
                    with self.clone():
                        response = gen.send(request)
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper


class _Mode(_DecoratorContextManager):
    """Base: subclasses define `_target()` -> (grad enabled, inference) while inside."""

    def __enter__(self):
        self._prev = (_grad.enabled, _grad.inference)
        _grad.enabled, _grad.inference = self._target()
        return self

    def __exit__(self, *exc):
        _grad.enabled, _grad.inference = self._prev
        return False


class no_grad(_Mode):
    def __init__(self, orig_func=None):
        if orig_func is not None and callable(orig_func):
            raise TypeError("no_grad() takes no arguments; use @no_grad() or @no_grad")

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):  # bare @no_grad
            return cls()(orig_func)
        return super().__new__(cls)

    def _target(self):
        return False, _grad.inference


class enable_grad(_Mode):
    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __init__(self, orig_func=None):
        pass

    def _target(self):
        return True, _grad.inference


class set_grad_enabled(_Mode):
    """Takes effect at once (so it works as a plain call), and restores on exit."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self.mode = mode
        self._prev = (_grad.enabled, _grad.inference)
        _grad.enabled = self.mode

    def __enter__(self):
        return self

    def _target(self):
        return self.mode, _grad.inference

    def clone(self):
        return _Scoped(self.mode)

    def __call__(self, fn):
        # as a decorator it must not stay switched: PyTorch restores the mode at decoration
        _grad.enabled, _grad.inference = self._prev
        return super().__call__(fn)


class _Scoped(_Mode):
    """set_grad_enabled as a decorator: the switch happens on each call, not at decoration."""

    def __init__(self, mode):
        self.mode = mode

    def _target(self):
        return self.mode, _grad.inference


class inference_mode(_Mode):
    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = mode

    def clone(self):
        return self.__class__(self.mode)

    def _target(self):
        if not self.mode:
            return _grad.enabled, False
        return False, True


class _SwitchNow(_DecoratorContextManager):
    """A thread-local switch of `_state.grad` (attribute `_field`) that takes effect when
    made (so a plain call works) and is restored on exit; as a decorator, on each call."""
    _field = None

    def __init__(self, mode):
        self.prev = getattr(_grad, self._field)
        setattr(_grad, self._field, bool(mode))
        self.mode = mode

    def __call__(self, fn):
        setattr(_grad, self._field, self.prev)
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        setattr(_grad, self._field, self.prev)

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_SwitchNow):
    """Whether backward may run on device worker threads. ember's engine always runs backward
    on the calling thread (what mode=False asks for), so either setting gives the same run."""
    _field = "multithreading"


class enforce_grad_layout_policy(_SwitchNow):
    """Whether a leaf's first gradient is made to follow the leaf's layout (strides as a
    dense leaf's, else contiguous). With enable=False, a gradient the engine may take over
    keeps its own layout (no copy); one it must copy is still laid out as the leaf."""
    _field = "layout_enforced"

    def __init__(self, enable=True):
        super().__init__(enable)

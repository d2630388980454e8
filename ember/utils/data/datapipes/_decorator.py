"""The datapipe decorators (torch.utils.data.datapipes._decorator): functional_datapipe
registers a DataPipe class as a method of every DataPipe (`dp.map(fn)`), non_deterministic and
guaranteed_datapipes_determinism refuse random pipes when determinism is asked for,
argument_validation and runtime_validation check DataPipe types against type hints."""
import inspect
from functools import wraps
from typing import get_type_hints

from .datapipe import IterDataPipe, MapDataPipe
from ._typing import _DataPipeMeta

__all__ = ["functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
           "argument_validation", "runtime_validation_disabled", "runtime_validation"]


class functional_datapipe:
    def __init__(self, name, enable_df_api_tracing=False):
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if issubclass(cls, IterDataPipe):
            if isinstance(cls, type):
                if not isinstance(cls, _DataPipeMeta):
                    raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            elif not isinstance(cls, non_deterministic) and not (
                    hasattr(cls, "__self__") and isinstance(cls.__self__, non_deterministic)):
                raise TypeError("`functional_datapipe` can only decorate IterDataPipe")
            IterDataPipe.register_datapipe_as_function(
                self.name, cls, enable_df_api_tracing=self.enable_df_api_tracing)
        elif issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        return cls


_determinism = False


class guaranteed_datapipes_determinism:
    """While alive (or inside `with`), non-deterministic DataPipes refuse to be built."""

    def __init__(self):
        global _determinism
        self.prev = _determinism
        _determinism = True

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _determinism
        _determinism = self.prev


class non_deterministic:
    cls = None

    def __init__(self, arg):
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError("Only `IterDataPipe` can be decorated with `non_deterministic`"
                                f", but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            # a function of the constructor's arguments saying whether they make it random
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _determinism:
                raise TypeError(f"{self.cls.__name__} is non-deterministic, but you set "
                                "'guaranteed_datapipes_determinism'. You can turn off "
                                "determinism for this DataPipe if that is acceptable for your "
                                "application")
            return self.cls(*args, **kwargs)
        if not (isinstance(args[0], type) and issubclass(args[0], IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {args[0].__name__} is "
                            "found")
        self.cls = args[0]
        return self.deterministic_wrapper_fn

    def deterministic_wrapper_fn(self, *args, **kwargs):
        res = self.deterministic_fn(*args, **kwargs)
        if not isinstance(res, bool):
            raise TypeError("deterministic_fn of `non_deterministic` decorator is required to "
                            f"return a boolean value, but {type(res)} is found")
        if _determinism and res:
            raise TypeError(f"{self.cls.__name__} is non-deterministic with the inputs, but you "
                            "set 'guaranteed_datapipes_determinism'. You can turn off "
                            "determinism for this DataPipe if that is acceptable for your "
                            "application")
        return self.cls(*args, **kwargs)


def argument_validation(f):
    """Checks the arguments hinted as IterDataPipe[T] are IterDataPipes of a subtype of T."""
    signature = inspect.signature(f)
    hints = get_type_hints(f)

    @wraps(f)
    def wrapper(*args, **kwargs):
        for name, value in signature.bind(*args, **kwargs).arguments.items():
            hint = hints.get(name)
            if isinstance(hint, _DataPipeMeta):
                if not isinstance(value, IterDataPipe):
                    raise TypeError(f"Expected argument '{name}' as a IterDataPipe, but found "
                                    f"{type(value)}")
                if not value.type.issubtype(hint.type):
                    raise TypeError(f"Expected type of argument '{name}' as a subtype of hint "
                                    f"{hint.type}, but found {value.type}")
        return f(*args, **kwargs)
    return wrapper


_runtime_validation_enabled = True


class runtime_validation_disabled:
    def __init__(self):
        global _runtime_validation_enabled
        self.prev = _runtime_validation_enabled
        _runtime_validation_enabled = False

    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        global _runtime_validation_enabled
        _runtime_validation_enabled = self.prev


def runtime_validation(f):
    """Wraps an `__iter__` so every item is checked against the DataPipe's declared type."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")

    @wraps(f)
    def wrapper(self):
        if not _runtime_validation_enabled:
            yield from f(self)
            return
        for d in f(self):
            if not self.type.issubtype_of_instance(d):
                raise RuntimeError(f"Expected an instance as subtype of {self.type}, but found "
                                   f"{d}({type(d)})")
            yield d
    return wrapper

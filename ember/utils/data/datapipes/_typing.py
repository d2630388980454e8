"""The element types of DataPipes (torch.utils.data.datapipes._typing, the parts users meet):
`IterDataPipe[int]` is a subclass whose `.type` is the element type, checked by
argument_validation and runtime_validation. Subtyping covers Any, classes, Union/Optional and
generic containers (List[int], Tuple[int, str], Dict[str, int]) by their arguments."""
import abc
import collections.abc
import functools
import inspect
import typing
from typing import Any, Union, get_args, get_origin

__all__ = ["_DataPipeType", "_DataPipeMeta", "_IterDataPipeMeta"]


def _issubtype(left, right):
    if right is Any or left == right:
        return True
    if get_origin(right) is Union:
        return any(_issubtype(left, r) for r in get_args(right))
    if get_origin(left) is Union:
        return all(_issubtype(part, right) for part in get_args(left))
    if left is Any:
        return False
    l_origin, r_origin = get_origin(left) or left, get_origin(right) or right
    if not (isinstance(l_origin, type) and isinstance(r_origin, type)
            and issubclass(l_origin, r_origin)):
        return False
    r_args = get_args(right)
    if not r_args:
        return True
    l_args = get_args(left) or (Any,) * len(r_args)
    return len(l_args) == len(r_args) and all(_issubtype(a, b) for a, b in zip(l_args, r_args))


def _isinstance(value, hint):
    if hint is Any:
        return True
    origin = get_origin(hint)
    if origin is Union:
        return any(_isinstance(value, h) for h in get_args(hint))
    if origin is None:
        return isinstance(value, hint) if isinstance(hint, type) else True
    if not isinstance(value, origin):
        return False
    args = get_args(hint)
    if not args:
        return True
    if issubclass(origin, collections.abc.Mapping):
        return all(_isinstance(k, args[0]) and _isinstance(v, args[1])
                   for k, v in value.items())
    if issubclass(origin, tuple) and not (len(args) == 2 and args[1] is Ellipsis):
        return len(value) == len(args) and all(_isinstance(v, a) for v, a in zip(value, args))
    return all(_isinstance(v, args[0]) for v in value)


class _DataPipeType:
    """The declared element type of a DataPipe class."""

    def __init__(self, param):
        self.param = param

    def __repr__(self):
        return typing._type_repr(self.param)

    def __eq__(self, other):
        return isinstance(other, _DataPipeType) and self.param == other.param

    def __hash__(self):
        return hash(self.param)

    def issubtype(self, other):
        if isinstance(other, _DataPipeType):
            return _issubtype(self.param, other.param)
        if isinstance(other, type):
            return _issubtype(self.param, other)
        raise TypeError(f"Expected '_DataPipeType' or 'type', but found {type(other)}")

    def issubtype_of_instance(self, other):
        return _isinstance(other, self.param)


class _DataPipeMeta(abc.ABCMeta):
    """DataPipe classes can be subscripted with their element type: IterDataPipe[int]."""
    type = _DataPipeType(Any)

    def __getitem__(cls, param):
        if param is None:
            raise TypeError(f"{cls.__name__}[t]: t can not be None")
        new = type(cls)(f"{cls.__name__}[{typing._type_repr(param)}]", (cls,),
                        {"__module__": cls.__module__, "type": _DataPipeType(param)})
        return new


def _iterator_message(datapipe):
    names = set(inspect.signature(type(datapipe)).parameters)
    args = ", ".join(f"{name}={value.__name__ if inspect.isfunction(value) else repr(value)}"
                     for name, value in inspect.getmembers(datapipe) if name in names)
    return (f"This iterator has been invalidated because another iterator has been created "
            f"from the same IterDataPipe: {type(datapipe).__name__}({args})\nThis may be caused "
            "by multiple references to the same IterDataPipe. We recommend using `.fork()` if "
            "that is necessary.")


def _start_iteration(datapipe):
    """A new iterator: it becomes the only valid one, and the DataPipe is reset for it."""
    datapipe._valid_iterator_id = (0 if getattr(datapipe, "_valid_iterator_id", None) is None
                                   else datapipe._valid_iterator_id + 1)
    datapipe._number_of_samples_yielded = 0
    datapipe.reset()
    return datapipe._valid_iterator_id


def _hook_iter(fn):
    """One valid iterator per IterDataPipe, as torch enforces: starting a second one resets the
    DataPipe and makes the first raise on its next item."""
    if getattr(fn, "_datapipe_hooked", False):
        return fn
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            iterator_id = _start_iteration(self)
            for item in fn(self, *args, **kwargs):
                self._number_of_samples_yielded += 1
                yield item
                if self._valid_iterator_id != iterator_id:
                    raise RuntimeError(_iterator_message(self))
    else:
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            _start_iteration(self)
            return fn(self, *args, **kwargs)
    wrapper._datapipe_hooked = True
    return wrapper


class _IterDataPipeMeta(_DataPipeMeta):
    def __new__(mcs, name, bases, namespace, **kwargs):
        if "__iter__" in namespace and name != "IterDataPipe":
            namespace["__iter__"] = _hook_iter(namespace["__iter__"])
        return super().__new__(mcs, name, bases, namespace, **kwargs)

"""`torch.jit.isinstance`: a check against a container type with its element types
(`List[int]`, `Dict[str, Tensor]`, `Optional[Tuple[int, str]]`), as TorchScript refines types."""
import builtins
import types
import typing


def isinstance(obj, target_type):  # noqa: A001 (PyTorch's name)
    if target_type in (list, dict, tuple, typing.List, typing.Dict, typing.Tuple):
        name = getattr(target_type, "__name__", None) or getattr(target_type, "_name", "")
        name = name.lower()
        example = {"list": "list[int]", "dict": "dict[int, int]", "tuple": "tuple[int]"}[name]
        raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                           f"contained type, e.g. {example}")
    return _matches(obj, target_type)


def _matches(obj, t):
    if t is typing.Any:
        return True
    if t is None or t is type(None):
        return obj is None
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is None:
        if t is float:
            return builtins.isinstance(obj, float)
        if t is int:
            return builtins.isinstance(obj, int) and not builtins.isinstance(obj, bool)
        return builtins.isinstance(obj, t)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(obj, a) for a in args)
    if origin is list:
        return builtins.isinstance(obj, list) and all(_matches(v, args[0]) for v in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(
            _matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        if not builtins.isinstance(obj, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(_matches(v, a) for v, a in zip(obj, args))
    return builtins.isinstance(obj, origin)


"""Operator schemas: inferred from a function's annotations as PyTorch infers them
('(Tensor x, SymInt n=2, *, float s=1.0) -> Tensor'), and read back into arguments."""
import ast
import inspect
import typing
from collections.abc import Sequence

from .._tensor import Tensor
from ..device import device as _device
from ..dtypes import dtype as _dtype

__all__ = ["infer_schema"]

_ARG_TYPES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool", str: "str",
              _dtype: "ScalarType", _device: "Device", typing.Union[int, float, bool]: "Scalar"}
_LIST_ELEMENTS = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool",
                  typing.Union[int, float, bool]: "Scalar",
                  typing.Optional[Tensor]: "Tensor?"}
_RETURN_TYPES = {Tensor: "Tensor", int: "SymInt", float: "float", bool: "bool",
                 typing.Union[int, float, bool]: "Scalar"}


def _optional_of(annotation):
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType",
                                                               None)) \
            and type(None) in args and len(args) == 2:
        return next(a for a in args if a is not type(None))
    return None


def _schema_type(annotation):
    """The schema type of an argument annotation, or None when schemas cannot say it."""
    if annotation in _ARG_TYPES:
        return _ARG_TYPES[annotation]
    inner = _optional_of(annotation)
    if inner is not None:
        base = _schema_type(inner)
        return None if base is None or base.endswith("?") or base == "Tensor?[]" else base + "?"
    if typing.get_origin(annotation) in (list, Sequence, typing.List, typing.Sequence):
        (element,) = typing.get_args(annotation) or (None,)
        name = _LIST_ELEMENTS.get(element)
        return None if name is None else name + "[]"
    return None


def _return_schema(annotation, error):
    if annotation is None or annotation is type(None):
        return "()"
    if annotation in _RETURN_TYPES:
        return _RETURN_TYPES[annotation]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (list, typing.List) and args == (Tensor,):
        return "Tensor[]"
    if origin is tuple and args:
        parts = [_return_schema(a, error) for a in args]
        return "(" + ", ".join(parts) + ")"
    error(f"Return has unsupported type {annotation}. The valid types are: Tensor, "
          "list[Tensor], int, float, bool, a tuple of these, and None.")


def _default_text(value):
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value) if not isinstance(value, str) else value
    if isinstance(value, str):
        return f'"{value}"'
    return None


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The operator schema of a function from its type annotations: '(Tensor x, SymInt n=2,
    *, float scale=1.0) -> Tensor'; a mutated Tensor argument is written Tensor(a<i>!)."""
    signature = inspect.signature(prototype_function)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {signature})")
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:
        hints = {}
    names = list(signature.parameters)
    if mutates_args != "unknown":
        unknown = set(mutates_args) - set(names)
        if unknown:
            error(f"{unknown} in mutates_args were not found in the custom op's signature. "
                  "mutates_args should contain the names of all args that the custom op "
                  "mutates, or just the string 'unknown' if you don't know.")
    pieces, keyword_only = [], False
    for index, (name, param) in enumerate(signature.parameters.items()):
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not keyword_only:
            pieces.append("*")
            keyword_only = True
        if param.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        annotation = hints.get(name, param.annotation)
        kind = _schema_type(annotation)
        if kind is None:
            error(f"Parameter {name} has unsupported type {annotation}.")
        mutated = mutates_args == "unknown" or name in mutates_args
        if mutated and kind.startswith("Tensor"):
            kind = kind.replace("Tensor", f"Tensor(a{index}!)", 1)
        text = f"{kind} {name}"
        if param.default is not inspect.Parameter.empty:
            default = _default_text(param.default)
            if default is None:
                error(f"Parameter {name} has an unsupported default value type "
                      f"{type(param.default)}.")
            text += "=" + default
        pieces.append(text)
    returns = hints.get("return", signature.return_annotation)
    if returns is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    schema = f"({', '.join(pieces)}) -> {_return_schema(returns, error)}"
    return schema if op_name is None else op_name + schema


def _split_qualname(qualname):
    namespace, sep, name = qualname.partition("::")
    if not sep or not namespace or not name or not name.replace("_", "a").replace(".", "a").isalnum():
        raise ValueError(f"Expected a qualified operator name 'namespace::name', got "
                         f"{qualname!r}")
    return namespace, name


def _schema_arguments(schema):
    """[(name, type, keyword_only, default)] of '(Tensor x, *, float s=1.0) -> ...'; a
    default is the Python value (`_NO_DEFAULT` when there is none)."""
    inside = schema[schema.index("(") + 1:schema.rindex(") ->")]
    parts, token, depth = [], "", 0
    for ch in inside + ",":
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(token.strip())
            token = ""
        else:
            token += ch
    arguments, keyword_only = [], False
    for part in filter(None, parts):
        if part == "*":
            keyword_only = True
            continue
        declaration, _, default = part.partition("=")
        kind, name = declaration.rsplit(None, 1)
        value = _NO_DEFAULT
        if default:
            value = {"None": None, "True": True, "False": False}.get(default) if \
                default in ("None", "True", "False") else ast.literal_eval(default)
        arguments.append((name, kind, keyword_only, value))
    return arguments


_NO_DEFAULT = inspect.Parameter.empty



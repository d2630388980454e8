"""`torch.func.rearrange`: einops' `rearrange` ("b c (h w) -> b (c h) w"), written for ember
(PyTorch ships its own too; the `einops` package is not needed).

A pattern names each dimension of the input on the left of "->" and of the result on the right;
parentheses compose several axes into one dimension, "..." stands for any run of dimensions,
"1" or "()" is a dimension of size one, and keyword arguments give the sizes of composed axes
that cannot be inferred. The result is one reshape into the elementary axes, one permute and
one reshape into the result's dimensions: views where the memory allows, as in PyTorch.
A list or tuple of tensors is stacked along a new first dimension first.
"""
import keyword
import math

from .._tensor import Tensor
from ..ops.shape import stack

__all__ = ["rearrange"]

_ELLIPSIS = "…"


class DimensionBindError(Exception):
    """The pattern's axes cannot be bound to the tensor's sizes (functorch's error type)."""


def _check_identifier(name):
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should be a valid python "
                         "identifier")
    if name.startswith("_") or name.endswith("_"):
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start or "
                         "end with underscore")


def _parse(expression):
    """[group, ...]: each group a list of axis names (holding ELLIPSIS for a "..." inside
    parentheses), [] for a unit axis, or ELLIPSIS itself for a bare "..."; and whether the
    expression has an ellipsis."""
    if "." in expression.replace("...", ""):
        raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                         "ellipsis for tensor ")
    text = expression.replace("...", f" {_ELLIPSIS} ")
    if text.count(_ELLIPSIS) > 1:
        raise ValueError("Expression may contain dots only inside ellipsis (...); only one "
                         "ellipsis for tensor ")
    groups, current, seen = [], None, set()
    token = ""

    def finish(name):
        if not name:
            return
        if name == _ELLIPSIS:
            entry = _ELLIPSIS
        elif name.isdecimal():
            if int(name) != 1:
                raise ValueError("rearrange only supports unnamed axes of size 1")
            entry = None
        else:
            _check_identifier(name)
            if name in seen:
                raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
            seen.add(name)
            entry = name
        if current is None:
            groups.append(_ELLIPSIS if entry == _ELLIPSIS else [] if entry is None else [entry])
        elif entry is not None:
            current.append(entry)

    for ch in text + " ":
        if ch in " ()":
            finish(token)
            token = ""
            if ch == "(":
                if current is not None:
                    raise ValueError("Axis composition is one-level (brackets inside brackets "
                                     "not allowed)")
                current = []
            elif ch == ")":
                if current is None:
                    raise ValueError("Brackets are not balanced")
                groups.append(current)
                current = None
        else:
            token += ch
    if current is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
    return groups, _ELLIPSIS in text


def _names(groups):
    """The axis names of a side ("…" standing for its ellipsis, as einops reports it)."""
    return {_ELLIPSIS if g == _ELLIPSIS else n for g in groups for n in g}


def _bind(groups, shape, lengths):
    """Size of every elementary axis of the left side (the ellipsis's dims named …0, …1 ...)."""
    sizes = {}
    for group, size in zip(groups, shape):
        unknown = [n for n in group if n not in lengths]
        known = math.prod(lengths[n] for n in group if n in lengths)
        if len(unknown) > 1:
            raise DimensionBindError(f"cannot infer the sizes of two dimensions at once "
                                     f"{unknown[0]} and {unknown[1]}")
        if unknown:
            if size % known:
                pack = tuple(lengths.get(n, "?") for n in group)
                raise DimensionBindError(f"inferred dimension does not evenly fit into larger "
                                         f"dimension: {size} vs {pack}")
            sizes[unknown[0]] = size // known
        elif known != size:
            raise DimensionBindError(f"Dimension sizes to do not match ({size} != {known}) when "
                                     f"matching dimension pack ({', '.join(group)},)"
                                     if len(group) == 1 else
                                     f"Dimension sizes to do not match ({size} != {known}) when "
                                     f"matching dimension pack ({', '.join(group)})")
        sizes.update({n: lengths[n] for n in group if n in lengths})
    return sizes


def _expand_ellipsis(groups, count):
    out = []
    for g in groups:
        if g == _ELLIPSIS:
            out.extend([[f"{_ELLIPSIS}{i}"] for i in range(count)])
        elif _ELLIPSIS in g:
            out.append([n for x in g for n in ([f"{_ELLIPSIS}{i}" for i in range(count)]
                                               if x == _ELLIPSIS else [x])])
        else:
            out.append(g)
    return out


def rearrange(tensor, pattern, **axes_lengths):
    """The tensor (or the stack of a list of tensors) with its dimensions reordered, split and
    merged as `pattern` says."""
    if not isinstance(tensor, Tensor):
        tensor = stack(tensor)
    for value in axes_lengths.values():
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(value)}")
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left_text, right_text = pattern.split("->")
    left, left_dots = _parse(left_text)
    right, right_dots = _parse(right_text)
    if right_dots and not left_dots:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    one_sided = _names(left) ^ _names(right)
    if one_sided:
        raise ValueError("Identifiers only on one side of rearrange expression (should be on "
                         f"both): {one_sided}")
    unknown = set(axes_lengths) - _names(left) - {_ELLIPSIS}
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")
    ndim = tensor.ndim
    lengths = dict(axes_lengths)
    count = 0
    if left_dots:
        fixed = len(left) - 1
        if ndim < fixed:
            raise ValueError(f"Number of dimensions in pattern ({fixed}) must be at most the "
                             f"number of dimensions in the tensor ({ndim})")
        count = ndim - fixed
        dots_at = next(i for i, g in enumerate(left) if _ELLIPSIS in g)
        if left[dots_at] != _ELLIPSIS:
            raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
        lengths.update({f"{_ELLIPSIS}{i}": tensor.shape[dots_at + i] for i in range(count)})
    elif len(left) != ndim:
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the "
                         f"number of dimensions in the tensor ({ndim})")
    left, right = _expand_ellipsis(left, count), _expand_ellipsis(right, count)
    sizes = _bind(left, tensor.shape, lengths)
    elementary = [n for g in left for n in g]
    order = [n for g in right for n in g]
    out = tensor.reshape([sizes[n] for n in elementary]) if elementary else tensor.reshape(())
    permutation = [elementary.index(n) for n in order]
    if permutation != sorted(permutation):
        out = out.permute(permutation)
    return out.reshape([math.prod(sizes[n] for n in g) for g in right])

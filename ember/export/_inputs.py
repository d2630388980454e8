"""Inputs of an exported program that are not one tensor. PyTorch's export flattens a tuple,
list or dict argument into one graph input per leaf (`hidden` = (h, c) gives `hidden_0`,
`hidden_1`; nested entries `d_b_0`). A leaf that is not a tensor (a number, a flag, None, a
string) is a constant of the program, but still an input of the graph (a ConstantArgument in
the signature) that the unlifted `module()` checks: "Guard failed: k == 3". `module()` takes
each argument as it was given, flattening it on the way in and refusing another structure.

A structure is plain data (so `torch.export.save` can store it): "tensor" for a tensor leaf,
{"const": value} for any other leaf, {"tuple": [...]}, {"list": [...]}, {"dict": [[key, ...]]}.
"""
import re

from .._tensor import Tensor

__all__ = []


def describe(value):
    if isinstance(value, Tensor):
        return "tensor"
    if isinstance(value, (tuple, list)):
        return {"tuple" if isinstance(value, tuple) else "list": [describe(v) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, (str, int)) for k in value):
        return {"dict": [[k, describe(v)] for k, v in value.items()]}
    return {"const": value}


def leaves(structure, name, path=()):
    """(placeholder name, key path, structure of the leaf) of each leaf, in PyTorch's order and
    naming."""
    if structure == "tensor" or "const" in structure:
        return [(name, path, structure)]
    (kind, items), = structure.items()
    children = items if kind == "dict" else enumerate(items)
    return [leaf for key, sub in children
            for leaf in leaves(sub, f"{name}_{_name_part(key)}", path + (key,))]


def _name_part(key):
    return re.sub(r"\W", "_", str(key))


def build(structure, make_leaf, path=()):
    """The argument rebuilt with `make_leaf(path, leaf structure)` at each leaf."""
    if structure == "tensor" or "const" in structure:
        return make_leaf(path, structure)
    (kind, items), = structure.items()
    if kind == "dict":
        return {k: build(s, make_leaf, path + (k,)) for k, s in items}
    built = [build(s, make_leaf, path + (i,)) for i, s in enumerate(items)]
    return tuple(built) if kind == "tuple" else built


def input_leaves(value, structure, name):
    """The leaves of a call's argument `value`: it must have the exported structure (PyTorch's
    ValueError otherwise) and the exported constants (AssertionError, as PyTorch's guards)."""
    have, want = _shape(describe(value)), _shape(structure)
    if have != want:
        raise ValueError(f"Trying to flatten user inputs with exported input tree spec: {want} "
                         f"for {name!r} but actually got inputs with tree spec {have}")
    found = []
    for _, path, leaf_structure in leaves(structure, name):
        leaf = value
        for key in path:
            leaf = leaf[key]
        if leaf_structure != "tensor":
            expected = leaf_structure["const"]
            if isinstance(leaf, Tensor) or leaf != expected:
                shown = name + "".join(f"[{k!r}]" for k in path)
                raise AssertionError(f"Guard failed: {shown} == {expected!r}")
        elif not isinstance(leaf, Tensor):
            raise ValueError(f"Trying to flatten user inputs: {name!r} has "
                             f"{type(leaf).__name__} where the program has a tensor")
        found.append(leaf)
    return tuple(found)


def _shape(structure):
    """The container layout alone (leaves as '*'), as the error messages show it."""
    if structure == "tensor" or "const" in structure:
        return "*"
    (kind, items), = structure.items()
    if kind == "dict":
        return {k: _shape(s) for k, s in items}
    shapes = [_shape(s) for s in items]
    return tuple(shapes) if kind == "tuple" else shapes


def guard_sizes(value, sizes, name):
    """A tensor input must have the sizes the program was specialized on (None: any), as
    PyTorch's module() checks: a size baked into the graph would give wrong results."""
    if not isinstance(value, Tensor):
        raise ValueError(f"Trying to flatten user inputs: {name!r} has {type(value).__name__} "
                         "where the program has a tensor")
    if value.dim() != len(sizes):
        raise AssertionError(f"Guard failed: {name}.dim() == {len(sizes)}")
    for d, n in enumerate(sizes):
        if n is not None and value.shape[d] != n:
            raise AssertionError(f"Guard failed: {name}.size()[{d}] == {n}")

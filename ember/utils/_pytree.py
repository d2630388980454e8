"""A small pytree: nested tuples, lists and dicts flattened to their leaves and rebuilt,
for the function transforms and checkpoint (arguments and results may be such containers
of Tensors). Not torch.utils._pytree's API: only what ember itself needs."""

__all__ = ["flatten", "unflatten", "describe", "broadcast_prefix", "register_pytree_node"]

# type -> (flatten_fn: node -> (children, context), unflatten_fn: (children, context) -> node)
_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn):
    """Make instances of `cls` containers whose children `flatten_fn` lists."""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES[cls] = (flatten_fn, unflatten_fn)


def flatten(tree):
    """(leaves, spec): the leaves in order and a spec that `unflatten` rebuilds from."""
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves):
    node = _NODES.get(type(tree))
    if node is not None:
        children, context = node[0](tree)
        return ("custom", type(tree), context, [_flatten(c, leaves) for c in children])
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return ("tuple", [_flatten(t, leaves) for t in tree])
    if isinstance(tree, tuple):  # a namedtuple keeps its type
        return ("namedtuple", type(tree), [_flatten(t, leaves) for t in tree])
    if isinstance(tree, list):
        return ("list", [_flatten(t, leaves) for t in tree])
    if isinstance(tree, dict):
        return ("dict", type(tree), list(tree), [_flatten(v, leaves) for v in tree.values()])
    leaves.append(tree)
    return None


def unflatten(leaves, spec):
    it = iter(leaves)
    return _build(it, spec)


def _build(it, spec):
    if spec is None:
        return next(it)
    kind = spec[0]
    if kind == "tuple":
        return tuple(_build(it, s) for s in spec[1])
    if kind == "namedtuple":
        return spec[1](*[_build(it, s) for s in spec[2]])
    if kind == "custom":
        return _NODES[spec[1]][1]([_build(it, s) for s in spec[3]], spec[2])
    if kind == "list":
        return [_build(it, s) for s in spec[1]]
    values = [_build(it, s) for s in spec[3]]
    out = spec[1]() if spec[1] is not dict else {}
    out.update(zip(spec[2], values))
    return out


def describe(spec):
    """The structure as text, for error messages."""
    if spec is None:
        return "*"
    kind = spec[0]
    if kind in ("tuple", "list"):
        return f"{kind}({', '.join(describe(s) for s in spec[1])})"
    if kind == "namedtuple":
        return f"{spec[1].__name__}({', '.join(describe(s) for s in spec[2])})"
    if kind == "custom":
        return f"{spec[1].__name__}({', '.join(describe(s) for s in spec[3])})"
    return "dict(" + ", ".join(f"{k!r}: {describe(s)}" for k, s in zip(spec[2], spec[3])) + ")"


def broadcast_prefix(prefix, tree, is_leaf_value):
    """Expand `prefix` (a structure matching the top of `tree`, with single values standing
    for whole subtrees) to one value per leaf of `tree`; None when they do not match."""
    out = []
    if _broadcast(prefix, tree, is_leaf_value, out):
        return out
    return None


def _broadcast(prefix, tree, is_leaf_value, out):
    if is_leaf_value(prefix):
        out.extend([prefix] * len(flatten(tree)[0]))
        return True
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)):
        if type(prefix) is not type(tree) and not (isinstance(prefix, tuple) and
                                                   isinstance(tree, tuple)):
            return False
        if len(prefix) != len(tree):
            return False
        return all(_broadcast(p, t, is_leaf_value, out) for p, t in zip(prefix, tree))
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            return False
        return all(_broadcast(prefix[k], tree[k], is_leaf_value, out) for k in tree)
    return False

"""Pytrees: nested tuples, lists, dicts (and registered classes) flattened to their leaves and
rebuilt. ember's function transforms and checkpoint use `flatten`/`unflatten` (a tuple
subclass such as Size counts as a tuple there); programs use PyTorch's `torch.utils._pytree`
API (`tree_flatten`, `tree_map`, `TreeSpec`...), which follows PyTorch's rules: only the
exact container types (and namedtuples, OrderedDict, defaultdict, deque) are nodes."""
import collections

__all__ = ["flatten", "unflatten", "describe", "broadcast_prefix", "register_pytree_node",
           "TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_map", "tree_map_", "tree_map_only", "tree_all", "tree_any",
           "tree_is_leaf", "tree_iter", "MappingKey", "SequenceKey", "GetAttrKey", "KeyEntry",
           "keystr", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path"]

# type -> (flatten_fn: node -> (children, context), unflatten_fn: (children, context) -> node)
_NODES = {}
# type -> flatten_with_keys_fn: node -> ([(key entry, child)...], context), for key paths
_KEY_FNS = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make instances of `cls` containers whose children `flatten_fn` lists."""
    if cls in _NODES or cls in _BUILTIN_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES[cls] = (flatten_fn, unflatten_fn)
    if flatten_with_keys_fn is not None:
        _KEY_FNS[cls] = flatten_with_keys_fn


def flatten(tree):
    """(leaves, spec): the leaves in order and a spec that `unflatten` rebuilds from."""
    leaves = []
    spec = _flatten(tree, leaves)
    return leaves, spec


def _flatten(tree, leaves, torch_rules=False, is_leaf=None):
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return None
    node = _NODES.get(type(tree))

    def children(items):
        return [_flatten(c, leaves, torch_rules, is_leaf) for c in items]
    if node is not None:
        kids, context = node[0](tree)
        return ("custom", type(tree), context, children(kids))
    kind = type(tree)
    if torch_rules and kind not in _BUILTIN_NODES and not _is_namedtuple(tree):
        leaves.append(tree)
        return None
    if kind is collections.deque:
        return ("custom", kind, tree.maxlen, children(tree))
    if kind is collections.defaultdict:
        return ("custom", kind, [tree.default_factory, list(tree)], children(tree.values()))
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return ("tuple", children(tree))
    if isinstance(tree, tuple):  # a namedtuple keeps its type
        return ("namedtuple", type(tree), children(tree))
    if isinstance(tree, list):
        return ("list", children(tree))
    if isinstance(tree, dict):
        return ("dict", type(tree), list(tree), children(tree.values()))
    leaves.append(tree)
    return None


def _is_namedtuple(tree):
    return isinstance(tree, tuple) and hasattr(type(tree), "_fields")


_BUILTIN_NODES = {tuple, list, dict, collections.OrderedDict, collections.defaultdict,
                  collections.deque}


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
        values = [_build(it, s) for s in spec[3]]
        if spec[1] is collections.deque:
            return collections.deque(values, maxlen=spec[2])
        if spec[1] is collections.defaultdict:
            return collections.defaultdict(spec[2][0], zip(spec[2][1], values))
        return _NODES[spec[1]][1](values, spec[2])
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


# ---- PyTorch's API (torch.utils._pytree) ----------------------------------------------------
class TreeSpec:
    """A pytree's structure, as PyTorch's: `type` None for a leaf; `context` the node's
    keys (dict), class (namedtuple) or flatten context; `children_specs` one per child."""

    def __init__(self, type, context, children_specs):
        self.type, self.context, self.children_specs = type, context, list(children_specs)

    @classmethod
    def _of(cls, spec):
        if spec is None:
            return LeafSpec()
        kind = spec[0]
        if kind in ("tuple", "list"):
            return cls(tuple if kind == "tuple" else list, None, map(cls._of, spec[1]))
        if kind == "namedtuple":
            return _NamedTupleSpec(spec[1], map(cls._of, spec[2]))
        if kind == "dict":
            return cls(spec[1], list(spec[2]), map(cls._of, spec[3]))
        return cls(spec[1], spec[2], map(cls._of, spec[3]))

    def _internal(self):
        """The spec `unflatten` reads."""
        kids = [c._internal() for c in self.children_specs]
        if self.type in (tuple, list):
            return (self.type.__name__, kids)
        if self.type in (dict, collections.OrderedDict):
            return ("dict", self.type, list(self.context), kids)
        return ("custom", self.type, self.context, kids)

    def is_leaf(self):
        return self.type is None

    @property
    def num_leaves(self):
        return 1 if self.is_leaf() else sum(c.num_leaves for c in self.children_specs)

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self.children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return unflatten(leaves, self._internal())

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs) \
            == (other.type, other.context, other.children_specs)

    def __hash__(self):
        return hash((self.type, self.num_leaves))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = "namedtuple" if isinstance(self, _NamedTupleSpec) else self.type.__name__
        inner = (",\n" + " " * (indent + 2)).join(c.__repr__(indent + 2)
                                                  for c in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{inner}])"


class _NamedTupleSpec(TreeSpec):
    def __init__(self, cls, children_specs):
        super().__init__(cls, cls, children_specs)

    def _internal(self):
        return ("namedtuple", self.type, [c._internal() for c in self.children_specs])


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])

    def _internal(self):
        return None


def tree_flatten(tree, is_leaf=None):
    """(leaves, TreeSpec) by PyTorch's rules."""
    leaves = []
    return leaves, TreeSpec._of(_flatten(tree, leaves, True, is_leaf))


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree, is_leaf=None):
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_is_leaf(tree, is_leaf=None):
    return tree_structure(tree, is_leaf).is_leaf()


def tree_map(func, tree, *rests, is_leaf=None):
    """`func` of the leaves at each position of `tree` and `rests` (which must have `tree`'s
    structure: PyTorch's ValueError otherwise), in `tree`'s structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_leaves_like(spec, r, is_leaf) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))


def _leaves_like(spec, tree, is_leaf):
    """`tree`'s leaves at `spec`'s leaves (a leaf of `spec` takes a whole subtree)."""
    if spec.is_leaf():
        return [tree]
    kind = spec.type
    if type(tree) is not kind and not (isinstance(spec, _NamedTupleSpec) and
                                       type(tree) is spec.type):
        raise ValueError(f"Node type mismatch; expected {kind}, but got {type(tree)}.")
    kids = tree_flatten(tree, lambda x: x is not tree)[0] if kind not in (
        dict, collections.OrderedDict, collections.defaultdict) else None
    if kids is None:
        if set(tree) != set(spec.context):
            raise ValueError(f"Node keys mismatch; expected {list(spec.context)}, but got "
                             f"{list(tree)}.")
        kids = [tree[k] for k in spec.context]
    if len(kids) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                         f"{len(kids)}.")
    return [leaf for child, kid in zip(spec.children_specs, kids)
            for leaf in _leaves_like(child, kid, is_leaf)]


def tree_map_(func, tree, *rests, is_leaf=None):
    """`func` called on each leaf (for its effect); returns `tree`."""
    leaves, spec = tree_flatten(tree, is_leaf)
    for xs in zip(leaves, *[_leaves_like(spec, r, is_leaf) for r in rests]):
        func(*xs)
    return tree


def _predicate(type_or_pred):
    if isinstance(type_or_pred, type) or isinstance(type_or_pred, tuple) or \
            type(type_or_pred).__name__ == "UnionType":
        return lambda x: isinstance(x, type_or_pred)
    if callable(type_or_pred):
        return type_or_pred
    raise TypeError("Argument must be a type, a tuple of types, or a callable.")


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """`func` on the leaves of the given types (or passing the predicate); others kept."""
    matches = _predicate(type_or_types_or_pred)
    return tree_map(lambda x: func(x) if matches(x) else x, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_leaves(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_leaves(tree, is_leaf)))


# ---- key paths (tree_flatten_with_path ...) --------------------------------------------------
class _KeyEntry:
    """One step of a key path; `get(parent)` takes that step."""
    __slots__ = ()

    def __repr__(self):
        field = self.__slots__[0]
        return f"{type(self).__name__}({field}={getattr(self, field)!r})"

    def __eq__(self, other):
        return type(other) is type(self) and getattr(other, self.__slots__[0]) == \
            getattr(self, self.__slots__[0])

    def __hash__(self):
        return hash((type(self), getattr(self, self.__slots__[0])))


class MappingKey(_KeyEntry):
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


class SequenceKey(_KeyEntry):
    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


class GetAttrKey(_KeyEntry):
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


KeyEntry = _KeyEntry


def keystr(kp):
    """A key path as the text that indexes it: `['a'][1].x`."""
    return "".join(str(k) for k in kp)


def _dict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d)


def _list_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


_tuple_flatten_with_keys = _list_flatten_with_keys


def _keyed_children(tree):
    """[(key entry, child)...] of a node by PyTorch's rules, or None for a leaf."""
    kind = type(tree)
    if kind in _NODES:
        fn = _KEY_FNS.get(kind)
        if fn is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {kind}. Please pass "
                             "a flatten_with_keys_fn argument to register_pytree_node.")
        return fn(tree)[0]
    if _is_namedtuple(tree):
        return [(GetAttrKey(f), getattr(tree, f)) for f in tree._fields]
    if kind in (tuple, list, collections.deque):
        return _list_flatten_with_keys(tree)[0]
    if kind in (dict, collections.OrderedDict, collections.defaultdict):
        return _dict_flatten_with_keys(tree)[0]
    return None


def _paths(tree, path, out, is_leaf):
    kids = None if is_leaf is not None and is_leaf(tree) else _keyed_children(tree)
    if kids is None:
        out.append((path, tree))
        return
    for key, child in kids:
        _paths(child, path + (key,), out, is_leaf)


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)...], TreeSpec): each leaf with the keys that lead to it."""
    out = []
    _paths(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """`func(key_path, leaf, *other_leaves)` at each leaf, in `tree`'s structure."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [_leaves_like(spec, r, is_leaf) for r in rests]
    return spec.unflatten(func(path, leaf, *xs)
                          for (path, leaf), *xs in zip(pairs, *others))

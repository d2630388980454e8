"""torch.utils._pytree's API as programs use it (tree_flatten/unflatten/map/map_only/leaves,
TreeSpec): the same leaves, structures, printed specs and errors as PyTorch's."""
import collections

import pytest

import ember
from ember.utils import _pytree as ours

Pair = collections.namedtuple("Pair", "a b")


def _tree():
    return {"b": [1, None, (2, 3)], "a": Pair(4, 5), "c": collections.OrderedDict(z=6),
            "d": collections.deque([7]), "e": collections.defaultdict(list, k=[8])}


def _outcome(f):
    try:
        return repr(f())
    except Exception as e:  # noqa: BLE001 (the type and message are compared)
        return f"{type(e).__name__}: {e}"


def _calls(p, size):
    return [
        lambda: p.tree_flatten(_tree()),
        lambda: p.tree_unflatten([x and x * 10 for x in p.tree_leaves(_tree())],
                                 p.tree_structure(_tree())),
        lambda: p.tree_map(lambda x: x and x + 1, _tree()),
        lambda: p.tree_map(lambda x, y: x + y, (1, [2]), (10, [20])),
        lambda: p.tree_map(lambda x, y: x + y, (1, 2), (10,)),
        lambda: p.tree_map(lambda x, y: x + y, (1, 2), [10, 2]),
        lambda: p.tree_map(lambda x, y: (x, y), {"a": 1}, {"a": (2, 3)}),
        lambda: p.tree_map_only(int, lambda x: -x, (1, "a", 2.0, True)),
        lambda: p.tree_map_only((int, float), lambda x: 0, [1, 2.5, "s"]),
        lambda: (p.tree_all(lambda x: x > 0, [1, 2]), p.tree_any(lambda x: x > 1, [1, 2])),
        lambda: (p.tree_flatten(None), p.tree_flatten(5), p.tree_flatten(size)),
        lambda: p.tree_unflatten([1], p.tree_structure((1, 2))),
        lambda: p.tree_flatten([1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1),
        lambda: (p.tree_structure((1, 2)) == p.tree_structure((3, 4)),
                 p.tree_structure((1, 2)) == p.tree_structure([3, 4])),
        lambda: (p.tree_structure(_tree()).num_leaves, p.tree_structure(_tree()).num_nodes,
                 p.tree_structure([1, [2]]).num_children),
    ]


def test_matches_pytorchs_pytree(torch):
    import torch.utils._pytree as theirs
    for i, (a, b) in enumerate(zip(_calls(ours, ember.Size([2, 3])),
                                   _calls(theirs, torch.Size([2, 3])))):
        assert _outcome(a) == _outcome(b), i


def test_registered_classes_and_the_internal_flatten():
    class Box:
        def __init__(self, items):
            self.items = items
    ours.register_pytree_node(Box, lambda b: (b.items, None), lambda kids, _: Box(kids),
                              serialized_type_name="Box")
    leaves, spec = ours.tree_flatten(Box([1, (2, 3)]))
    assert leaves == [1, 2, 3] and spec.type is Box
    assert ours.tree_map(lambda x: x * 2, Box([1, 2])).items == [2, 4]
    with pytest.raises(ValueError, match="already registered"):
        ours.register_pytree_node(Box, None, None)
    # Size is a node, as PyTorch registers it; another tuple subclass is a leaf
    assert ours.tree_unflatten(*ours.tree_flatten(ember.Size([2, 3]))) == ember.Size([2, 3])
    assert type(ours.unflatten(*ours.flatten(ember.Size([2, 3])))) is ember.Size
    Sub = type("Sub", (tuple,), {})
    assert ours.tree_leaves(Sub((1, 2))) == [Sub((1, 2))]


def _path_calls(p, size, Box):
    return [
        lambda: p.tree_flatten_with_path(_tree()),
        lambda: p.tree_leaves_with_path([1, {"q": (2, None)}]),
        lambda: p.tree_map_with_path(lambda path, x: (p.keystr(path), x), [1, {"q": 2}]),
        lambda: p.tree_map_with_path(lambda path, x, y: x + y, (1, [2]), (10, [20])),
        lambda: p.tree_flatten_with_path([1, [2]], is_leaf=lambda x: x == [2]),
        lambda: p.tree_flatten_with_path(size),
        lambda: p.tree_flatten_with_path(Box(a=1, b=[2])),
        lambda: p.tree_flatten_with_path(Box.Bare(a=1)),
        lambda: (str(p.MappingKey("a")), str(p.SequenceKey(2)), str(p.GetAttrKey("x")),
                 p.keystr((p.MappingKey("a"), p.SequenceKey(1), p.GetAttrKey("n")))),
        lambda: (p.MappingKey("a").get({"a": 3}), p.SequenceKey(1).get([4, 5]),
                 p.GetAttrKey("a").get(Pair(6, 7)), p.MappingKey(1) == p.MappingKey(1),
                 p.MappingKey(1) == p.SequenceKey(1),
                 hash(p.GetAttrKey("x")) == hash(p.GetAttrKey("x"))),
        lambda: p._dict_flatten_with_keys({"a": 1, "b": 2}),
        lambda: (p._list_flatten_with_keys([1, 2]), p._tuple_flatten_with_keys((3,))),
    ]


def _boxes(p):
    """An OrderedDict subclass registered with `_dict_flatten_with_keys` (as transformers
    registers its ModelOutput), and one registered without a key function."""
    class Box(collections.OrderedDict):
        pass

    class Bare(collections.OrderedDict):
        pass
    for cls, keys in ((Box, p._dict_flatten_with_keys), (Bare, None)):
        p.register_pytree_node(cls, lambda b: (list(b.values()), list(b)),
                               lambda values, keys, cls=cls: cls(zip(keys, values)),
                               flatten_with_keys_fn=keys)
    Box.Bare = Bare
    return Box


def test_key_paths_match_pytorchs(torch):
    import torch.utils._pytree as theirs
    ours_calls = _path_calls(ours, ember.Size([2, 3]), _boxes(ours))
    their_calls = _path_calls(theirs, torch.Size([2, 3]), _boxes(theirs))
    for i, (a, b) in enumerate(zip(ours_calls, their_calls)):
        # the printed specs name the test's local classes by their qualified names
        assert _outcome(a).replace("ours", "") == _outcome(b).replace("theirs", ""), i

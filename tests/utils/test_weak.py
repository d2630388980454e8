"""torch.utils.weak: identity-keyed weak references and dictionaries, which tensors (compared
elementwise) need."""
import copy
import gc

import pytest

import ember
from ember.utils import weak


def test_weak_id_ref_compares_referents_by_identity():
    t = ember.ones(2)
    a, b = weak.WeakIdRef(t), weak.WeakIdRef(t)
    assert a == b and hash(a) == hash(b) and a() is t
    other = ember.ones(2)
    assert a != weak.WeakIdRef(other)
    del t
    gc.collect()
    assert a() is None and a != b and a == a


def test_dictionary_holds_tensors_weakly_by_identity():
    d = weak.WeakIdKeyDictionary()
    t, u = ember.ones(2), ember.ones(2)
    d[t], d[u] = "t", "u"
    assert len(d) == 2 and d[t] == "t" and t in d and 3 not in d
    assert set(map(id, d.keys())) == {id(t), id(u)}
    assert weak.WeakTensorKeyDictionary is weak.WeakIdKeyDictionary
    snapshot = d.copy()
    deep = copy.deepcopy(d)
    merged = d | {ember.zeros(1): "z"}
    del t
    gc.collect()
    assert len(d) == 1 and list(d.values()) == ["u"] and len(snapshot) == 1
    assert len(deep) == 1 and len(merged) == 1
    del d[u]
    assert len(d) == 0
    with pytest.raises(KeyError):
        d[u]


def test_tensor_weak_ref():
    t = ember.ones(1)
    ref = weak.TensorWeakRef(t)
    assert ref() is t
    del t
    gc.collect()
    assert ref() is None
    with pytest.raises(AssertionError, match="expected torch.Tensor"):
        weak.TensorWeakRef(3)


def test_same_behaviour_as_pytorch(torch):
    import torch.utils.weak as theirs
    assert set(theirs.__all__) == set(weak.__all__)
    for lib, module in ((torch, theirs), (ember, weak)):
        d = module.WeakIdKeyDictionary()
        keep = lib.ones(1)
        d[keep] = 1
        d[lib.ones(1)] = 2
        gc.collect()
        assert list(d.values()) == [1]

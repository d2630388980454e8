"""The small public modules PyTorch scripts import: torch.types, torch.storage,
torch.functional, torch.return_types."""
import pickle

import ember


def test_return_types_match_torchs_fields_and_pickle(torch):
    import torch.return_types as theirs
    import ember.return_types as ours
    assert set(ours.__all__) - {"all_return_types"} <= set(theirs.__all__)
    for name in theirs.__all__:
        if isinstance(getattr(theirs, name), type):
            assert getattr(ours, name)._fields == getattr(theirs, name).__match_args__, name
    result = ember.tensor([[1.0, 3.0], [2.0, 0.0]]).max(1)
    assert type(result) is ours.max and isinstance(result, tuple)
    again = pickle.loads(pickle.dumps(result))
    assert type(again) is ours.max and again.indices.tolist() == [1, 0]
    their_repr = repr(torch.tensor([[1.0, 3.0], [2.0, 0.0]]).max(1))
    assert repr(result) == their_repr
    assert len(ours.all_return_types) == len(theirs.all_return_types)


def test_functional_is_the_same_functions():
    import ember.functional as F
    for name in F.__all__:
        assert getattr(F, name) is getattr(ember, name), name
    a, b = F.meshgrid(ember.arange(2), ember.arange(3), indexing="ij")
    assert a.shape == (2, 3) and b.tolist()[1] == [0, 1, 2]


def test_types_and_storage_aliases():
    import typing

    import ember.storage
    import ember.types as T
    assert typing.get_args(T.Number) == (int, float, bool)
    assert ember.device in typing.get_args(T.Device) and type(None) in typing.get_args(T.Device)
    assert ember.storage.UntypedStorage is ember.UntypedStorage
    storage = ember.arange(3.0).untyped_storage()
    assert isinstance(storage, typing.get_args(T.Storage))

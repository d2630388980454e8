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


def test_private_helpers_user_code_imports(torch):
    """torch._utils' flatten/unflatten and rebuild functions, nn.init's private fan and
    no-grad helpers, F._Reduction and F's torch-function checks: reached by name in old
    training scripts, apex-style distributed code and copies of PyTorch's own source."""
    import ember._utils as eu
    import ember.nn.functional as F
    from torch import _utils as tu
    for lib, utils in ((torch, tu), (ember, eu)):
        a, b = lib.ones(2, 3), lib.arange(4.0)
        flat = utils._flatten_dense_tensors([a, b])
        parts = utils._unflatten_dense_tensors(flat, [a, b])
        assert flat.tolist() == [1.0] * 6 + [0.0, 1.0, 2.0, 3.0]
        assert [tuple(p.shape) for p in parts] == [(2, 3), (4,)]
        assert callable(utils._rebuild_tensor_v2) and utils._get_device_index("cpu", True,
                                                                               True) == -1
    for name in ("_calculate_correct_fan", "_calculate_fan_in_and_fan_out", "_no_grad_uniform_",
                 "_no_grad_normal_", "_no_grad_trunc_normal_", "_no_grad_fill_", "_no_grad_zero_"):
        assert callable(getattr(ember.nn.init, name)), name
    w = ember.empty(3, 4)
    assert ember.nn.init._calculate_correct_fan(w, "fan_out") == 3
    assert F._Reduction.legacy_get_string(None, False, emit_warning=False) == "none"
    assert not F.has_torch_function_variadic(ember.ones(1), ember.ones(1))
    assert "has_torch_function" not in F.__all__  # (not an op)

"""torch.nn.attention: SDPBackend as PyTorch's enum, sdpa_kernel switching ember.backends.cuda's
attention flags (and priority order) for a block and restoring them, the provider registry."""
import pytest

import ember
from ember.backends import cuda
from ember.nn.attention import (SDPBackend, activate_flash_attention_impl,
                                current_flash_attention_impl, list_flash_attention_impls,
                                register_flash_attention_impl, restore_flash_attention_impl,
                                sdpa_kernel)


def _flags(backends_cuda):
    return [getattr(backends_cuda, f"{k}_sdp_enabled")()
            for k in ("flash", "mem_efficient", "math", "cudnn")]


def test_enum_matches_torch(torch):
    from torch.nn.attention import SDPBackend as TorchBackend
    assert [(m, int(v)) for m, v in SDPBackend.__members__.items()] == \
        [(m, int(v)) for m, v in TorchBackend.__members__.items()]
    for name in SDPBackend.__members__:
        ours, theirs = getattr(SDPBackend, name), getattr(TorchBackend, name)
        assert (repr(ours), str(ours), ours.name, ours.value) == \
            (repr(theirs), str(theirs), theirs.name, theirs.value)
    assert (SDPBackend.MATH == 0) is (TorchBackend.MATH == 0) is False
    assert SDPBackend.__module__ == "ember.nn.attention"


def test_all_matches_torch(torch):
    import torch.nn.attention as ta
    assert sorted(ember.nn.attention.__all__) == sorted(ta.__all__)
    assert ember.nn.attention.WARN_FOR_UNFUSED_KERNELS is ta.WARN_FOR_UNFUSED_KERNELS is False


@pytest.mark.parametrize("backends, priority", [
    (SDPBackend.MATH, False), ([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH], False),
    ([SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION],
     True), ([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION], True), (SDPBackend.ERROR, False),
    ([], False),
])
def test_sdpa_kernel_sets_and_restores_flags_as_torch(torch, backends, priority):
    tb = [getattr(torch.nn.attention.SDPBackend, b.name) for b in
          (backends if isinstance(backends, list) else [backends])]
    tb = tb if isinstance(backends, list) else tb[0]
    before = _flags(cuda), list(cuda._sdp_priority)
    with sdpa_kernel(backends, set_priority=priority) as ours:
        inside = _flags(cuda), list(cuda._sdp_priority)
    with torch.nn.attention.sdpa_kernel(tb, set_priority=priority) as theirs:
        expected = _flags(torch.backends.cuda), torch._C._get_sdp_priority_order()
    assert inside == expected and ours == theirs == {}
    assert (_flags(cuda), list(cuda._sdp_priority)) == before


def test_restores_after_an_error_and_through_enable_toggles():
    cuda.enable_mem_efficient_sdp(False)
    try:
        with pytest.raises(KeyError):
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                assert _flags(cuda) == [True, False, False, False]
                raise KeyError("inside")
        assert _flags(cuda) == [True, False, True, True]
    finally:
        cuda.enable_mem_efficient_sdp(True)


def test_sdpa_still_computes_inside_the_block():
    q = ember.randn(1, 2, 3, 4)
    want = ember.nn.functional.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.MATH):
        got = ember.nn.functional.scaled_dot_product_attention(q, q, q)
    assert ember.equal(got, want)


def test_bad_backends_raise_as_torch():
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a "
                                             "list of SDPBackend instances, got str"):
        with sdpa_kernel("flash"):
            pass


def test_flash_impl_registry():
    removed = []

    class Handle:
        def remove(self):
            removed.append(True)

    assert current_flash_attention_impl() is None
    with pytest.raises(ValueError, match="Unknown flash attention impl 'FA9'"):
        activate_flash_attention_impl("FA9")
    register_flash_attention_impl("Mine", register_fn=Handle)
    try:
        activate_flash_attention_impl("Mine")
        assert current_flash_attention_impl() == "Mine" and "Mine" in list_flash_attention_impls()
        restore_flash_attention_impl()
        assert removed == [True] and current_flash_attention_impl() is None
    finally:
        ember.nn.attention._flash_impls.pop("Mine", None)

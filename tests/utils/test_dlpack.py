"""torch.utils.dlpack: capsules to and from ember share memory, are consumed once, and travel
both ways with PyTorch and NumPy."""
import numpy as np
import pytest

import ember
import ember.utils.dlpack as dlpack


def test_capsule_round_trip_shares_memory_and_is_consumed_once():
    t = ember.arange(6.0).reshape(2, 3)[:, ::2]
    capsule = dlpack.to_dlpack(t)
    u = dlpack.from_dlpack(capsule)
    u[0, 1] = 50.0
    assert t.tolist() == [[0.0, 50.0], [3.0, 5.0]] and u.stride() == t.stride()
    with pytest.raises(RuntimeError, match="can be consumed only once"):
        dlpack.from_dlpack(capsule)


def test_to_dlpack_drops_grad_tracking_and_from_dlpack_copies_when_asked():
    assert dlpack.to_dlpack(ember.ones(2, requires_grad=True)) is not None
    a = np.arange(3.0)
    ember.from_dlpack(a, copy=True)[0] = 9.0
    assert a[0] == 0.0
    ember.from_dlpack(a, copy=False)[0] = 9.0
    assert a[0] == 9.0
    assert ember.from_dlpack(a, device="cpu").dtype == ember.float64
    with pytest.raises(RuntimeError, match="invalid capsule"):
        ember.from_dlpack([1, 2])


def test_exchange_with_pytorch(torch):
    theirs = torch.arange(4.0).reshape(2, 2).t()
    ours = ember.from_dlpack(torch.utils.dlpack.to_dlpack(theirs))
    ours[0, 1] = 50.0
    assert theirs[0, 1].item() == 50.0 and ours.stride() == theirs.stride()
    back = torch.from_dlpack(dlpack.to_dlpack(ember.ones(2, 3)[:, 1]))
    assert back.tolist() == [1.0, 1.0]
    assert ember.from_dlpack(torch.utils.dlpack.to_dlpack(torch.zeros(0, 3))).shape == (0, 3)
    assert [(m.name, m.value) for m in dlpack.DLDeviceType] == \
        [(m.name, m.value) for m in torch.utils.dlpack.DLDeviceType]

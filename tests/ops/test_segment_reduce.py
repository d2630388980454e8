"""segment_reduce beyond the op table (tests/ops/opinfo/segment_reduce.py): gradients that
finite differences cannot check, held against PyTorch's (ties and NaNs of max/min, NaNs and
zeros in prod, elements beside an empty segment), the refused double backward, and the same
on the CuPy stand-in."""
import numpy as np
import pytest

import ember

nan, inf = float("nan"), float("inf")

# (data, reduce, keyword arguments): each gradient compared with PyTorch's
CASES = [
    ([1, 3, 3, 2, 5, 5, 5], "max", {"lengths": [3, 1, 3]}),  # ties share the gradient
    ([1, 1, 3, 2, 5, 5, 5], "min", {"lengths": [3, 1, 3]}),
    ([1, 2, 3, 2, 5], "max", {"lengths": [3, 0, 2], "initial": 3.0}),  # initial ties: not shared
    ([1, 2, 3, 2, 5], "max", {"lengths": [3, 0, 2], "initial": 4.0}),  # initial wins
    ([1, nan, 3, nan, 5], "max", {"lengths": [3, 2]}),  # NaN is the maximum, and takes it
    ([nan, nan, 3, 4, 5], "min", {"lengths": [3, 2]}),
    ([1, 2, 3, 4], "max", {"lengths": [2, 0, 2], "initial": nan}),
    ([1, nan, 3, 2, 0, nan, 4], "prod", {"lengths": [3, 1, 3]}),
    ([1, nan, 0, 2, 0, nan, 4], "prod", {"lengths": [3, 1, 3]}),
    ([0, 2, 3, inf, 5], "prod", {"lengths": [3, 2]}),
    ([1, 0, 3, 0, 0, 2], "prod", {"lengths": [2, 1, 3], "initial": 2.0}),
    ([1, 2, 3], "mean", {"lengths": [0, 3, 0]}),
    ([1, 2, 3], "min", {"lengths": [0, 3, 0]}),
    ([1, 2, 3, 4], "mean", {"lengths": [2, 0, 2], "initial": nan}),
]


def _run(lib, data, reduce, kwargs, device="cpu"):
    x = lib.tensor(np.array(data, np.float64), device=device, requires_grad=True)
    kw = {k: lib.tensor(np.array(v), device=device) if isinstance(v, list) else v
          for k, v in kwargs.items()}
    out = lib.segment_reduce(x, reduce, **kw)
    weights = lib.arange(1.0, out.numel() + 1, dtype=out.dtype, device=device)
    grad, = lib.autograd.grad((out * weights).sum(), x)
    return out.detach().cpu().numpy(), grad.cpu().numpy()


@pytest.mark.parametrize("data,reduce,kwargs", CASES)
def test_gradients_match_torch(torch, data, reduce, kwargs):
    for ours, theirs in zip(_run(ember, data, reduce, kwargs), _run(torch, data, reduce, kwargs)):
        np.testing.assert_allclose(ours, theirs, equal_nan=True)


@pytest.mark.parametrize("data,reduce,kwargs", CASES)
def test_on_the_device_stand_in(data, reduce, kwargs):
    from tests._strict_cupy import REAL_CUDA, strict_cupy
    if REAL_CUDA:
        pytest.skip("the stand-in's test")
    want = _run(ember, data, reduce, kwargs)
    with strict_cupy():
        got = _run(ember, data, reduce, kwargs, device="cuda")
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, equal_nan=True)


def test_no_double_backward(torch):
    for lib in (ember, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        out = lib.segment_reduce(x, "max", lengths=lib.tensor([1, 2]))
        assert type(out.grad_fn).__name__ == "SegmentReduceBackward0"
        grad, = lib.autograd.grad(out.sum(), x, create_graph=True)
        assert grad.requires_grad and type(grad.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="^derivative for aten::_segment_reduce_backward "
                                               "is not implemented$"):
            grad.sum().backward()


def test_leading_dims_must_match_data():
    """PyTorch reads past lengths with fewer leading rows than data (a crash, or garbage): ember
    refuses any mismatch, and offsets that run outside the axis."""
    x = ember.zeros(2, 3)
    with pytest.raises(RuntimeError, match="leading dims"):
        ember.segment_reduce(x, "sum", lengths=ember.tensor([[3]]), axis=1)
    with pytest.raises(RuntimeError, match="outside"):
        ember.segment_reduce(ember.zeros(6), "sum", offsets=ember.tensor([0, 2, 7]))


def test_no_forward_ad(torch):
    """PyTorch refuses forward AD before looking at any other argument."""
    messages = []
    for lib in (ember, torch):
        with lib.autograd.forward_ad.dual_level():
            x = lib.autograd.forward_ad.make_dual(lib.tensor([1.0, 2.0]), lib.ones(2))
            with pytest.raises(NotImplementedError) as caught:
                lib.segment_reduce(x, "foo", lengths=lib.tensor([1, 2]))
        messages.append(str(caught.value))
    assert messages[0] == messages[1]

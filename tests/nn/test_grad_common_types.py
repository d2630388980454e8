"""torch.nn.grad (convolution gradients from the output gradient) and torch.nn.common_types
against PyTorch."""
import numpy as np
import pytest

import ember

CASES = [  # nd, N, C_in, C_out, spatial, kernel, stride, padding, dilation, groups
    (1, 2, 4, 6, (9,), (3,), 2, 1, 1, 2),
    (1, 1, 3, 2, (8,), (2,), 1, 0, 2, 1),
    (2, 2, 4, 4, (7, 6), (3, 2), (2, 1), (1, 0), 1, 4),
    (2, 1, 2, 3, (8, 8), (3, 3), 3, 2, (2, 1), 1),  # stride leaves rows out: input_size decides
    (3, 1, 2, 2, (5, 4, 6), (2, 3, 2), 1, (0, 1, 1), 1, 2),
]


@pytest.mark.parametrize("nd, n, cin, cout, spatial, kernel, stride, padding, dilation, groups",
                         CASES)
def test_conv_grads_match_torch(torch, nd, n, cin, cout, spatial, kernel, stride, padding,
                                dilation, groups):
    rng = np.random.default_rng(nd)
    x = rng.standard_normal((n, cin) + spatial).astype(np.float32)
    w = rng.standard_normal((cout, cin // groups) + kernel).astype(np.float32)
    conv = getattr(torch.nn.functional, f"conv{nd}d")
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    out_shape = conv(torch.tensor(x), torch.tensor(w), **kw).shape
    go = rng.standard_normal(tuple(out_shape)).astype(np.float32)
    import torch.nn.grad as tgrad
    want_in = getattr(tgrad, f"conv{nd}d_input")(x.shape, torch.tensor(w), torch.tensor(go), **kw)
    want_w = getattr(tgrad, f"conv{nd}d_weight")(torch.tensor(x), w.shape, torch.tensor(go), **kw)
    got_in = getattr(ember.nn.grad, f"conv{nd}d_input")(x.shape, ember.tensor(w),
                                                        ember.tensor(go), **kw)
    got_w = getattr(ember.nn.grad, f"conv{nd}d_weight")(ember.tensor(x), w.shape,
                                                        ember.tensor(go), **kw)
    np.testing.assert_allclose(got_in.numpy(), want_in.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-4, atol=1e-4)


def test_conv_grads_equal_autograd_and_are_differentiable():
    x = ember.randn(2, 3, 6, 6, requires_grad=True)
    w = ember.randn(4, 3, 3, 3, requires_grad=True)
    out = ember.nn.functional.conv2d(x, w, stride=2, padding=1)
    go = ember.randn(out.shape)
    gx, gw = ember.autograd.grad(out, (x, w), go)
    ours_x = ember.nn.grad.conv2d_input(x.shape, w, go, stride=2, padding=1)
    ours_w = ember.nn.grad.conv2d_weight(x, w.shape, go, stride=2, padding=1)
    assert ember.allclose(ours_x, gx, atol=1e-5) and ember.allclose(ours_w, gw, atol=1e-5)
    ours_w.sum().backward()
    assert x.grad is not None and x.grad.shape == x.shape


def test_wrong_grad_output_shape_is_an_error():
    with pytest.raises(RuntimeError, match=r"expected grad_output of size \[1, 2, 3\]"):
        ember.nn.grad.conv1d_input((1, 1, 5), ember.ones(2, 1, 3), ember.ones(1, 2, 4))


def test_common_types_match_torch(torch):
    import torch.nn.common_types as tct

    from ember.nn import common_types as ect
    names = [n for n in vars(tct) if n.startswith("_") and n.endswith("_t")]
    assert len(names) > 20
    for name in names:
        assert hasattr(ect, name), name
        ours, theirs = getattr(ect, name), getattr(tct, name)
        # same shape of alias: the same args with ember's Tensor for torch's
        assert str(ours.__args__).replace("ember.Tensor", "torch.Tensor") == \
            str(theirs.__args__).replace("torch._tensor", "torch"), name


def test_reduction_codes_and_factory_kwargs_match_torch(torch):
    import torch.nn._reduction as tr

    from ember.nn import _reduction as er
    for name in ("none", "mean", "sum"):
        assert er.get_enum(name) == tr.get_enum(name)
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        er.get_enum("bad")
    with pytest.warns(UserWarning, match="elementwise_mean' is deprecated"):
        assert er.get_enum("elementwise_mean") == 1
    for size_average in (None, True, False):
        for reduce in (None, True, False):
            assert er.legacy_get_enum(size_average, reduce, False) == \
                tr.legacy_get_enum(size_average, reduce, False)
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        er.legacy_get_string(False, True)
    kw = {"device": "cpu", "factory_kwargs": {"dtype": 1}}
    assert ember.nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)
    assert ember.nn.factory_kwargs(None) == {}
    with pytest.raises(TypeError, match="unexpected kwargs"):
        ember.nn.factory_kwargs({"colour": 1})
    with pytest.raises(TypeError, match="dtype specified twice"):
        ember.nn.factory_kwargs({"dtype": 1, "factory_kwargs": {"dtype": 2}})

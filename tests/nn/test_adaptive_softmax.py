"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch with the same weights: parameter names and
shapes, repr, output and loss, gradients of input and every parameter, log_prob, predict
(all three of its paths), unbatched input, and the errors."""
import numpy as np
import pytest

import ember


def _pair(torch, *args, **kwargs):
    e = ember.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    with torch.no_grad():
        for (n, p), (_, q) in zip(e.named_parameters(), t.named_parameters()):
            q.copy_(torch.from_numpy(p.detach().numpy().copy()))
    return e, t


@pytest.mark.parametrize("args,kwargs", [
    ((8, 10, [3, 6]), dict(div_value=2.0)),
    ((16, 20, [5]), dict(head_bias=True)),
    ((12, 30, [2, 10, 20]), {}),
])
def test_forward_backward_match_torch(torch, args, kwargs):
    e, t = _pair(torch, *args, **kwargs)
    assert repr(e) == repr(t)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, args[0])).astype(np.float32)
    target = rng.integers(0, args[1], 7)
    res = []
    for lib, m in ((ember, e), (torch, t)):
        xt = lib.tensor(x, requires_grad=True)
        out = m(xt, lib.tensor(target))
        (out.output.sum() + 2 * out.loss).backward()
        res.append([out.output.detach().numpy(), out.loss.detach().numpy(), xt.grad.numpy()]
                   + [None if p.grad is None else p.grad.numpy() for p in m.parameters()]
                   + [m.log_prob(lib.tensor(x)).detach().numpy()])
    for ours, theirs in zip(*res):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_unbatched_matches_torch(torch):
    e, t = _pair(torch, 6, 9, [4])
    x = np.random.default_rng(1).standard_normal(6).astype(np.float32)
    outs = [m(lib.tensor(x), lib.tensor(7)) for lib, m in ((ember, e), (torch, t))]
    assert tuple(outs[0].output.shape) == tuple(outs[1].output.shape) == ()
    np.testing.assert_allclose(outs[0].output.detach().numpy(), outs[1].output.detach().numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(outs[0].loss.detach().numpy(), outs[1].loss.detach().numpy(),
                               rtol=1e-6)


def test_predict_paths_match_torch(torch):
    e, t = _pair(torch, 4, 8, [2])
    rng = np.random.default_rng(2)
    # head biases steer argmax: all shortlist, all clusters, and a mix
    for head in ([5.0, 5.0, -5.0], [-5.0, -5.0, 5.0], None):
        x = rng.standard_normal((6, 4)).astype(np.float32)
        preds = []
        for lib, m in ((ember, e), (torch, t)):
            with lib.no_grad():
                if head is not None:
                    w = np.zeros((3, 4), np.float32)
                    m.head.weight.copy_(lib.tensor(w))
                    x_in = lib.tensor(x)
                    m.head.weight.add_(lib.tensor(np.array(head, np.float32))[:, None]
                                       * lib.ones(3, 4) / (x_in.sum(1).abs().mean() + 1))
                preds.append(m.predict(lib.tensor(np.abs(x) if head is not None else x))
                             .numpy())
        np.testing.assert_array_equal(*preds)


def test_errors_match_torch(torch):
    for lib in (ember, torch):
        A = lib.nn.AdaptiveLogSoftmaxWithLoss
        with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger "
                                             "than 0"):
            A(4, 10, [])
        for bad in ([5, 3], [0, 3], [3, 10], [3, 3], [2.5]):
            with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
                A(4, 10, bad)
        m = A(4, 10, [3])
        with pytest.raises(RuntimeError, match="Input and target should have the same size in "
                                               "the batch dimension."):
            m(lib.zeros(3, 4), lib.zeros(2, dtype=lib.long))
        with pytest.raises(RuntimeError, match=r"1D target tensor expects 2D input tensors, but "
                                               r"found inputs with size torch.Size\(\[3, 4, 1\]\)"):
            m(lib.zeros(3, 4, 1), lib.zeros(3, dtype=lib.long))
        with pytest.raises(RuntimeError, match="0D target tensor expects 1D input tensors"):
            m(lib.zeros(3, 4), lib.tensor(1))
        with pytest.raises(RuntimeError, match="0D or 1D target tensor expected, multi-target "
                                               "not supported"):
            m(lib.zeros(3, 4), lib.zeros(3, 1, dtype=lib.long))
        with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\], but "
                                               r"values in range \[-1, 12\] were found. "):
            m(lib.zeros(3, 4), lib.tensor([-1, 12, 2]))

"""SyncBatchNorm's pieces (CUDA-only ops in PyTorch) checked against PyTorch's CPU batch norm:
split a batch into "processes", reduce their statistics and gradients as SyncBatchNorm does,
and compare with one batch norm over the whole batch."""
import numpy as np

import ember


def _pair(torch, array, requires_grad=False):
    return (ember.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def test_stats_match_native_batch_norm(torch):
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    ex, tx = _pair(torch, x)
    mean, invstd = ember.batch_norm_stats(ex, 1e-5)
    _, tmean, tinvstd = torch.native_batch_norm(tx, None, None, None, None, True, 0.1, 1e-5)
    np.testing.assert_allclose(mean.numpy(), tmean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), tinvstd.numpy(), rtol=1e-12)
    out = ember.batch_norm_elemt(ex, ember.ones(3, dtype=ember.float64) * 2,
                                 ember.zeros(3, dtype=ember.float64), mean, invstd, 1e-5)
    ref = torch.batch_norm(tx, torch.ones(3).double() * 2, torch.zeros(3).double(), None, None,
                           True, 0.1, 1e-5, False)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)


def test_gathered_stats_and_backward_equal_one_batch(torch):
    rng = np.random.default_rng(1)
    parts = [rng.standard_normal((n, 3, 2)) for n in (2, 3, 4)]
    whole = np.concatenate(parts)
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    gy = rng.standard_normal(whole.shape)
    # one batch norm in PyTorch over the whole batch
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (whole, w, b))
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    ty = torch.batch_norm(tx, tw, tb, trm, trv, True, 0.1, 1e-5, False)
    ty.backward(torch.tensor(gy))
    # ember, process by process
    stats = [ember.batch_norm_stats(ember.tensor(p), 1e-5) for p in parts]
    means = ember.stack([m for m, _ in stats])
    invstds = ember.stack([i for _, i in stats])
    counts = ember.tensor([p.size // 3 for p in parts])
    erm, erv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    mean, invstd = ember.batch_norm_gather_stats_with_counts(
        ember.tensor(parts[0]), means, invstds, erm, erv, 0.1, 1e-5, counts)
    np.testing.assert_allclose(erm.numpy(), trm.numpy(), rtol=1e-10)
    np.testing.assert_allclose(erv.numpy(), trv.numpy(), rtol=1e-10)
    ew, eb = ember.tensor(w), ember.tensor(b)
    ey = ember.cat([ember.batch_norm_elemt(ember.tensor(p), ew, eb, mean, invstd, 1e-5)
                    for p in parts])
    np.testing.assert_allclose(ey.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    offsets = np.cumsum([0] + [len(p) for p in parts])
    grads = [gy[offsets[i]:offsets[i + 1]] for i in range(len(parts))]
    reduced = [ember.batch_norm_backward_reduce(ember.tensor(g), ember.tensor(p), mean, invstd,
                                                ew, True, True, True)
               for g, p in zip(grads, parts)]
    sum_dy = sum(r[0] for r in reduced)
    sum_dy_xmu = sum(r[1] for r in reduced)
    np.testing.assert_allclose(sum(r[2] for r in reduced).numpy(), tw.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(sum(r[3] for r in reduced).numpy(), tb.grad.numpy(), rtol=1e-10)
    gx = ember.cat([ember.batch_norm_backward_elemt(ember.tensor(g), ember.tensor(p), mean,
                                                    invstd, ew, sum_dy, sum_dy_xmu,
                                                    counts.int())
                    for g, p in zip(grads, parts)])
    np.testing.assert_allclose(gx.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
    same = ember.batch_norm_gather_stats(ember.tensor(parts[0]), means[:1], invstds[:1], None,
                                         None, 0.1, 1e-5, 4)
    np.testing.assert_allclose(same[0].numpy(), means[0].numpy(), rtol=1e-12)


def test_backward_reduce_leaves_out_what_is_not_asked():
    x = ember.randn(3, 2, dtype=ember.float64)
    out = ember.batch_norm_backward_reduce(x, x, ember.zeros(2, dtype=ember.float64),
                                           ember.ones(2, dtype=ember.float64), None, False,
                                           True, False)
    assert out[0] is None and out[1] is None and out[3] is None
    assert out[2].shape == (2,)

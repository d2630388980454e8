"""Op-table entries for the loss functions (ember/ops/loss.py)."""
import numpy as np

from . import OpInfo, Sample, away_from, positive, randn, register


def _softmax(x, axis=1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(x, axis=1):
    return np.log(_softmax(x, axis))


def _classes(rng, *shape, n=5):
    return rng.integers(0, n, shape, dtype=np.int64)


def _signs(rng, *shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _F(lib):
    return lib.nn.functional


def ce_samples(rng):
    x, t = randn(rng, 4, 5), _classes(rng, 4)
    t_ignored = t.copy()
    t_ignored[1] = -100
    return [
        Sample((x, t), grad=(0,)),
        Sample((x, t), {"reduction": "sum"}, grad=(0,)),
        Sample((x, t), {"reduction": "none"}, grad=(0,)),
        Sample((x, t_ignored), {"label_smoothing": 0.1}, grad=(0,)),
        Sample((x, t, positive(rng, 5)), grad=(0,)),
        Sample((x, t, positive(rng, 5)), {"label_smoothing": 0.2}, grad=(0,)),
        Sample((x, _softmax(randn(rng, 4, 5))), grad=(0, 1)),
        Sample((x, _softmax(randn(rng, 4, 5))), {"label_smoothing": 0.1, "reduction": "sum"},
               grad=(0,)),
        Sample((randn(rng, 2, 3, 4), _classes(rng, 2, 4, n=3)), grad=(0,)),
        Sample((randn(rng, 5), np.int64(2)), grad=(0,)),
    ]


def ce_call(lib, x, t, weight=None, **kw):
    if isinstance(t, np.integer):
        t = lib.tensor(int(t))
    return _F(lib).cross_entropy(x, t, weight, **kw)


def nll_samples(rng):
    x = _log_softmax(randn(rng, 4, 5))
    return [Sample((x, _classes(rng, 4)), grad=(0,)),
            Sample((x, _classes(rng, 4)), {"reduction": "none"}, grad=(0,)),
            Sample((x, _classes(rng, 4), positive(rng, 5)), {"reduction": "sum"}, grad=(0,)),
            Sample((_log_softmax(randn(rng, 2, 3, 2, 2)), _classes(rng, 2, 2, 2, n=3)),
                   grad=(0,))]


def pair(rng, kinks=(0.0,)):
    a, b = randn(rng, 3, 4), randn(rng, 3, 4)
    d = away_from(rng, 3, 4, points=kinks)
    return a, a - d


def regression_samples(kinks=(0.0,)):
    def samples(rng):
        a, b = pair(rng, kinks)
        return [Sample((a, b)), Sample((a, b), {"reduction": "sum"}),
                Sample((a, b), {"reduction": "none"})]
    return samples


def bce_samples(rng):
    p, t = rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))
    return [Sample((p, t), grad=(0,)), Sample((p, t), {"reduction": "none"}, grad=(0, 1)),
            Sample((p, t, positive(rng, 3, 4)), {"reduction": "sum"}, grad=(0,))]


def bce_logits_samples(rng):
    x, t = randn(rng, 3, 4), rng.uniform(0, 1, (3, 4))
    return [Sample((x, t), grad=(0, 1)),
            Sample((x, t), {"pos_weight": positive(rng, 4)}, grad=(0,)),
            Sample((x, t), {"weight": positive(rng, 3, 4), "reduction": "none"}, grad=(0,)),
            Sample((x, t), {"weight": positive(rng, 4), "pos_weight": positive(rng, 3, 4),
                            "reduction": "sum"}, grad=(0, 1))]


def bce_logits_call(lib, x, t, **kw):
    kw = {k: lib.tensor(v, dtype=x.dtype) if isinstance(v, np.ndarray) else v
          for k, v in kw.items()}
    return _F(lib).binary_cross_entropy_with_logits(x, t, **kw)


def kl_samples(rng):
    logp, q = _log_softmax(randn(rng, 3, 4)), _softmax(randn(rng, 3, 4))
    return [Sample((logp, q), {"reduction": "batchmean"}, grad=(0, 1)),
            Sample((logp, q), {"reduction": "sum"}, grad=(0,)),
            Sample((logp, np.log(q)), {"reduction": "none", "log_target": True}, grad=(0, 1))]


def margin_samples(rng):
    return [Sample((randn(rng, 5), randn(rng, 5), _signs(rng, 5)), grad=(0, 1)),
            Sample((randn(rng, 5), randn(rng, 5), _signs(rng, 5)),
                   {"margin": 0.3, "reduction": "none"}, grad=(0, 1))]


def hinge_samples(rng):
    x = away_from(rng, 3, 4, points=(1.0,))
    return [Sample((x, _signs(rng, 3, 4)), grad=(0,)),
            Sample((x, _signs(rng, 3, 4)), {"margin": 2.0, "reduction": "sum"}, grad=(0,))]


def multi_margin_samples(rng):
    x = randn(rng, 3, 4)
    return [Sample((x, _classes(rng, 3, n=4)), grad=(0,)),
            Sample((x, _classes(rng, 3, n=4)), {"p": 2, "margin": 0.5}, grad=(0,)),
            Sample((x, _classes(rng, 3, n=4), positive(rng, 4)), {"reduction": "none"},
                   grad=(0,))]


def multi_margin_call(lib, x, t, weight=None, **kw):
    return _F(lib).multi_margin_loss(x, t, weight=weight, **kw)


def multilabel_margin_samples(rng):
    t = np.array([[3, 0, -1, 1], [1, 2, 3, -1]], dtype=np.int64)
    return [Sample((randn(rng, 2, 4), t), grad=(0,)),
            Sample((randn(rng, 2, 4), t), {"reduction": "none"}, grad=(0,))]


def cosine_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3, 4), _signs(rng, 3)), grad=(0, 1)),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4), _signs(rng, 3)),
                   {"margin": -0.5, "reduction": "none"}, grad=(0, 1))]


def triplet_samples(rng):
    a, p, n = randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 3, 4)
    return [Sample((a, p, n)), Sample((a, p, n), {"swap": True, "margin": 2.0}),
            Sample((a, p, n), {"p": 1, "reduction": "none"})]


def ctc_samples(rng):
    T, N, C = 6, 2, 4
    logits = randn(rng, T, N, C)
    targets = np.array([[1, 2, 2], [3, 1, 0]], dtype=np.int64)
    return [Sample((logits, targets, (6, 5), (3, 2)), grad=(0,)),
            Sample((logits, targets, (6, 6), (3, 2)), {"reduction": "sum"}, grad=(0,)),
            # concatenated targets; the first sequence too short for its repeated label
            Sample((logits, np.array([2, 2, 1], dtype=np.int64), (2, 6), (2, 1)),
                   {"reduction": "none", "zero_infinity": True}, grad=(0,)),
            # unbatched: (T, C) log-probabilities, a (S,) target, 0-dim lengths
            Sample((logits[:, 0], targets[0], 6, 3), {"reduction": "none"}, grad=(0,)),
            Sample((logits[:, 1], targets[1, :2], 5, 2), grad=(0,)),
            Sample((logits[:, 1], targets[1], 5, 2), raises=RuntimeError)]  # 3 labels, length 2


def ctc_call(lib, logits, targets, il, tl, **kw):
    # through log_softmax: PyTorch's CTC gradient (ember's too) is the one through the
    # log_softmax it expects, exp(lp) - posterior, not the partial derivative in log_probs
    # (a gradcheck of ctc_loss on log_probs alone fails in PyTorch)
    return _F(lib).ctc_loss(_F(lib).log_softmax(logits, -1), targets, lib.tensor(il),
                            lib.tensor(tl), **kw)


def gaussian_samples(rng):
    return [Sample((randn(rng, 3, 2), randn(rng, 3, 2), positive(rng, 3, 2))),
            Sample((randn(rng, 3, 2), randn(rng, 3, 2), positive(rng, 3, 1)),
                   {"full": True, "reduction": "sum"})]


def poisson_samples(rng):
    return [Sample((randn(rng, 3, 4), positive(rng, 3, 4)), grad=(0,)),
            Sample((positive(rng, 3, 4), positive(rng, 3, 4) * 3),
                   {"log_input": False, "full": True}, grad=(0,))]


register(
    OpInfo("cross_entropy", ce_call, ce_samples),
    OpInfo("nll_loss", lambda lib, x, t, w=None, **kw: _F(lib).nll_loss(x, t, w, **kw),
           nll_samples),
    OpInfo("mse_loss", lambda lib, a, b, **kw: _F(lib).mse_loss(a, b, **kw),
           regression_samples()),
    OpInfo("l1_loss", lambda lib, a, b, **kw: _F(lib).l1_loss(a, b, **kw),
           regression_samples()),
    OpInfo("smooth_l1_loss", lambda lib, a, b, **kw: _F(lib).smooth_l1_loss(a, b, beta=0.5, **kw),
           regression_samples((0.0, 0.5, -0.5))),
    OpInfo("huber_loss", lambda lib, a, b, **kw: _F(lib).huber_loss(a, b, delta=0.7, **kw),
           regression_samples((0.0, 0.7, -0.7))),
    OpInfo("binary_cross_entropy",
           lambda lib, p, t, w=None, **kw: _F(lib).binary_cross_entropy(p, t, w, **kw),
           bce_samples),
    OpInfo("binary_cross_entropy_with_logits", bce_logits_call, bce_logits_samples),
    OpInfo("kl_div", lambda lib, a, b, **kw: _F(lib).kl_div(a, b, **kw), kl_samples),
    OpInfo("poisson_nll_loss", lambda lib, a, b, **kw: _F(lib).poisson_nll_loss(a, b, **kw),
           poisson_samples),
    OpInfo("gaussian_nll_loss", lambda lib, a, b, v, **kw: _F(lib).gaussian_nll_loss(a, b, v, **kw),
           gaussian_samples),
    OpInfo("margin_ranking_loss",
           lambda lib, a, b, t, **kw: _F(lib).margin_ranking_loss(a, b, t, **kw), margin_samples),
    OpInfo("hinge_embedding_loss",
           lambda lib, x, t, **kw: _F(lib).hinge_embedding_loss(x, t, **kw), hinge_samples),
    OpInfo("soft_margin_loss", lambda lib, x, t, **kw: _F(lib).soft_margin_loss(x, t, **kw),
           lambda rng: [Sample((randn(rng, 3, 4), _signs(rng, 3, 4)), grad=(0,))]),
    OpInfo("multilabel_soft_margin_loss",
           lambda lib, x, t, **kw: _F(lib).multilabel_soft_margin_loss(x, t, **kw),
           lambda rng: [Sample((randn(rng, 3, 4), (rng.random((3, 4)) < 0.5) * 1.0),
                               grad=(0,))]),
    OpInfo("multi_margin_loss", multi_margin_call, multi_margin_samples),
    OpInfo("multilabel_margin_loss",
           lambda lib, x, t, **kw: _F(lib).multilabel_margin_loss(x, t, **kw),
           multilabel_margin_samples, gradgrad=False),
    OpInfo("cosine_embedding_loss",
           lambda lib, a, b, t, **kw: _F(lib).cosine_embedding_loss(a, b, t, **kw),
           cosine_samples),
    OpInfo("triplet_margin_loss",
           lambda lib, anchor, pos, neg, **kw: _F(lib).triplet_margin_loss(anchor, pos, neg, **kw), triplet_samples),
    OpInfo("triplet_margin_with_distance_loss",
           lambda lib, anchor, pos, neg, **kw: _F(lib).triplet_margin_with_distance_loss(anchor, pos, neg, **kw),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4), randn(rng, 3, 4)))]),
    OpInfo("ctc_loss", ctc_call, ctc_samples, gradgrad=False, atol=1e-4),
)

"""Sparse gradients, as PyTorch's: `F.embedding`/`nn.Embedding`/`nn.EmbeddingBag` with
sparse=True give uncoalesced COO gradients, the engine accumulates them as AccumulateGrad
does, the sparse-tensor methods users touch on them, and the optimisers that take them
(SGD, Adagrad, SparseAdam) follow PyTorch's trajectory; the others raise PyTorch's errors."""
import numpy as np
import pytest

import ember

from ._helpers import _quiet, both  # noqa: F401  (_quiet: autouse)

torch = pytest.importorskip("torch")

W = np.random.RandomState(0).randn(7, 3).astype(np.float32)
IDX = [[1, 2, 1], [4, 0, 2]]


def arr(t):
    t = t.detach()
    return np.asarray((t.to_dense() if t.is_sparse else t).numpy())


def same_sparse(e, t, **kw):
    assert e.is_sparse and t.is_sparse
    assert (e._nnz(), e.is_coalesced(), tuple(e.shape)) == (t._nnz(), t.is_coalesced(), tuple(t.shape))
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_allclose(e._values().numpy(), t._values().numpy(), **kw)


def leaf(lib, w=W):
    return lib.tensor(w, requires_grad=True)


def emb_grad(lib, idx=IDX, scale=1.0, **kw):
    w = leaf(lib)
    (lib.nn.functional.embedding(lib.tensor(idx), w, sparse=True, **kw) * scale).sum().backward()
    return w.grad


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -5}, {"max_norm": 1.0}])
def test_embedding_sparse_grad(kw):
    e, t = both(lambda lib: emb_grad(lib, **kw))
    same_sparse(e, t)
    assert e.layout is ember.sparse_coo


@pytest.mark.parametrize("idx", [[3], [2, 2], [[2]]])
def test_small_and_all_padding(idx):
    same_sparse(*both(lambda lib: emb_grad(lib, idx)))
    same_sparse(*both(lambda lib: emb_grad(lib, idx, padding_idx=2)))


def test_accumulation_sparse_sparse_and_dense():
    def run(lib, second, third=None):
        w = leaf(lib)
        F = lib.nn.functional
        F.embedding(lib.tensor([1, 2, 1]), w, sparse=True).pow(2).sum().backward()
        F.embedding(lib.tensor(second), w, sparse=True).sum().backward()
        if third is not None:
            F.embedding(lib.tensor(third), w).sum().backward()
        return w.grad
    for second in ([1, 2, 1], [3, 1, 1], [0, 5], [6]):
        same_sparse(*both(lambda lib: run(lib, second)), rtol=1e-6)
    e, t = both(lambda lib: run(lib, [3, 1], third=[1, 4]))   # sparse .grad + dense: dense
    assert not e.is_sparse and not t.is_sparse
    np.testing.assert_allclose(arr(e), arr(t), rtol=1e-6)

    def dense_first(lib):
        w = leaf(lib)
        lib.nn.functional.embedding(lib.tensor([1, 4]), w).sum().backward()
        g = w.grad
        lib.nn.functional.embedding(lib.tensor([1, 1, 2]), w, sparse=True).sum().backward()
        assert w.grad is g   # accumulated in place, as PyTorch's dense += sparse
        return w.grad
    e, t = both(dense_first)
    assert not e.is_sparse
    np.testing.assert_allclose(arr(e), arr(t), rtol=1e-6)


def test_two_lookups_in_one_graph_and_autograd_grad():
    def run(lib):
        w = leaf(lib)
        F = lib.nn.functional
        loss = (F.embedding(lib.tensor([1, 2]), w, sparse=True).sum()
                + F.embedding(lib.tensor([2, 5]), w, sparse=True).pow(2).sum())
        return lib.autograd.grad(loss, w)[0]
    e, t = both(run)
    same_sparse(e, t, rtol=1e-6)


def test_nonleaf_weight_gets_the_same_values():
    # ember densifies a sparse gradient at a node other than a leaf's accumulator
    def run(lib):
        p = leaf(lib)
        lib.nn.functional.embedding(lib.tensor(IDX), p * 2, sparse=True).sum().backward()
        return p.grad
    e, t = both(run)
    np.testing.assert_allclose(arr(e), arr(t))


def test_create_graph_keeps_the_values_in_the_graph():
    def run(lib):
        w = leaf(lib)
        out = lib.nn.functional.embedding(lib.tensor(IDX), w, sparse=True).pow(2).sum()
        (g,) = lib.autograd.grad(out, w, create_graph=True)
        assert g.is_sparse and g.requires_grad
        (h,) = lib.autograd.grad(lib.sparse.sum(g), w)
        return g, h
    (eg, eh), (tg, th) = both(run)
    same_sparse(eg, tg)
    np.testing.assert_allclose(arr(eh), arr(th))


def test_embedding_errors():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            emb_grad(lib, scale_grad_by_freq=True)


@pytest.mark.parametrize("kw", [{"mode": "sum"}, {"mode": "mean"}, {"mode": "mean", "padding_idx": 2},
                                {"mode": "sum", "per_sample": True}])
def test_embedding_bag_sparse_grad(kw):
    kw = dict(kw)
    per_sample = kw.pop("per_sample", False)

    def run(lib):
        bag = lib.nn.EmbeddingBag(7, 3, sparse=True, **kw)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(W))
        psw = lib.tensor([0.5, 2.0, -1.0, 3.0, 1.5, 0.25]) if per_sample else None
        out = bag(lib.tensor([1, 2, 1, 4, 2, 6]), lib.tensor([0, 2, 5]), per_sample_weights=psw)
        (out * lib.arange(1.0, 4.0).reshape(3, 1)).sum().backward()
        return bag.weight.grad
    e, t = both(run)
    same_sparse(e, t, rtol=1e-6)


# ---- the sparse-tensor methods ------------------------------------------------------------------
def coo(lib, ind, vals, coalesce=False):
    s = lib.sparse_coo_tensor(lib.tensor([ind]), lib.tensor(vals), (5, 2))
    return s.coalesce() if coalesce else s


V3 = [[1., 2.], [3., 4.], [5., 6.]]


@pytest.mark.parametrize("a,b,ca,cb", [
    ([1, 2, 1], [1, 2, 1], False, False),   # equal coordinate lists: values summed in place
    ([1, 2, 1], [3, 2, 1], False, False),
    ([4, 0, 2], [3, 2, 1], True, True),     # both coalesced: a sorted union
    ([1, 2, 1], [3, 2, 1], True, False),
    ([3, 0, 0], [1, 4, 4], False, False),
])
def test_add_merges_as_pytorch(a, b, ca, cb):
    for op in (lambda x, y: x + y, lambda x, y: x.add(y, alpha=2.5),
               lambda x, y: x.add_(y, alpha=-1), lambda x, y: x.sub(y)):
        e, t = both(lambda lib: op(coo(lib, a, V3, ca), coo(lib, b, [[.5, 1.]] * 3, cb)))
        same_sparse(e, t)


def test_scaling_negation_zero_and_sums():
    for op in (lambda s: s * 3, lambda s: 2 * s, lambda s: s.mul(0.5), lambda s: -s,
               lambda s: s / 4, lambda s: s.mul_(3), lambda s: s.mul(s.new_tensor(2.0) if
               hasattr(s, "new_tensor") else 2.0), lambda s: s.zero_(), lambda s: s.coalesce(),
               lambda s: s.clone().div_(2)):
        same_sparse(*both(lambda lib: op(coo(lib, [1, 2, 1], V3))))
    for op in (lambda lib, s: lib.sparse.sum(s), lambda lib, s: lib.sparse.sum(s, 1),
               lambda lib, s: lib.sparse.sum(s, 0), lambda lib, s: s.to_dense(),
               lambda lib, s: lib.tensor([s.sparse_dim(), s.dense_dim(), s._nnz()])):
        e, t = both(lambda lib: op(lib, coo(lib, [1, 2, 1], V3)))
        np.testing.assert_allclose(arr(e), arr(t))


def test_indices_values_need_coalescing():
    for lib in (ember, torch):
        s = coo(lib, [1, 2, 1], V3)
        for name in ("indices", "values"):
            with pytest.raises(RuntimeError, match="please call .coalesce"):
                getattr(s, name)()
    e, t = both(lambda lib: coo(lib, [1, 2, 1], V3).coalesce())
    np.testing.assert_array_equal(e.indices().numpy(), t.indices().numpy())
    np.testing.assert_array_equal(e.values().numpy(), t.values().numpy())


def test_dense_with_sparse_and_sparse_mask():
    D = np.arange(10.0, dtype=np.float32).reshape(5, 2)
    for op in (lambda lib, s: lib.tensor(D) + s, lambda lib, s: lib.tensor(D).add(s, alpha=-2),
               lambda lib, s: lib.tensor(D).add_(s, alpha=0.5),
               lambda lib, s: lib.add(lib.tensor(D), s),
               lambda lib, s: lib.tensor(D).sparse_mask(s), lambda lib, s: lib.tensor(D).sparse_mask(s.coalesce()),
               lambda lib, s: s * lib.tensor(D)):
        e, t = both(lambda lib: op(lib, coo(lib, [1, 2, 1], V3)))
        assert e.is_sparse == t.is_sparse
        if e.is_sparse:
            same_sparse(e, t)
        else:
            np.testing.assert_allclose(arr(e), arr(t))


def test_sparse_arithmetic_errors():
    def msg(fn):
        out = []
        for lib in (ember, torch):
            with pytest.raises(RuntimeError) as info:
                fn(lib)
            out.append(str(info.value))
        assert out[0] == out[1]
    msg(lambda lib: coo(lib, [1, 2, 1], V3) + lib.ones(5, 2))
    msg(lambda lib: coo(lib, [1, 2, 1], V3) + 2)
    msg(lambda lib: coo(lib, [1, 2, 1], V3) + lib.sparse_coo_tensor(lib.tensor([[1]]), lib.ones(1, 2), (6, 2)))
    msg(lambda lib: lib.ones(6, 2) + coo(lib, [1, 2, 1], V3))
    msg(lambda lib: lib.ones(6, 2).add_(coo(lib, [1, 2, 1], V3)))
    msg(lambda lib: lib.ones(5, 3).sparse_mask(coo(lib, [1, 2, 1], V3)))
    msg(lambda lib: lib.ones(5, 2).coalesce())
    msg(lambda lib: lib.ones(5, 2).indices())


# ---- optimisers --------------------------------------------------------------------------------------
def trajectory(lib, make_opt, steps=20, dense_head=False, accumulate=1, zero_to_none=True):
    rng = np.random.RandomState(1)
    emb = lib.nn.Embedding(7, 3, sparse=True, padding_idx=6)
    with lib.no_grad():
        emb.weight.copy_(lib.tensor(W))
    opt = make_opt(emb.parameters())
    for _ in range(steps):
        opt.zero_grad(set_to_none=zero_to_none)
        for _ in range(accumulate):
            idx = lib.tensor(rng.randint(0, 7, size=(4, 3)))
            target = lib.tensor(rng.randn(4, 3, 3).astype(np.float32))
            ((emb(idx) - target) ** 2).mean().backward()
        opt.step()
    return emb.weight, opt


OPTIMISERS = {
    "sgd": lambda lib, p: lib.optim.SGD(p, lr=0.5),
    "sgd_momentum": lambda lib, p: lib.optim.SGD(p, lr=0.3, momentum=0.9, dampening=0.1),
    "sgd_nesterov": lambda lib, p: lib.optim.SGD(p, lr=0.3, momentum=0.8, nesterov=True),
    "sgd_maximize": lambda lib, p: lib.optim.SGD(p, lr=0.1, maximize=True),
    "adagrad": lambda lib, p: lib.optim.Adagrad(p, lr=0.3),
    "adagrad_decay": lambda lib, p: lib.optim.Adagrad(p, lr=0.3, lr_decay=0.05,
                                                      initial_accumulator_value=0.1, maximize=True),
    "sparse_adam": lambda lib, p: lib.optim.SparseAdam(p, lr=0.05),
    "sparse_adam_maximize": lambda lib, p: lib.optim.SparseAdam(list(p), lr=0.05, betas=(0.8, 0.9),
                                                                eps=1e-6, maximize=True),
}


@pytest.mark.parametrize("name", sorted(OPTIMISERS))
@pytest.mark.parametrize("accumulate,zero_to_none", [(1, True), (3, False)])
def test_optimiser_trajectory(name, accumulate, zero_to_none):
    make = OPTIMISERS[name]
    (ew, eopt), (tw, topt) = both(lambda lib: trajectory(lib, lambda p: make(lib, p),
                                                         accumulate=accumulate,
                                                         zero_to_none=zero_to_none))
    np.testing.assert_allclose(arr(ew), arr(tw), rtol=2e-5, atol=2e-6)
    es, ts = eopt.state_dict()["state"], topt.state_dict()["state"]
    assert es.keys() == ts.keys()
    for k in ts:
        assert es[k].keys() == ts[k].keys()
        for key, tv in ts[k].items():
            ev = es[k][key]
            if isinstance(tv, torch.Tensor):
                assert ev.is_sparse == tv.is_sparse
                np.testing.assert_allclose(arr(ev), arr(tv), rtol=2e-5, atol=2e-6)
            else:
                assert ev == tv


def test_optimiser_errors():
    def err(lib, make, exc=RuntimeError):
        emb = lib.nn.Embedding(7, 3, sparse=True)
        opt = make(lib, emb.parameters())
        emb(lib.tensor([1, 2])).sum().backward()
        with pytest.raises(exc) as info:
            opt.step()
        return str(info.value)
    for make in (lambda lib, p: lib.optim.Adam(p), lambda lib, p: lib.optim.AdamW(p),
                 lambda lib, p: lib.optim.RMSprop(p), lambda lib, p: lib.optim.Adadelta(p),
                 lambda lib, p: lib.optim.Adamax(p), lambda lib, p: lib.optim.NAdam(p),
                 lambda lib, p: lib.optim.RAdam(p), lambda lib, p: lib.optim.ASGD(p),
                 lambda lib, p: lib.optim.Rprop(p),
                 lambda lib, p: lib.optim.SGD(p, lr=0.1, weight_decay=0.1),
                 lambda lib, p: lib.optim.Adagrad(p, weight_decay=0.1)):
        assert err(ember, make) == err(torch, make)

    def dense(lib):
        lin = lib.nn.Linear(2, 2)
        opt = lib.optim.SparseAdam(lin.parameters())
        lin(lib.ones(1, 2)).sum().backward()
        with pytest.raises(RuntimeError) as info:
            opt.step()
        return str(info.value)
    assert dense(ember) == dense(torch)

    def single(lib):
        with pytest.raises(TypeError) as info:
            lib.optim.SparseAdam(lib.nn.Embedding(3, 2, sparse=True).weight)
        return str(info.value)
    assert single(ember) == single(torch)
    for kw, in (({"lr": 0.0},), ({"eps": 0.0},), ({"betas": (1.0, 0.9)},), ({"betas": (0.9, 1.0)},)):
        msgs = []
        for lib in (ember, torch):
            with pytest.raises(ValueError) as info:
                lib.optim.SparseAdam([lib.nn.Embedding(3, 2).weight], **kw)
            msgs.append(str(info.value))
        assert msgs[0] == msgs[1]
    assert ember.optim.SparseAdam([ember.ones(2, requires_grad=True)]).defaults == \
        torch.optim.SparseAdam([torch.ones(2, requires_grad=True)]).defaults


def test_clipping_refuses_sparse_grads_and_zero_grad_keeps_them_sparse():
    for lib in (ember, torch):
        emb = lib.nn.Embedding(7, 3, sparse=True)
        emb(lib.tensor([1, 2, 1])).sum().backward()
        with pytest.raises(NotImplementedError, match="linalg_vector_norm"):
            lib.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
        with pytest.raises(NotImplementedError, match="clamp_min_"):
            lib.nn.utils.clip_grad_value_(emb.parameters(), 1.0)
    e, t = both(lambda lib: _zeroed(lib))
    same_sparse(e, t)


def _zeroed(lib):
    emb = lib.nn.Embedding(7, 3, sparse=True)
    emb(lib.tensor([1, 2, 1])).sum().backward()
    lib.optim.SGD(emb.parameters(), lr=0.1).zero_grad(set_to_none=False)
    return emb.weight.grad


def test_top_level_embedding_positional_sparse_and_grad_assignment():
    def run(lib):
        w = leaf(lib)
        lib.embedding(w, lib.tensor([1, 1, 3]), 1, False, True).sum().backward()
        g = w.grad
        w.grad = lib.sparse_coo_tensor(lib.tensor([[0]]), lib.ones(1, 3), (7, 3))
        assert w.grad.is_sparse
        return g
    same_sparse(*both(run))

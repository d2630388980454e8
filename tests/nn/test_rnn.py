"""RNN / LSTM / GRU, their cells and nn.utils.rnn: parity with PyTorch on shared weights
(outputs, final states, parameter and input gradients), parameter names, shapes, reprs and
errors."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import rnn as U

torch = pytest.importorskip("torch")
TU = torch.nn.utils.rnn

ATOL = 2e-5


def _copy(t_mod, e_mod):
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                           t_mod.state_dict().items()})


def _pair(name, *args, **kwargs):
    t_mod = getattr(torch.nn, name)(*args, **kwargs)
    e_mod = getattr(nn, name)(*args, **kwargs)
    _copy(t_mod, e_mod)
    return t_mod, e_mod


def _arr(x):
    return np.random.randn(*x).astype(np.float32)


def _both(a, grad=True):
    return torch.tensor(a, requires_grad=grad), ember.tensor(a, requires_grad=grad)


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    if isinstance(out, (TU.PackedSequence, U.PackedSequence)):
        return [out.data]
    return [out]


def _check(t_mod, e_mod, t_in, e_in, t_inputs=(), e_inputs=()):
    t_out, e_out = t_mod(*t_in), e_mod(*e_in)
    tf, ef = _flat(t_out), _flat(e_out)
    assert len(tf) == len(ef)
    weights = [_arr(tuple(t.shape)) for t in tf]
    for t, e in zip(tf, ef):
        assert tuple(t.shape) == tuple(e.shape)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=ATOL, rtol=1e-4)
    sum(((t * torch.tensor(w)).sum() for t, w in zip(tf, weights))).backward()
    sum(((e * ember.tensor(w)).sum() for e, w in zip(ef, weights))).backward()
    e_params = dict(e_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        np.testing.assert_allclose(e_params[name].grad.numpy(), p.grad.numpy(), atol=1e-4,
                                   rtol=1e-4, err_msg=name)
    for t, e in zip(t_inputs, e_inputs):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-4, rtol=1e-4)
    return t_out, e_out


@pytest.mark.parametrize("name,kw", [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 3}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False}),
])
def test_padded_parity(name, kw):
    torch.manual_seed(0)
    np.random.seed(0)
    t_mod, e_mod = _pair(name, 4, 5, **kw)
    shape = (3, 6, 4) if kw.get("batch_first") else (6, 3, 4)
    tx, ex = _both(_arr(shape))
    _check(t_mod, e_mod, (tx,), (ex,), (tx,), (ex,))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_initial_state_and_unbatched(name):
    np.random.seed(1)
    t_mod, e_mod = _pair(name, 3, 4, num_layers=2, bidirectional=True)
    lstm = name == "LSTM"
    th, eh = _both(_arr((4, 2, 4)))
    tc, ec = _both(_arr((4, 2, 4)))
    tx, ex = _both(_arr((5, 2, 3)))
    t_hx, e_hx = ((th, tc), (eh, ec)) if lstm else (th, eh)
    _check(t_mod, e_mod, (tx, t_hx), (ex, e_hx), (tx, th), (ex, eh))
    # unbatched
    t_mod.zero_grad()
    e_mod.zero_grad()
    tx, ex = _both(_arr((5, 3)))
    th, eh = _both(_arr((4, 4)))
    tc, ec = _both(_arr((4, 4)))
    t_hx, e_hx = ((th, tc), (eh, ec)) if lstm else (th, eh)
    _check(t_mod, e_mod, (tx, t_hx), (ex, e_hx), (tx, th), (ex, eh))


@pytest.mark.parametrize("name,kw", [
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("RNN", {"bidirectional": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}),
])
def test_packed_parity(name, kw):
    np.random.seed(2)
    t_mod, e_mod = _pair(name, 3, 4, **kw)
    bf = kw.get("batch_first", False)
    lengths = [3, 5, 1, 5]
    x = _arr((4, 5, 3) if bf else (5, 4, 3))
    tx, ex = _both(x)
    tp = TU.pack_padded_sequence(tx, lengths, batch_first=bf, enforce_sorted=False)
    ep = U.pack_padded_sequence(ex, lengths, batch_first=bf, enforce_sorted=False)
    t_out, e_out = _check(t_mod, e_mod, (tp,), (ep,), (tx,), (ex,))
    assert isinstance(e_out[0], U.PackedSequence)
    assert e_out[0].batch_sizes.tolist() == t_out[0].batch_sizes.tolist()
    tpad, tl = TU.pad_packed_sequence(t_out[0], batch_first=bf)
    epad, el = U.pad_packed_sequence(e_out[0], batch_first=bf)
    np.testing.assert_allclose(epad.detach().numpy(), tpad.detach().numpy(), atol=ATOL)
    assert el.tolist() == tl.tolist()


def test_packed_with_hx():
    np.random.seed(3)
    t_mod, e_mod = _pair("LSTM", 3, 4, bidirectional=True)
    seqs = [_arr((n, 3)) for n in (2, 4, 3)]
    tp = TU.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    ep = U.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False)
    th, eh = _both(_arr((2, 3, 4)))
    tc, ec = _both(_arr((2, 3, 4)))
    _check(t_mod, e_mod, (tp, (th, tc)), (ep, (eh, ec)), (th, tc), (eh, ec))


def test_dropout_between_layers_and_eval():
    m = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = ember.randn(5, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    ember.manual_seed(0)
    c = m(x)[0]
    ember.manual_seed(1)
    d = m(x)[0]
    assert not np.allclose(c.detach().numpy(), d.detach().numpy())


@pytest.mark.parametrize("name,kw", [
    ("RNN", {"num_layers": 2, "nonlinearity": "relu", "bias": False, "dropout": 0.5,
             "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "batch_first": True}), ("LSTM", {"proj_size": 2}),
    ("GRU", {"bidirectional": True}),
])
def test_names_shapes_repr(name, kw):
    t_mod = getattr(torch.nn, name)(3, 4, **kw)
    e_mod = getattr(nn, name)(3, 4, **kw)
    assert repr(e_mod) == repr(t_mod)
    t_sd, e_sd = t_mod.state_dict(), e_mod.state_dict()
    assert list(e_sd) == list(t_sd)
    for k in t_sd:
        assert tuple(e_sd[k].shape) == tuple(t_sd[k].shape)
    bound = 1 / 2
    assert all(float(p.detach().abs().max()) <= bound for p in e_mod.parameters())
    assert [[tuple(w.shape) for w in ws] for ws in e_mod.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in t_mod.all_weights]
    e_mod.flatten_parameters()


@pytest.mark.parametrize("name,kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                     ("LSTMCell", {}), ("GRUCell", {}),
                                     ("GRUCell", {"bias": False})])
def test_cells(name, kw):
    np.random.seed(4)
    t_mod, e_mod = _pair(name, 3, 4, **kw)
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    tx, ex = _both(_arr((2, 3)))
    th, eh = _both(_arr((2, 4)))
    tc, ec = _both(_arr((2, 4)))
    lstm = name == "LSTMCell"
    _check(t_mod, e_mod, (tx, (th, tc) if lstm else th), (ex, (eh, ec) if lstm else eh),
           (tx, th), (ex, eh))
    t_mod.zero_grad()
    e_mod.zero_grad()
    tx, ex = _both(_arr((3,)))
    _check(t_mod, e_mod, (tx,), (ex,), (tx,), (ex,))


def _same_error(t_call, e_call):
    with pytest.raises(Exception) as te:
        t_call()
    with pytest.raises(type(te.value)) as ee:
        e_call()
    assert str(ee.value) == str(te.value)


def test_errors():
    t_mod, e_mod = _pair("LSTM", 3, 4)
    _same_error(lambda: t_mod(torch.zeros(2, 2, 5)), lambda: e_mod(ember.zeros(2, 2, 5)))
    _same_error(lambda: t_mod(torch.zeros(2, 2, 3).double()),
                lambda: e_mod(ember.zeros(2, 2, 3).double()))
    _same_error(lambda: t_mod(torch.zeros(2, 2, 3), (torch.zeros(1, 3, 4), torch.zeros(1, 2, 4))),
                lambda: e_mod(ember.zeros(2, 2, 3), (ember.zeros(1, 3, 4), ember.zeros(1, 2, 4))))
    _same_error(lambda: t_mod(torch.zeros(2, 2, 3), (torch.zeros(3, 4), torch.zeros(3, 4))),
                lambda: e_mod(ember.zeros(2, 2, 3), (ember.zeros(3, 4), ember.zeros(3, 4))))
    _same_error(lambda: t_mod(torch.zeros(1, 2, 2, 3)), lambda: e_mod(ember.zeros(1, 2, 2, 3)))
    t_g, e_g = _pair("GRU", 3, 4)
    _same_error(lambda: t_g(torch.zeros(2, 3), torch.zeros(1, 1, 4)),
                lambda: e_g(ember.zeros(2, 3), ember.zeros(1, 1, 4)))
    _same_error(lambda: torch.nn.GRU(3, 4, proj_size=2), lambda: nn.GRU(3, 4, proj_size=2))
    _same_error(lambda: torch.nn.LSTM(3, 4, proj_size=4), lambda: nn.LSTM(3, 4, proj_size=4))
    _same_error(lambda: torch.nn.RNN(3, 4, nonlinearity="gelu"),
                lambda: nn.RNN(3, 4, nonlinearity="gelu"))
    t_c, e_c = _pair("GRUCell", 3, 4)
    _same_error(lambda: t_c(torch.zeros(2, 5)), lambda: e_c(ember.zeros(2, 5)))
    _same_error(lambda: t_c(torch.zeros(2, 3), torch.zeros(3, 4)),
                lambda: e_c(ember.zeros(2, 3), ember.zeros(3, 4)))


# ---- nn.utils.rnn -------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    seqs = [_arr((n, 2)) for n in (3, 1, 4)]
    t = TU.pad_sequence([torch.tensor(s) for s in seqs], batch_first, -1.0, side)
    e = U.pad_sequence([ember.tensor(s) for s in seqs], batch_first, -1.0, side)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_round_trip_and_grads(batch_first):
    seqs = [_arr((n, 2)) for n in (2, 4, 1, 4)]
    tl = [torch.tensor(s, requires_grad=True) for s in seqs]
    el = [ember.tensor(s, requires_grad=True) for s in seqs]
    tp, ep = TU.pack_sequence(tl, enforce_sorted=False), U.pack_sequence(el, enforce_sorted=False)
    np.testing.assert_array_equal(ep.data.detach().numpy(), tp.data.detach().numpy())
    for f in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        assert getattr(ep, f).tolist() == getattr(tp, f).tolist()
    tpad, tlen = TU.pad_packed_sequence(tp, batch_first, 7.0, total_length=6)
    epad, elen = U.pad_packed_sequence(ep, batch_first, 7.0, total_length=6)
    np.testing.assert_array_equal(epad.detach().numpy(), tpad.detach().numpy())
    assert elen.tolist() == tlen.tolist() and elen.dtype == ember.int64
    w = _arr(tuple(tpad.shape))
    (tpad * torch.tensor(w)).sum().backward()
    (epad * ember.tensor(w)).sum().backward()
    for t, e in zip(tl, el):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())
    for t, e in zip(TU.unpack_sequence(tp), U.unpack_sequence(ep)):
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    for t, e in zip(TU.unpad_sequence(tpad, tlen, batch_first),
                    U.unpad_sequence(epad, elen, batch_first)):
        np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())


def test_packing_errors_and_repr():
    _same_error(lambda: TU.pack_padded_sequence(torch.zeros(3, 2, 1), [1, 3]),
                lambda: U.pack_padded_sequence(ember.zeros(3, 2, 1), [1, 3]))
    _same_error(lambda: TU.pack_padded_sequence(torch.zeros(3, 2, 1), [0, 3],
                                                enforce_sorted=False),
                lambda: U.pack_padded_sequence(ember.zeros(3, 2, 1), [0, 3],
                                               enforce_sorted=False))
    tp = TU.pack_sequence([torch.ones(2, 1), torch.ones(1, 1)])
    ep = U.pack_sequence([ember.ones(2, 1), ember.ones(1, 1)])
    _same_error(lambda: TU.pad_packed_sequence(tp, total_length=1),
                lambda: U.pad_packed_sequence(ep, total_length=1))
    _same_error(lambda: TU.pad_sequence([torch.ones(1)], padding_side="up"),
                lambda: U.pad_sequence([ember.ones(1)], padding_side="up"))
    assert repr(ep) == repr(tp)
    data, batch_sizes, sorted_indices, unsorted_indices = ep
    assert batch_sizes.tolist() == [2, 1] and sorted_indices is None
    assert ep.double().data.dtype == ember.float64
    assert nn.utils.rnn.PackedSequence is U.PackedSequence

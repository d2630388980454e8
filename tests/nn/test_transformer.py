"""MultiheadAttention and the Transformer layers: parity with PyTorch on shared weights
(outputs, attention weights, parameter and input gradients), state_dict keys and shapes,
reprs, masks and errors."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn

torch = pytest.importorskip("torch")


def _copy(t_mod, e_mod):
    e_mod.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in
                           t_mod.state_dict().items()})


def _pair(name, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mod = getattr(torch.nn, name)(*args, **kwargs)
        e_mod = getattr(nn, name)(*args, **kwargs)
    _copy(t_mod, e_mod)
    return t_mod, e_mod


def _arr(*shape):
    return np.random.randn(*shape).astype(np.float32)


def _both(a, grad=True):
    if a is None:
        return None, None
    if a.dtype == bool:
        return torch.tensor(a), ember.tensor(a)
    return torch.tensor(a, requires_grad=grad), ember.tensor(a, requires_grad=grad)


def _close(e, t, atol=2e-5):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-4)


def _backward_check(t_mod, e_mod, t_out, e_out, t_inputs=(), e_inputs=()):
    w = _arr(*t_out.shape)
    (t_out * torch.tensor(w)).sum().backward()
    (e_out * ember.tensor(w)).sum().backward()
    e_params = dict(e_mod.named_parameters())
    for name, p in t_mod.named_parameters():
        if p.grad is None:
            assert e_params[name].grad is None or not e_params[name].grad.numpy().any(), name
            continue
        np.testing.assert_allclose(e_params[name].grad.numpy(), p.grad.numpy(), atol=1e-4,
                                   rtol=1e-3, err_msg=name)
    for t, e in zip(t_inputs, e_inputs):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-4, rtol=1e-3)


# ---- MultiheadAttention -------------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"batch_first": True}, {"bias": False},
                                {"add_bias_kv": True, "add_zero_attn": True},
                                {"kdim": 5, "vdim": 3}])
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_parity(kw, need_weights, average):
    np.random.seed(0)
    torch.manual_seed(0)
    t_mod, e_mod = _pair("MultiheadAttention", 8, 2, **kw)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    L, S, B = 3, 4, 2
    bf = kw.get("batch_first", False)
    shape = (lambda n, d: (B, n, d)) if bf else (lambda n, d: (n, B, d))
    tq, eq = _both(_arr(*shape(L, 8)))
    tk, ek = _both(_arr(*shape(S, kw.get("kdim", 8))))
    tv, ev = _both(_arr(*shape(S, kw.get("vdim", 8))))
    kpm = np.zeros((B, S), bool)
    kpm[0, -1] = True
    tm, em = _both(kpm)
    t_out, t_w = t_mod(tq, tk, tv, key_padding_mask=tm, need_weights=need_weights,
                       average_attn_weights=average)
    e_out, e_w = e_mod(eq, ek, ev, key_padding_mask=em, need_weights=need_weights,
                       average_attn_weights=average)
    _close(e_out, t_out)
    if need_weights:
        _close(e_w, t_w)
    else:
        assert e_w is None
    _backward_check(t_mod, e_mod, t_out, e_out, (tq, tk, tv), (eq, ek, ev))


@pytest.mark.parametrize("mask_kind", ["bool2d", "float2d", "bool3d", "float_kpm", "causal"])
def test_mha_masks_self_attention(mask_kind):
    np.random.seed(1)
    t_mod, e_mod = _pair("MultiheadAttention", 6, 3, batch_first=True)
    B, L, H = 2, 4, 3
    tx, ex = _both(_arr(B, L, 6))
    kw_t, kw_e = {}, {}
    if mask_kind == "bool2d":
        m = np.triu(np.ones((L, L), bool), 1)
        kw_t["attn_mask"], kw_e["attn_mask"] = _both(m)
    elif mask_kind == "float2d":
        m = _arr(L, L)
        kw_t["attn_mask"], kw_e["attn_mask"] = _both(m, grad=False)
    elif mask_kind == "bool3d":
        m = np.random.rand(B * H, L, L) > 0.7
        m[..., 0] = False
        kw_t["attn_mask"], kw_e["attn_mask"] = _both(m)
    elif mask_kind == "float_kpm":
        m = np.zeros((B, L), np.float32)
        m[1, 2:] = -np.inf
        kw_t["key_padding_mask"], kw_e["key_padding_mask"] = _both(m, grad=False)
    else:
        m = torch.nn.Transformer.generate_square_subsequent_mask(L)
        kw_t = {"attn_mask": m, "is_causal": True}
        kw_e = {"attn_mask": nn.Transformer.generate_square_subsequent_mask(L),
                "is_causal": True}
    for need in (True, False):
        t_mod.zero_grad()
        e_mod.zero_grad()
        tx.grad = None
        ex.grad = None
        t_out, t_w = t_mod(tx, tx, tx, need_weights=need, **kw_t)
        e_out, e_w = e_mod(ex, ex, ex, need_weights=need, **kw_e)
        _close(e_out, t_out)
        if need:
            _close(e_w, t_w)
        _backward_check(t_mod, e_mod, t_out, e_out, (tx,), (ex,))


def test_mha_unbatched_and_eval():
    np.random.seed(2)
    t_mod, e_mod = _pair("MultiheadAttention", 4, 2, dropout=0.3)
    t_mod.eval()
    e_mod.eval()
    tq, eq = _both(_arr(3, 4))
    tk, ek = _both(_arr(5, 4))
    t_out, t_w = t_mod(tq, tk, tk, key_padding_mask=torch.tensor([0, 0, 1, 0, 1]).bool())
    e_out, e_w = e_mod(eq, ek, ek, key_padding_mask=ember.tensor([0, 0, 1, 0, 1]).bool())
    _close(e_out, t_out)
    _close(e_w, t_w)
    _backward_check(t_mod, e_mod, t_out, e_out, (tq, tk), (eq, ek))


def test_mha_fully_masked_row():
    t_mod, e_mod = _pair("MultiheadAttention", 4, 2)
    x = _arr(3, 1, 4)
    m = np.zeros((3, 3), bool)
    m[1] = True
    with torch.no_grad():
        t_out = t_mod(torch.tensor(x), torch.tensor(x), torch.tensor(x),
                      attn_mask=torch.tensor(m), need_weights=False)[0]
    e_out = e_mod(ember.tensor(x), ember.tensor(x), ember.tensor(x), attn_mask=ember.tensor(m),
                  need_weights=False)[0]
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.numpy(), atol=2e-5)


def test_mha_init_and_repr():
    e = nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True)
    t = torch.nn.MultiheadAttention(8, 2, kdim=4, vdim=6, add_bias_kv=True)
    assert repr(e) == repr(t)
    t_sd, e_sd = t.state_dict(), e.state_dict()
    assert list(e_sd) == list(t_sd)
    assert all(tuple(e_sd[k].shape) == tuple(t_sd[k].shape) for k in t_sd)
    assert e.in_proj_weight is None and e.q_proj_weight is not None
    assert not e.in_proj_bias.detach().numpy().any()
    assert not e.out_proj.bias.detach().numpy().any()
    bound = (6 / (8 + 4)) ** 0.5
    assert np.abs(e.k_proj_weight.detach().numpy()).max() <= bound
    assert type(e.out_proj).__name__ == "NonDynamicallyQuantizableLinear"


def test_mha_errors():
    t_mod, e_mod = _pair("MultiheadAttention", 4, 2)
    x_t, x_e = torch.zeros(3, 2, 4), ember.zeros(3, 2, 4)
    for t_kw, e_kw in [
        ({"attn_mask": torch.zeros(2, 2)}, {"attn_mask": ember.zeros(2, 2)}),
        ({"attn_mask": torch.zeros(3, 3), "is_causal": False, "key_padding_mask":
          torch.zeros(2, 3, dtype=torch.long)},
         {"attn_mask": ember.zeros(3, 3), "is_causal": False, "key_padding_mask":
          ember.zeros(2, 3, dtype=ember.int64)}),
        ({"is_causal": True}, {"is_causal": True}),
    ]:
        with pytest.raises(Exception) as te:
            t_mod(x_t, x_t, x_t, **t_kw)
        with pytest.raises(type(te.value)) as ee:
            e_mod(x_e, x_e, x_e, **e_kw)
        assert str(ee.value) == str(te.value)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)


# ---- Transformer layers -------------------------------------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.filterwarnings("ignore:Support for mismatched")
def test_encoder_layer(norm_first, activation, train):
    np.random.seed(3)
    t_mod, e_mod = _pair("TransformerEncoderLayer", 8, 2, 16, 0.0, activation,
                         batch_first=True, norm_first=norm_first)
    assert repr(e_mod) == repr(t_mod)
    t_mod.train(train)
    e_mod.train(train)
    tx, ex = _both(_arr(2, 5, 8))
    kpm = np.zeros((2, 5), bool)
    kpm[1, 3:] = True
    tm, em = _both(kpm)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    t_out = t_mod(tx, src_mask=mask, src_key_padding_mask=tm)
    e_out = e_mod(ex, src_mask=nn.Transformer.generate_square_subsequent_mask(5),
                  src_key_padding_mask=em)
    _close(e_out, t_out, 5e-5)
    _backward_check(t_mod, e_mod, t_out, e_out, (tx,), (ex,))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(norm_first):
    np.random.seed(4)
    t_mod, e_mod = _pair("TransformerDecoderLayer", 8, 4, 12, 0.0,
                         norm_first=norm_first)
    assert repr(e_mod) == repr(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    tt, et = _both(_arr(4, 2, 8))
    tm, em = _both(_arr(6, 2, 8))
    mkpm = np.zeros((2, 6), bool)
    mkpm[0, 4:] = True
    t_kp, e_kp = _both(mkpm)
    t_out = t_mod(tt, tm, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4),
                  memory_key_padding_mask=t_kp, tgt_is_causal=True)
    e_out = e_mod(et, em, tgt_mask=nn.Transformer.generate_square_subsequent_mask(4),
                  memory_key_padding_mask=e_kp, tgt_is_causal=True)
    _close(e_out, t_out, 5e-5)
    _backward_check(t_mod, e_mod, t_out, e_out, (tt, tm), (et, em))


def test_callable_activation_and_no_bias():
    np.random.seed(5)
    t_mod = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, torch.nn.GELU(), bias=False)
    e_mod = nn.TransformerEncoderLayer(8, 2, 16, 0.0, nn.GELU(), bias=False)
    _copy(t_mod, e_mod)
    assert repr(e_mod) == repr(t_mod)
    assert e_mod.activation_relu_or_gelu == t_mod.activation_relu_or_gelu == 2
    tx, ex = _both(_arr(3, 2, 8))
    t_out, e_out = t_mod(tx), e_mod(ex)
    _close(e_out, t_out, 5e-5)
    _backward_check(t_mod, e_mod, t_out, e_out, (tx,), (ex,))
    e2 = nn.TransformerDecoderLayer(8, 2, 16, activation=lambda x: x * 2)
    assert e2(ember.randn(3, 2, 8), ember.randn(4, 2, 8)).shape == (3, 2, 8)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("batch_first", [False, True])
def test_full_transformer(batch_first):
    np.random.seed(6)
    torch.manual_seed(6)
    t_mod, e_mod = _pair("Transformer", 8, 2, 2, 2, 16, 0.0, batch_first=batch_first)
    t_sd, e_sd = t_mod.state_dict(), e_mod.state_dict()
    assert list(e_sd) == list(t_sd)
    assert all(tuple(e_sd[k].shape) == tuple(t_sd[k].shape) for k in t_sd)
    B, S, T = 2, 5, 4
    src = _arr(B, S, 8) if batch_first else _arr(S, B, 8)
    tgt = _arr(B, T, 8) if batch_first else _arr(T, B, 8)
    ts, es = _both(src)
    tt, et = _both(tgt)
    kpm = np.zeros((B, S), bool)
    kpm[0, 3:] = True
    tk, ek = _both(kpm)
    t_out = t_mod(ts, tt, tgt_mask=t_mod.generate_square_subsequent_mask(T),
                  src_key_padding_mask=tk, memory_key_padding_mask=tk)
    e_out = e_mod(es, et, tgt_mask=e_mod.generate_square_subsequent_mask(T),
                  src_key_padding_mask=ek, memory_key_padding_mask=ek)
    _close(e_out, t_out, 1e-4)
    _backward_check(t_mod, e_mod, t_out, e_out, (ts, tt), (es, et))


def test_encoder_stack_eval_fast_path_zeros_padding():
    """PyTorch's nested-tensor inference path zeroes padded positions; ember follows."""
    np.random.seed(7)
    layer_t = torch.nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    layer_e = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True)
    t_mod = torch.nn.TransformerEncoder(layer_t, 2)
    e_mod = nn.TransformerEncoder(layer_e, 2)
    _copy(t_mod, e_mod)
    t_mod.eval()
    e_mod.eval()
    x = _arr(2, 5, 8)
    kpm = np.zeros((2, 5), bool)
    kpm[0, 3:] = True
    with torch.no_grad():
        t_out = t_mod(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
    with ember.no_grad():
        e_out = e_mod(ember.tensor(x), src_key_padding_mask=ember.tensor(kpm))
    _close(e_out, t_out, 5e-5)
    assert not e_out.numpy()[0, 3:].any()


def test_square_subsequent_mask_and_errors():
    e = nn.Transformer.generate_square_subsequent_mask(4)
    t = torch.nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e.dtype == ember.float32
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=ember.float64).dtype == \
        ember.float64
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 1)
    assert "enable_nested_tensor is True, but self.use_nested_tensor is False because " \
           "encoder_layer.self_attn.batch_first was not True" in str(rec[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(ember.zeros(3, 2, 8), ember.zeros(3, 1, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        m(ember.zeros(3, 2, 8), ember.zeros(3, 2, 4))

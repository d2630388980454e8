"""Each op's ONNX lowering, alone: a one-op graph is built from ember tensors, checked by
`onnx.checker` and run in ONNX Runtime, against ember's own result of the op."""
import operator

import numpy as np
import pytest

import ember
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from ember.onnx._builder import GraphBuilder  # noqa: E402
from ember.onnx._export import _OPERATORS, _example  # noqa: E402
from ember.onnx._lower_math import LOWERINGS  # noqa: E402


def _values(g, obj, feeds, arrays):
    if isinstance(obj, ember.Tensor):
        v = g.add_input(f"in{len(feeds)}", obj.shape, obj.dtype)
        feeds[v.name] = obj.detach().numpy()
        return v
    if isinstance(obj, (list, tuple)):
        return type(obj)(_values(g, o, feeds, arrays) for o in obj)
    return obj


def _flat(obj):
    if isinstance(obj, (list, tuple)):
        return [x for o in obj for x in _flat(o)]
    return [] if obj is None else [obj]


def run_lowering(name, fn, *args, opset=20, **kwargs):
    """(ember's result, ONNX Runtime's) of `fn(*args, **kwargs)` lowered as op `name`."""
    want = fn(*args, **kwargs)
    g = GraphBuilder(opset)
    feeds = {}
    vargs = _values(g, args, feeds, None)
    vkwargs = {k: _values(g, v, feeds, None) for k, v in kwargs.items()}
    g.current = name
    got = LOWERINGS[name](g, _example(want), *vargs, **vkwargs)
    outs, wants = _flat(got), _flat(want)
    for i, (v, w) in enumerate(zip(outs, wants)):
        v.shape, v.dtype = tuple(w.shape), w.dtype
        g.outputs.append(v)
    model = g.model()
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, feeds)
    return [w.detach().numpy() for w in wants], results


def _check(name, fn, *args, atol=1e-5, opset=20, **kwargs):
    wants, gots = run_lowering(name, fn, *args, opset=opset, **kwargs)
    assert len(wants) == len(gots)
    for w, g in zip(wants, gots):
        assert w.shape == g.shape, (name, w.shape, g.shape)
        if w.dtype == np.bool_ or np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol, err_msg=name)


g = ember.Generator().manual_seed(0)


def r(*shape):
    return ember.randn(*shape, generator=g)


X, Y = r(2, 3, 4), r(2, 3, 4)


@pytest.mark.parametrize("name,fn", [
    ("add", ember.add), ("sub", ember.sub), ("mul", ember.mul), ("div", ember.div),
    ("maximum", ember.maximum), ("minimum", ember.minimum), ("eq", ember.eq),
    ("lt", ember.lt), ("ge", ember.ge), ("ne", ember.ne),
])
def test_binary(name, fn):
    _check(name, fn, X, Y)


def test_matmul():
    _check("matmul", ember.matmul, X, r(4, 5))
    _check("matmul", ember.matmul, X, r(2, 4, 5))
    _check("bmm", ember.bmm, X, r(2, 4, 5))


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.pow])
def test_with_a_number(op):
    _check(_OPERATORS[op], op, X.abs() + 0.5, 2)
    _check(_OPERATORS[op], op, ember.arange(1, 7).reshape(2, 3), 3)
    _check(_OPERATORS[op], op, X, 1.5)


def test_floor_division_of_integers_rounds_down():
    a = ember.tensor([7, -7, 7, -7, 0])
    b = ember.tensor([2, 2, -2, -2, 3])
    _check("floor_divide", ember.floor_divide, a, b)
    _check("remainder", ember.remainder, a, b)
    _check("remainder", ember.remainder, X, 0.7)
    _check("div", ember.div, X, Y.abs() + 0.1, rounding_mode="trunc")
    _check("div", ember.div, X, Y.abs() + 0.1, rounding_mode="floor")


@pytest.mark.parametrize("name", ["relu", "tanh", "sigmoid", "exp", "neg", "abs", "sqrt",
                                  "rsqrt", "erf", "silu", "gelu", "softplus", "hardsigmoid",
                                  "hardswish", "elu", "leaky_relu", "mish", "relu6", "square"])
def test_unary(name):
    fn = getattr(F, name, None) or getattr(ember, name)
    x = X.abs() + 0.1 if name in ("sqrt", "rsqrt") else X
    _check(name, fn, x)


def test_gelu_tanh_and_before_opset_20():
    _check("gelu", F.gelu, X, approximate="tanh")
    _check("gelu", F.gelu, X, opset=18)
    _check("gelu", F.gelu, X, approximate="tanh", opset=17)


@pytest.mark.parametrize("dim", [0, -1, 1])
def test_softmax(dim):
    _check("softmax", F.softmax, X, dim=dim)
    _check("log_softmax", F.log_softmax, X, dim)


@pytest.mark.parametrize("opset", [17, 20])
def test_reductions(opset):
    _check("sum", ember.sum, X, 1, opset=opset)
    _check("sum", ember.sum, X, opset=opset)
    _check("mean", ember.mean, X, (0, 2), True, opset=opset)
    _check("amax", ember.amax, X, -1, opset=opset)
    _check("max", ember.max, X, 1, opset=opset)
    _check("max", ember.max, X, opset=opset)
    _check("argmax", ember.argmax, X, -1, opset=opset)
    _check("var", ember.var, X, -1, opset=opset)
    _check("std", ember.std, X, 1, keepdim=True, unbiased=False, opset=opset)


def test_clamp_where_masked_fill():
    _check("clamp", ember.clamp, X, -0.5, 0.5)
    _check("clamp", ember.clamp, X, min=0.1)
    _check("where", ember.where, X > 0, X, Y)
    _check("where", ember.where, X > 0, X, 0.0)
    _check("masked_fill", ember.masked_fill, X, Y > 0, -1e4)


def test_shape_ops():
    T = ember.Tensor
    _check("view", T.view, X, 6, 4)
    _check("reshape", T.reshape, X, (-1, 2))
    _check("flatten", T.flatten, X, 1)
    _check("flatten", T.flatten, X)
    _check("unflatten", T.unflatten, X, -1, (2, 2))
    _check("transpose", T.transpose, X, 0, 2)
    _check("permute", T.permute, X, 2, 0, 1)
    _check("unsqueeze", T.unsqueeze, X, -1)
    _check("squeeze", T.squeeze, r(2, 1, 3), 1)
    _check("cat", ember.cat, [X, Y], -1)
    _check("stack", ember.stack, [X, Y], 1)
    _check("split", T.split, X, 3, -1)
    _check("split", T.split, X, [1, 3], 2)
    _check("chunk", T.chunk, X, 2, 2)
    _check("expand", T.expand, r(1, 3, 1), 2, -1, 4)
    _check("repeat", T.repeat, X, 2, 1, 1, 2)
    _check("narrow", T.narrow, X, 2, 1, 2)
    _check("t", T.t, r(3, 5))


@pytest.mark.parametrize("index", [0, -1, (slice(None), 1), (Ellipsis, slice(1, 3)),
                                   (None, 1, slice(None, None, 2)), (slice(1, None), None),
                                   (slice(None), slice(None), -1)])
def test_getitem(index):
    _check("getitem", operator.getitem, X, index)


def test_getitem_with_an_index_tensor():
    _check("getitem", operator.getitem, X, (slice(None), ember.tensor([2, 0, 2])))


def test_constructors_and_casts():
    T = ember.Tensor
    _check("to", T.to, X, ember.float64)
    _check("long", T.long, X * 10)
    _check("zeros_like", ember.zeros_like, X)
    _check("full_like", ember.full_like, X, 3.5)
    _check("tril", ember.tril, r(4, 4))
    _check("triu", ember.triu, r(4, 5), 1)
    _check("gather", ember.gather, r(3, 4), 1, ember.tensor([[0, 1], [3, 3], [2, 0]]))
    _check("index_select", ember.index_select, X, 2, ember.tensor([3, 0]))
    _check("cumsum", ember.cumsum, X, 1)


def test_nn_functions():
    w, b = r(5, 4), r(5)
    _check("linear", F.linear, r(3, 4), w, b)
    _check("linear", F.linear, X, w, b)
    _check("linear", F.linear, X, w)
    img = r(2, 4, 9, 9)
    _check("conv2d", F.conv2d, img, r(6, 2, 3, 3), r(6), stride=2, padding=1, groups=2)
    _check("conv2d", F.conv2d, img, r(6, 4, 3, 3), None, dilation=2)
    _check("conv2d", F.conv2d, img, r(3, 4, 3, 3), padding="same")
    _check("conv1d", F.conv1d, r(2, 4, 10), r(3, 4, 3), r(3), padding=2)
    _check("conv_transpose2d", F.conv_transpose2d, img, r(4, 3, 3, 3), r(3), stride=2,
           padding=1, output_padding=1)
    _check("max_pool2d", F.max_pool2d, img, 3, 2, 1)
    _check("avg_pool2d", F.avg_pool2d, img, 2)
    _check("avg_pool2d", F.avg_pool2d, img, 3, 2, 1, count_include_pad=False)
    _check("adaptive_avg_pool2d", F.adaptive_avg_pool2d, img, 1)
    _check("adaptive_avg_pool2d", F.adaptive_avg_pool2d, img, 3)
    _check("batch_norm", F.batch_norm, img, r(4), r(4).abs() + 0.5, r(4), r(4))
    _check("layer_norm", F.layer_norm, X, (4,), r(4), r(4))
    _check("layer_norm", F.layer_norm, X, (3, 4))
    _check("group_norm", F.group_norm, img, 2, r(4), r(4))
    _check("embedding", F.embedding, ember.tensor([[1, 0, 3], [2, 2, 1]]), r(4, 5))
    _check("pad", F.pad, img, (1, 2, 0, 1))
    _check("pad", F.pad, r(2, 3, 5), (1, 1), mode="reflect")


def test_attention():
    q, k, v = r(2, 3, 5, 8), r(2, 3, 6, 8), r(2, 3, 6, 8)
    _check("scaled_dot_product_attention", F.scaled_dot_product_attention, q, k, v)
    _check("scaled_dot_product_attention", F.scaled_dot_product_attention, q, q, q,
           is_causal=True)
    mask = ember.ones(5, 6, dtype=ember.bool).tril()
    _check("scaled_dot_product_attention", F.scaled_dot_product_attention, q, k, v,
           attn_mask=mask)


def test_multi_head_attention():
    mha = ember.nn.MultiheadAttention(8, 2).eval()
    x = r(5, 3, 8)
    params = [mha.in_proj_weight.detach(), mha.in_proj_bias.detach(),
              mha.out_proj.weight.detach(), mha.out_proj.bias.detach()]

    _check("multi_head_attention_forward", F.multi_head_attention_forward, x, x, x, 8, 2,
           params[0], params[1], None, None, False, 0.0, params[2], params[3], training=False)


@pytest.mark.parametrize("kind,kwargs", [
    ("LSTM", dict(num_layers=2)), ("LSTM", dict(bidirectional=True, batch_first=True)),
    ("GRU", dict(num_layers=2, bidirectional=True)), ("GRU", dict(bias=False)),
    ("RNN", dict(nonlinearity="relu", num_layers=2)), ("RNN", dict(batch_first=True)),
])
def test_recurrent_modules(kind, kwargs):
    from ember.onnx._lower_nn import MODULE_LOWERINGS
    ember.manual_seed(0)
    module = getattr(ember.nn, kind)(5, 7, **kwargs).eval()
    x = r(4, 3, 5)
    batch = 4 if kwargs.get("batch_first") else 3
    h0 = r((2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1), batch, 7)
    hx = (h0, r(*h0.shape)) if kind == "LSTM" else h0
    for with_state in (False, True):
        want = module(x, hx) if with_state else module(x)
        gb = GraphBuilder(20)
        feeds = {}
        xv = _values(gb, x, feeds, None)
        hv = _values(gb, hx, feeds, None) if with_state else None
        got = MODULE_LOWERINGS[kind](gb, _example(want), module, xv, hv)
        for v, w in zip(_flat(got), _flat(want)):
            v.shape, v.dtype = tuple(w.shape), w.dtype
            gb.outputs.append(v)
        model = gb.model()
        onnx.checker.check_model(model, full_check=True)
        sess = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        for w, o in zip(_flat(want), sess.run(None, feeds)):
            np.testing.assert_allclose(o, w.detach().numpy(), rtol=1e-5, atol=1e-5)

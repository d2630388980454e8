"""ONNX forms of the neural-network functions: linear, convolutions, normalisations,
pooling, embedding and attention (same calling convention as _lower_math), and of the
recurrent modules, which lower whole (`MODULE_LOWERINGS`, `fn(g, out, module, params, *args)`
with the module's parameters as Values) onto ONNX's own LSTM/GRU/RNN operators."""
import math

import numpy as np

from .. import dtypes
from ._builder import Value
from ._lower_math import LOWERINGS, cast, lowering
from ._lower_shape import int_vector
from .errors import OnnxExporterError

__all__ = ["MODULE_LOWERINGS"]

MODULE_LOWERINGS = {}


def _tuple(v, n):
    return list(v) * n if isinstance(v, (list, tuple)) and len(v) == 1 else \
        (list(v) if isinstance(v, (list, tuple)) else [v] * n)


@lowering("linear")
def _linear(g, out, x, weight, bias=None):
    if x.rank == 2 and bias is not None:
        return g.op("Gemm", [x, weight, bias], transB=1)
    y = g.op("MatMul", [x, g.op("Transpose", [weight], perm=[1, 0])])
    return y if bias is None else g.op("Add", [y, bias])


@lowering("bilinear")
def _bilinear(g, out, x1, x2, weight, bias=None):
    # y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j]
    left = g.op("Einsum", [x1, weight, x2], equation="...i,oij,...j->...o")
    return left if bias is None else g.op("Add", [left, bias])


def _conv(nd, transposed=False):
    def conv(g, out, x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        if isinstance(padding, str):
            if padding == "valid":
                padding = 0
            else:  # 'same': PyTorch pads the extra element at the end, as SAME_UPPER does
                return g.op("Conv", [x, weight, bias], strides=_tuple(stride, nd),
                            dilations=_tuple(dilation, nd), group=int(groups),
                            auto_pad="SAME_UPPER")
        pads = _tuple(padding, nd)
        return g.op("Conv", [x, weight, bias], strides=_tuple(stride, nd), pads=pads + pads,
                    dilations=_tuple(dilation, nd), group=int(groups))

    def conv_transpose(g, out, x, weight, bias=None, stride=1, padding=0, output_padding=0,
                       groups=1, dilation=1):
        pads = _tuple(padding, nd)
        return g.op("ConvTranspose", [x, weight, bias], strides=_tuple(stride, nd),
                    pads=pads + pads, dilations=_tuple(dilation, nd), group=int(groups),
                    output_padding=_tuple(output_padding, nd))
    return conv_transpose if transposed else conv


for _nd in (1, 2, 3):
    LOWERINGS[f"conv{_nd}d"] = _conv(_nd)
    LOWERINGS[f"conv_transpose{_nd}d"] = _conv(_nd, transposed=True)


@lowering("batch_norm")
def _batch_norm(g, out, x, *args, **kwargs):
    if len(args) == 8 or "cudnn_enabled" in kwargs:  # torch.batch_norm's order
        names = ("weight", "bias", "running_mean", "running_var", "training", "momentum",
                 "eps", "cudnn_enabled")
    else:
        names = ("running_mean", "running_var", "weight", "bias", "training", "momentum", "eps")
    a = {"weight": None, "bias": None, "training": False, "momentum": 0.1, "eps": 1e-5}
    a.update(zip(names, args))
    a.update(kwargs)
    if a["training"]:
        raise OnnxExporterError("batch_norm in training mode cannot be exported: call "
                                "model.eval() first")
    c = x.shape[1]
    if not isinstance(c, int):
        raise OnnxExporterError("batch_norm over a dynamic channel axis cannot be exported")
    np_type = x.dtype.np
    weight = a["weight"] if a["weight"] is not None else g.const(np.ones(c, np_type))
    bias = a["bias"] if a["bias"] is not None else g.const(np.zeros(c, np_type))
    if a["running_mean"] is None:
        raise OnnxExporterError("batch_norm without running statistics cannot be exported")
    y = g.op("BatchNormalization", [x, weight, bias, a["running_mean"], a["running_var"]],
             epsilon=float(a["eps"]))
    return y


@lowering("layer_norm")
def _layer_norm(g, out, x, normalized_shape, weight=None, bias=None, eps=1e-5, *_):
    k = len(normalized_shape) if isinstance(normalized_shape, (list, tuple)) else 1
    shape = list(normalized_shape) if isinstance(normalized_shape, (list, tuple)) \
        else [normalized_shape]
    if weight is None:
        weight = g.const(np.ones(shape, x.dtype.np))
    return g.op("LayerNormalization", [x, weight, bias], axis=x.rank - k, epsilon=float(eps))


@lowering("group_norm")
def _group_norm(g, out, x, num_groups, weight=None, bias=None, eps=1e-5, *_):
    """Normalise over each group (a reshape to (N, G, -1) and InstanceNormalization-free
    arithmetic, valid at every opset), then the per-channel affine."""
    n_shape = g.op("Shape", [x])
    grouped = g.op("Reshape", [x, g.ints([0, num_groups, -1])])
    mean = g.op("ReduceMean", [grouped, g.ints([2])], keepdims=1) if g.opset >= 18 else \
        g.op("ReduceMean", [grouped], axes=[2], keepdims=1)
    diff = g.op("Sub", [grouped, mean])
    sq = g.op("Mul", [diff, diff])
    var = g.op("ReduceMean", [sq, g.ints([2])], keepdims=1) if g.opset >= 18 else \
        g.op("ReduceMean", [sq], axes=[2], keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.scalar(eps, x)])])
    y = g.op("Reshape", [g.op("Div", [diff, std]), n_shape])
    affine = [1, -1] + [1] * (x.rank - 2)
    if weight is not None:
        y = g.op("Mul", [y, g.op("Reshape", [weight, g.ints(affine)])])
    if bias is not None:
        y = g.op("Add", [y, g.op("Reshape", [bias, g.ints(affine)])])
    return y


def _pool_attrs(nd, kernel_size, stride, padding, dilation=1, ceil_mode=False):
    k = _tuple(kernel_size, nd)
    s = _tuple(stride if stride not in (None, []) else kernel_size, nd)
    p = _tuple(padding, nd)
    return dict(kernel_shape=k, strides=s, pads=p + p, ceil_mode=int(bool(ceil_mode)),
                dilations=_tuple(dilation, nd))


def _max_pool(nd):
    def lower(g, out, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
              return_indices=False):
        if return_indices:
            raise OnnxExporterError("max pooling with return_indices=True is not supported "
                                    "by the ONNX export")
        return g.op("MaxPool", [x], **_pool_attrs(nd, kernel_size, stride, padding, dilation,
                                                  ceil_mode))
    return lower


def _avg_pool(nd):
    def lower(g, out, x, kernel_size, stride=None, padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):
        if divisor_override is not None:
            raise OnnxExporterError("avg_pool with divisor_override is not supported by the "
                                    "ONNX export")
        attrs = _pool_attrs(nd, kernel_size, stride, padding, 1, ceil_mode)
        del attrs["dilations"]
        return g.op("AveragePool", [x], count_include_pad=int(bool(count_include_pad)), **attrs)
    return lower


for _nd in (1, 2, 3):
    LOWERINGS[f"max_pool{_nd}d"] = _max_pool(_nd)
    LOWERINGS[f"avg_pool{_nd}d"] = _avg_pool(_nd)


def _adaptive(nd, kind):
    global_op = "GlobalAveragePool" if kind == "avg" else "GlobalMaxPool"

    def lower(g, out, x, output_size, return_indices=False):
        sizes = _tuple(output_size, nd)
        spatial = list(x.shape[-nd:])
        sizes = [s if s is not None else spatial[i] for i, s in enumerate(sizes)]
        if all(s == 1 for s in sizes):
            return g.op(global_op, [x])
        if not all(isinstance(s, int) for s in spatial) or \
                any(n % s for n, s in zip(spatial, sizes)):
            raise OnnxExporterError(f"adaptive_{kind}_pool{nd}d from {spatial} to {sizes}: "
                                    "only outputs that divide the input (or size 1) map to "
                                    "ONNX pooling")
        k = [n // s for n, s in zip(spatial, sizes)]
        if kind == "avg":
            return g.op("AveragePool", [x], kernel_shape=k, strides=k)
        return g.op("MaxPool", [x], kernel_shape=k, strides=k)
    return lower


for _nd in (1, 2, 3):
    LOWERINGS[f"adaptive_avg_pool{_nd}d"] = _adaptive(_nd, "avg")
    LOWERINGS[f"adaptive_max_pool{_nd}d"] = _adaptive(_nd, "max")


@lowering("embedding")
def _embedding(g, out, indices, weight, padding_idx=None, max_norm=None, *_, **__):
    if indices.dtype is not None and indices.dtype.is_floating_point:  # torch.embedding(w, i)
        indices, weight = weight, indices
    if max_norm is not None:
        raise OnnxExporterError("embedding with max_norm renormalises the weight in place; "
                                "it is not supported by the ONNX export")
    return g.op("Gather", [weight, cast(g, indices, dtypes.int64)], axis=0)


@lowering("pad")
def _pad(g, out, x, pad, mode="constant", value=None):
    n = len(pad) // 2
    begins = [0] * (x.rank - n) + [pad[2 * (n - 1 - i)] for i in range(n)]
    ends = [0] * (x.rank - n) + [pad[2 * (n - 1 - i) + 1] for i in range(n)]
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                 "circular": "wrap"}[mode]
    inputs = [x, int_vector(g, begins + ends)]
    if mode == "constant":
        inputs.append(g.scalar(0.0 if value is None else value, x))
    return g.op("Pad", inputs, mode=onnx_mode)


# ---- attention -------------------------------------------------------------------------
@lowering("scaled_dot_product_attention")
def _sdpa(g, out, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    if dropout_p:
        raise OnnxExporterError("scaled_dot_product_attention with dropout_p > 0 is training "
                                "behaviour and cannot be exported")
    e = q.shape[-1]
    if not isinstance(e, int):
        raise OnnxExporterError("attention with a dynamic head size cannot be exported")
    s = 1 / math.sqrt(e) if scale is None else scale
    perm = list(range(k.rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    scores = g.op("MatMul", [g.op("Mul", [q, g.scalar(s, q)]), g.op("Transpose", [k], perm=perm)])
    if is_causal:
        shape_q, shape_k = g.op("Shape", [q]), g.op("Shape", [k])
        lq = g.op("Slice", [shape_q, g.ints([-2]), g.ints([-1])])
        lk = g.op("Slice", [shape_k, g.ints([-2]), g.ints([-1])])
        ones = g.op("Expand", [g.const(np.array(True)), g.op("Concat", [lq, lk], axis=0)])
        keep = g.op("Trilu", [ones], upper=0)
        scores = g.op("Where", [keep, scores, g.scalar(-np.inf, q)])
    if attn_mask is not None:
        if attn_mask.dtype == dtypes.bool:
            scores = g.op("Where", [attn_mask, scores, g.scalar(-np.inf, q)])
        else:
            scores = g.op("Add", [scores, cast(g, attn_mask, q.dtype)])
    weights = g.op("Softmax", [scores], axis=-1)
    # a row that masks everything: PyTorch gives zeros there, not the NaN softmax makes
    weights = g.op("Where", [g.op("IsNaN", [weights]), g.scalar(0.0, q), weights])
    return g.op("MatMul", [weights, v])


@lowering("multi_head_attention_forward")
def _mha(g, out, query, key, value, embed_dim, num_heads, in_proj_weight, in_proj_bias,
         bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
         training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
         use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
         v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
         is_causal=False):
    """Sequence-first (L, N, E) inputs, as MultiheadAttention calls it."""
    if bias_k is not None or add_zero_attn or static_k is not None or \
            (training and dropout_p):
        raise OnnxExporterError("MultiheadAttention with add_bias_kv, add_zero_attn, static "
                                "keys or training dropout is not supported by the ONNX export")
    if query.rank != 3:
        raise OnnxExporterError("MultiheadAttention export needs batched (L, N, E) inputs")
    e, h = embed_dim, num_heads
    d = e // h
    if use_separate_proj_weight:
        ws = [q_proj_weight, k_proj_weight, v_proj_weight]
    else:
        ws = g.op("Split", [in_proj_weight, g.ints([e, e, e])], outputs=3, axis=0)
    bs = [None] * 3 if in_proj_bias is None else \
        g.op("Split", [in_proj_bias, g.ints([e, e, e])], outputs=3, axis=0)

    def heads(x, w, b):  # (L, N, E) -> (N, H, L, D)
        y = _linear(g, None, x, w, b)
        y = g.op("Reshape", [y, g.ints([0, 0, h, d])])
        return g.op("Transpose", [y], perm=[1, 2, 0, 3])

    q, k, v = (heads(x, w, b) for x, w, b in zip((query, key, value), ws, bs))
    scores = g.op("MatMul", [g.op("Mul", [q, g.scalar(1 / math.sqrt(d), query)]),
                             g.op("Transpose", [k], perm=[0, 1, 3, 2])])
    neg = g.scalar(-np.inf, query)
    if attn_mask is not None:
        mask = attn_mask if attn_mask.rank == 2 else \
            g.op("Reshape", [attn_mask, g.ints([-1, h, 0, 0])])
        scores = g.op("Where", [mask, neg, scores]) if attn_mask.dtype == dtypes.bool else \
            g.op("Add", [scores, cast(g, mask, query.dtype)])
    elif is_causal:
        raise OnnxExporterError("MultiheadAttention(is_causal=True) needs attn_mask, as in "
                                "PyTorch")
    if key_padding_mask is not None:  # (N, S): True masks a key
        kpm = g.op("Unsqueeze", [key_padding_mask, g.ints([1, 2])])
        scores = g.op("Where", [kpm, neg, scores]) if key_padding_mask.dtype == dtypes.bool \
            else g.op("Add", [scores, cast(g, kpm, query.dtype)])
    weights = g.op("Softmax", [scores], axis=-1)
    ctx = g.op("MatMul", [weights, v])  # (N, H, L, D)
    ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[2, 0, 1, 3]), g.ints([0, 0, e])])
    ctx.shape = query.shape
    result = _linear(g, None, ctx, out_proj_weight, out_proj_bias)
    if not need_weights:
        return result, None
    avg = g.op("ReduceMean", [weights, g.ints([1])], keepdims=0) if g.opset >= 18 else \
        g.op("ReduceMean", [weights], axes=[1], keepdims=0)
    return result, (avg if average_attn_weights else weights)


# ---- recurrent modules (lowered whole) ----------------------------------------------------
_GATES = {"LSTM": ([0, 3, 1, 2], 4), "GRU": ([1, 0, 2], 3),  # PyTorch's -> ONNX's gate order
          "RNN_TANH": ([0], 1), "RNN_RELU": ([0], 1)}


def _reorder(w, order, hidden):
    return np.concatenate([w[i * hidden:(i + 1) * hidden] for i in order], axis=0)


def _recurrent(g, out, module, x, hx=None):
    """nn.LSTM / nn.GRU / nn.RNN on (L, N, E) or batch_first input, every layer and
    direction, onto ONNX's LSTM/GRU/RNN (one node per layer)."""
    mode = module.mode
    if getattr(module, "proj_size", 0):
        raise OnnxExporterError("LSTM with proj_size is not supported by the ONNX export")
    if x.rank != 3:
        raise OnnxExporterError("recurrent modules export with batched 3-d input")
    order, _ = _GATES[mode]
    hsz, dirs = module.hidden_size, 2 if module.bidirectional else 1
    op = {"LSTM": "LSTM", "GRU": "GRU"}.get(mode, "RNN")
    seq = g.op("Transpose", [x], perm=[1, 0, 2]) if module.batch_first else x
    h0 = c0 = None
    if hx is not None:
        h0, c0 = hx if mode == "LSTM" else (hx, None)
    h_out, c_out = [], []
    np_type = x.dtype.np
    for layer in range(module.num_layers):
        ws, rs, bs = [], [], []
        for direction in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if direction else "")
            w_ih = getattr(module, "weight_ih" + sfx).detach().cpu().numpy()
            w_hh = getattr(module, "weight_hh" + sfx).detach().cpu().numpy()
            ws.append(_reorder(w_ih, order, hsz))
            rs.append(_reorder(w_hh, order, hsz))
            if module.bias:
                b_ih = getattr(module, "bias_ih" + sfx).detach().cpu().numpy()
                b_hh = getattr(module, "bias_hh" + sfx).detach().cpu().numpy()
            else:
                b_ih = b_hh = np.zeros(w_ih.shape[0], np_type)
            bs.append(np.concatenate([_reorder(b_ih, order, hsz), _reorder(b_hh, order, hsz)]))
        w = g.const(np.stack(ws).astype(np_type), name_hint=f"{op}_W")
        r = g.const(np.stack(rs).astype(np_type), name_hint=f"{op}_R")
        b = g.const(np.stack(bs).astype(np_type), name_hint=f"{op}_B")
        init_h = init_c = None
        if h0 is not None:
            init_h = g.op("Slice", [h0, g.ints([layer * dirs]), g.ints([(layer + 1) * dirs]),
                                    g.ints([0])])
        if c0 is not None:
            init_c = g.op("Slice", [c0, g.ints([layer * dirs]), g.ints([(layer + 1) * dirs]),
                                    g.ints([0])])
        attrs = dict(hidden_size=hsz, direction="bidirectional" if dirs == 2 else "forward")
        if op == "GRU":
            attrs["linear_before_reset"] = 1  # PyTorch's GRU applies r after the matmul
        if op == "RNN":
            attrs["activations"] = ["Tanh" if mode == "RNN_TANH" else "Relu"] * dirs
        inputs = [seq, w, r, b, None, init_h] + ([init_c] if op == "LSTM" else [])
        outs = g.op(op, inputs, outputs=3 if op == "LSTM" else 2, **attrs)
        y, y_h = outs[0], outs[1]
        if op == "LSTM":
            c_out.append(outs[2])
        h_out.append(y_h)
        # Y is (L, dirs, N, H): the next layer reads (L, N, dirs * H)
        seq = g.op("Reshape", [g.op("Transpose", [y], perm=[0, 2, 1, 3]), g.ints([0, 0, -1])])
        if module.dropout and module.training:
            raise OnnxExporterError("recurrent dropout in training mode cannot be exported")
    output = g.op("Transpose", [seq], perm=[1, 0, 2]) if module.batch_first else seq
    h_n = h_out[0] if len(h_out) == 1 else g.op("Concat", h_out, axis=0)
    if mode == "LSTM":
        c_n = c_out[0] if len(c_out) == 1 else g.op("Concat", c_out, axis=0)
        return output, (h_n, c_n)
    return output, h_n


MODULE_LOWERINGS.update({"LSTM": _recurrent, "GRU": _recurrent, "RNN": _recurrent})
__all__ += ["Value"]

"""The core of scaled_dot_product_attention, softmax(q k^T * scale + mask) v, on arrays: the
additive mask added in the scores' own buffer (the causal one cached), one in-place softmax,
and, where nothing needs the composed graph (no dropout, no learnable mask, equal batch
dims), the whole product as one node whose backward is the closed form
    dV = P^T dO,  dS = P * (dO V^T - rowsum(dO V^T * P)),  dQ = s dS K,  dK = s dS^T Q
(arrays for a first-order backward; the same formulas in ember ops under create_graph).

The fused node keeps the scores transposed, S^T = K Q^T (keys along the rows): NumPy reduces
each query's scores down the columns with long elementwise loops, where a reduction along
short contiguous rows pays per row (the causal (16, 4, 64, 64) scores' maximum: 0.22 against
0.63 ms); BLAS takes either operand order at the same speed. The node's forward and backward
together at GPT's shapes: 0.82-0.84x the time of the row layout
(`/work/notes/s18/attn_T.py`).
"""
import numpy as np

from .. import dtypes as _dt
from .._dtype_casts import cast_if_needed
from .._parallel import by_first_dim, matmul as _products, parts
from .._state import grad as _grad_state
from .._tensor import make_tensor, xp_of
from ._device_kernels import Kernel, device_exp_sum, device_sum, usable
from ._graph import Node, record
from .softmax_family import SoftmaxBackward0, sums_along

_CAUSAL_BIASES = {}
# Attention's batch is split across the intra-op threads from scores of this size: each
# thread's part is then ~0.3 ms or more (GPT's (16, 4, 64, 64) scores, 1 MB: the node's
# forward at 2 threads 0.75x its one-thread time, the GPT step 0.95x;
# `/work/notes/s32/gomp_proto.py`, `ab_step.py`).
THREADED_MIN_BYTES = 512 << 10


def causal_bias(xp, L, S, dtype, device):
    """The additive causal mask (0 on and below the diagonal, -inf above), made once per
    shape, dtype and device: a model calls attention with the same one every layer."""
    key = (L, S, dtype, device)
    bias = _CAUSAL_BIASES.get(key)
    if bias is None:
        if len(_CAUSAL_BIASES) > 32:
            _CAUSAL_BIASES.clear()
        bias = xp.where(xp.tri(L, S, dtype=bool), 0, -np.inf).astype(dtype)
        _CAUSAL_BIASES[key] = bias
    return bias


def _low(dtype):
    return dtype in (np.dtype(np.float16), _dt.bfloat16.np)


def masked_softmax_(xp, z, masked, axis=-1):
    """softmax over `axis` (-1 or -2) in z's buffer (z, the scores with any additive mask
    already added, is the caller's own). With a mask, rows it hides entirely give zeros
    (PyTorch's attention does), not NaN."""
    if z.size == 0:
        return z
    dim = z.ndim + axis
    if usable(xp, z):  # a device: the max, one sum kernel, one normalising kernel
        row_max = z.max(axis=dim, keepdims=True)
        hidden, empty = (-np.inf, 0) if masked else (np.nan, np.nan)  # (NaN: no such row)
        total = device_exp_sum(xp, (dim,), z, row_max, hidden, 0)
        t = z.dtype.type
        _EXP_NORMALIZE(xp, row_max, total, t(hidden), t(empty), t(0), t(1), z)
        return z
    row_max = z.max(axis=dim, keepdims=True)
    if masked:  # a row of -inf: max 0 makes its exps 0, its sum 1
        row_max = xp.where(xp.isneginf(row_max), 0, row_max)
    xp.subtract(z, row_max, out=z)
    xp.exp(z, out=z)
    total = sums_along(xp, z, dim)
    if masked:
        total = xp.where(total == 0, 1, total)
    xp.divide(z, total, out=z)
    return z


# On a device (`_device_kernels`): softmax's last passes as one kernel, and the scores' scale
# and mask, and the backward's closed form, each as one, with the general path's operations in
# its order (the row sums are `device_exp_sum` and `device_sum`).
_EXP_NORMALIZE = Kernel(
    "ember_softmax_normalize", "T m, T t, T hidden, T empty, T zero, T one", "T z",
    "z = exp(z - (m == hidden ? zero : m)) / (t == empty ? one : t)")
_SCALE_BIAS = Kernel("ember_attention_scores", "T s, T b", "T z", "z = z * s + b")
_SCALE = Kernel("ember_attention_scaled", "T s", "T z", "z = z * s")
_SCORES_GRAD = Kernel("ember_attention_scores_grad", "T r, T p, T s", "T d",
                      "d = (d - r) * p * s")


def biased_softmax(scores, bias):
    """softmax(scores + bias) for a constant additive mask array `bias` (or None) as one node
    with softmax's closed-form backward: the mask adds a constant, so the Jacobian in the
    scores is the softmax's (zero for hidden rows)."""
    xp = xp_of(scores)
    arr = scores._array
    low = _low(arr.dtype)
    a = arr.astype(np.float32) if low else arr
    z = (a if low else a.copy()) if bias is None else xp.add(a, bias)
    z = masked_softmax_(xp, z, bias is not None)
    res = make_tensor(z.astype(arr.dtype) if low else z, scores._device)
    node = record(SoftmaxBackward0, (scores,), res)
    if node is not None:
        node.dim = scores.ndim - 1
        node.save_for_backward(res)
    return res


def _t(a):
    return a.swapaxes(-1, -2)


class ScaledDotProductFlashAttentionForCpuBackward0(Node):
    """Inputs (query, key, value); saved q, k, v and the attention weights transposed, P^T
    (the forward's layout)."""

    def backward(self, grad):
        q, k, v, probs = self.saved_tensors
        s = self.scale
        need_q, need_k, need_v = (edge[0] is not None for edge in self._next)
        if _grad_state.enabled:  # create_graph: P as a function of q and k, in ember ops
            probs = biased_softmax(q.matmul(k.transpose(-2, -1)) * s, self.bias)
            d_probs = grad.matmul(v.transpose(-2, -1))
            d_scores = (d_probs - (d_probs * probs).sum(-1, keepdim=True)) * probs * s
            return (d_scores.matmul(k) if need_q else None,
                    d_scores.transpose(-2, -1).matmul(q) if need_k else None,
                    probs.transpose(-2, -1).matmul(grad) if need_v else None)
        xp = xp_of(q)
        dtype = q._array.dtype
        qa, ka, va, pt, g = (_opmath(t._array) for t in (q, k, v, probs, grad))
        # each gradient laid out as its input, as PyTorch's kernel lays them out: heads cut
        # from a (B, L, 3 * E) projection take theirs back through the transpose and view
        # without a copy each
        grads = [xp.empty_like(a) if need else None
                 for a, need in ((qa, need_q), (ka, need_k), (va, need_v))]
        dq, dk, dv = grads
        by_first_dim(lambda c: _gradients(xp, s, *parts(c, qa, ka, va, pt, g, *grads)),
                     pt, THREADED_MIN_BYTES)
        return tuple(None if a is None else make_tensor(cast_if_needed(a, dtype), q._device)
                     for a in (dq, dk, dv))


def _gradients(xp, s, qa, ka, va, pt, g, dq, dk, dv):
    """The closed form's dq, dk, dv (each written where it is not None) of the batch qa ...
    (the whole, or a thread's part)."""
    if dv is not None:
        _products(xp, pt, g, out=dv)  # P^T dO, P^T as kept
    d_scores = _products(xp, va, _t(g))  # (dO V^T)^T, laid out as P^T
    rows = device_sum(xp, (pt.ndim - 2,), d_scores, pt)
    if rows is None:
        rows = xp.expand_dims(xp.einsum("...sl,...sl->...l", d_scores, pt), -2)
    if usable(xp, d_scores, rows, pt):
        _SCORES_GRAD(xp, rows, pt, d_scores.dtype.type(s), d_scores)
    else:
        xp.subtract(d_scores, rows, out=d_scores)
        xp.multiply(d_scores, pt, out=d_scores)
        xp.multiply(d_scores, s, out=d_scores)
    if dq is not None:
        _products(xp, _t(d_scores), ka, out=dq)
    if dk is not None:
        _products(xp, d_scores, qa, out=dk)


def _opmath(a):
    return a.astype(np.float32) if _low(a.dtype) else a


def _laid_out_as(xp, q, probs_t, v):
    """An empty output for probs @ v in the query's memory layout, as PyTorch's attention
    lays its output out: a query cut from a (B, L, H, D) projection gives an output whose
    transpose back to (B, L, H * D) needs no copy (BLAS writes each (L, D) matrix straight
    into the strided buffer)."""
    shape = probs_t.shape[:-2] + probs_t.shape[-1:] + v.shape[-1:]  # (..., L, Dv)
    dtype = xp.result_type(probs_t, v)
    if q.flags.c_contiguous or q.ndim < 3 or q.shape != shape:
        return xp.empty(shape, dtype)
    return xp.empty_like(q, dtype=dtype)  # order "K": q's layout


def _attend(xp, scale, qa, ka, va, bias_t, probs_t, out):
    """The forward of the batch qa ... (the whole, or a thread's part): the attention weights
    transposed into probs_t, and the output into out."""
    scores = _products(xp, ka, _t(qa), out=probs_t)  # transposed: (..., S, L)
    if usable(xp, scores, *(() if bias_t is None else (bias_t,))):  # one kernel on a device
        if bias_t is None:
            _SCALE(xp, scores.dtype.type(scale), scores)
        else:
            _SCALE_BIAS(xp, scores.dtype.type(scale), bias_t, scores)
    else:
        xp.multiply(scores, scale, out=scores)
        if bias_t is not None:  # the caller checked that it broadcasts to the scores' shape
            xp.add(scores, bias_t, out=scores)
    masked_softmax_(xp, scores, bias_t is not None, axis=-2)
    _products(xp, _t(scores), va, out=out)


def _batch_part(bias_t, c):
    """A mask's part for the batch slice c of 4-d scores (its batch dim may be broadcast; c
    None: the whole)."""
    if c is None or bias_t is None or bias_t.ndim < 4 or bias_t.shape[0] == 1:
        return bias_t
    return bias_t[c]


def fused_attention(query, key, value, bias, scale):
    """softmax(q k^T * scale + bias) v as one node; `bias` a constant additive mask array
    or None. The caller checked that q, k and v share their batch dims."""
    xp = xp_of(query)
    dtype = query._array.dtype
    qa, ka, va = (_opmath(t._array) for t in (query, key, value))
    probs_t = xp.empty(qa.shape[:-2] + (ka.shape[-2], qa.shape[-2]), qa.dtype)  # (..., S, L)
    out = _laid_out_as(xp, query._array, probs_t, va)
    bias_t = None if bias is None else _t(bias)  # (a mask has 2 dims or more)
    by_first_dim(lambda c: _attend(xp, scale, *parts(c, qa, ka, va), _batch_part(bias_t, c),
                                   *parts(c, probs_t, out)), probs_t, THREADED_MIN_BYTES)
    out = make_tensor(cast_if_needed(out, dtype), query._device)
    node = record(ScaledDotProductFlashAttentionForCpuBackward0, (query, key, value), out)
    if node is not None:
        node.scale, node.bias = scale, bias
        node.save_for_backward(query, key, value, make_tensor(probs_t, query._device))
    return out
